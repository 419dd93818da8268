// Proves `tenure snapshot save` asks the endpoints in turn until one sends the file, keeps FILE only when the whole file arrived with a matching checksum (never a partial or corrupt one), never replaces an existing FILE without --force, and that `tenure snapshot inspect` prints a good file's header and names what is wrong with a bad one.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import {
  CoordStateMachine,
  encodeSnapshotFileHeader,
  rebaseSnapshot,
  type SnapshotFileHeader,
} from '@tenure/coord-state';
import { main, type CliIo } from '../src/cli/cli.js';

/** An empty state taken at index 42 (cluster time 0), as a node would send it. */
const payload = Buffer.from(rebaseSnapshot(new CoordStateMachine().snapshot(), 42));
const header: SnapshotFileHeader = {
  clusterId: 'prod',
  nodeId: 'n2',
  index: 42,
  term: 3,
  clusterTimeMs: 0,
  stateFormat: 'tenure-coord-state/2',
  payloadBytes: payload.length,
  sha256: createHash('sha256').update(payload).digest('hex'),
  createdAt: '2026-12-01T00:00:00.000Z',
};
const good = Buffer.concat([encodeSnapshotFileHeader(header), payload]);
/** The same file with its header's cluster time edited: intact checksum, header lies. */
const edited = Buffer.concat([
  encodeSnapshotFileHeader({ ...header, clusterTimeMs: 9_000_000 }),
  payload,
]);

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
    env: {},
    interrupt: new AbortController().signal,
  };
  const code = await main(args, io);
  return { code, out: out.join(''), err: err.join('') };
}

/** An HTTP server answering every request with `status` and `body` (bytes, or JSON). */
async function serve(t: Test, status: number, body: Buffer | object): Promise<string> {
  const server: Server = createServer((_req, res) => {
    const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
    res.writeHead(status, {
      'content-type': Buffer.isBuffer(body) ? 'application/octet-stream' : 'application/json',
    });
    res.end(bytes);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'tenure-snapshot-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('save skips a node without a leader and keeps the checked file', async (t) => {
  const dir = tempDir(t);
  const noLeader = await serve(t, 503, { error: { code: 'no_leader', message: 'none' } });
  const leader = await serve(t, 200, good);
  const file = join(dir, 'b.tenure-snapshot');
  const r = await run(['--endpoints', `${noLeader},${leader}`, 'snapshot', 'save', file]);
  t.equal(r.code, 0, r.err);
  t.match(r.out, /^saved .*b\.tenure-snapshot: cluster prod, index 42, term 3, \d+ bytes of state/);
  t.ok(existsSync(file));
  t.notOk(existsSync(`${file}.partial`));
  const j = await run(['--json', 'snapshot', 'inspect', file]);
  t.equal(j.code, 0);
  t.match(JSON.parse(j.out) as object, {
    file,
    clusterId: 'prod',
    index: 42,
    sha256: /^[0-9a-f]{64}$/,
  });
});

t.test('save refuses to replace an existing file unless --force', async (t) => {
  const dir = tempDir(t);
  const url = await serve(t, 200, good);
  const file = join(dir, 'old.tenure-snapshot');
  writeFileSync(file, 'an older backup');
  const refused = await run(['--endpoints', url, 'snapshot', 'save', file]);
  t.equal(refused.code, 2, 'usage error');
  t.match(refused.err, /old\.tenure-snapshot already exists; pass --force to replace it/);
  t.equal(readFileSync(file, 'utf8'), 'an older backup', 'the old file is untouched');
  t.notOk(existsSync(`${file}.partial`));
  const forced = await run(['--endpoints', url, 'snapshot', 'save', file, '--force']);
  t.equal(forced.code, 0, forced.err);
  t.same(readFileSync(file), good, 'replaced with the checked backup');
});

t.test('save refuses a corrupt or cut file and leaves nothing behind', async (t) => {
  const dir = tempDir(t);
  const flipped = Buffer.from(good);
  flipped[flipped.length - 1] = (flipped[flipped.length - 1] ?? 0) ^ 1;
  for (const [name, body, expected] of [
    ['flipped', flipped, /checksum mismatch/],
    ['cut', good.subarray(0, good.length - 3), /truncated/],
  ] as const) {
    const url = await serve(t, 200, body);
    const file = join(dir, `${name}.tenure-snapshot`);
    const r = await run(['--endpoints', url, 'snapshot', 'save', file]);
    t.equal(r.code, 5, `${name}: exit code 5`);
    t.match(r.err, expected);
    t.notOk(existsSync(file), `${name}: no file`);
    t.notOk(existsSync(`${file}.partial`), `${name}: no partial file`);
  }
});

t.test('save reports the server error, or that no node answered', async (t) => {
  const dir = tempDir(t);
  const bad = await serve(t, 400, { error: { code: 'invalid_argument', message: 'no query' } });
  const r = await run(['--endpoints', bad, 'snapshot', 'save', join(dir, 'x')]);
  t.equal(r.code, 2);
  t.match(r.err, /invalid_argument: no query/);
  // A port that was just free: nothing listens there any more.
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const down = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
  probe.close();
  await once(probe, 'close');
  const gone = await run(['--endpoints', down, 'snapshot', 'save', join(dir, 'y')]);
  t.equal(gone.code, 3, 'unreachable: exit code 3');
  t.match(gone.err, /did not send a snapshot/);
});

t.test('inspect names what is wrong with a file', async (t) => {
  const dir = tempDir(t);
  const cases: [string, Buffer, RegExp][] = [
    ['good', good, /^ok .*cluster prod, index 42.*; checked: version, .*match the payload/],
    ['edited', edited, /header \(index 42, cluster time 9000000\) does not match its payload/],
    ['other', Buffer.from('hello\n'), /not a Tenure snapshot file/],
    ['cut', good.subarray(0, 30), /truncated/],
  ];
  for (const [name, bytes, expected] of cases) {
    const file = join(dir, name);
    writeFileSync(file, bytes);
    const r = await run(['snapshot', 'inspect', file]);
    t.equal(r.code, name === 'good' ? 0 : 5, name);
    t.match(name === 'good' ? r.out : r.err, expected, name);
  }
});

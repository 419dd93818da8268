// Proves GET /v1/cluster/snapshot answers a checked backup file of the leader's state at its applied index, and that restoreDataDir seeds an empty directory whose Raft snapshot starts past the backup by the restore gap (or the token floor) — and refuses, leaving no directory, a damaged file, a header that disagrees with its state, the old cluster id and a directory with data.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  CoordStateMachine,
  encodeSnapshotFileHeader,
  readSnapshotFile,
  RESTORE_INDEX_GAP,
} from '@tenure/coord-state';
import { LevelRaftStorage } from '@tenure/raft';
import { launchPlan, nodeArgs } from '../src/cluster/launch-plan.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { READ_INDEX_HEADER } from '../src/plugins/snapshot.js';
import { RestoreError, restoreDataDir, type RestoreTarget } from '../src/restore.js';
import { harness, PEERS, send } from './fixtures/harness.js';

/** A backup file of a harness node holding lease L (granted to A). */
async function backupBytes(): Promise<{ file: Buffer; token: number }> {
  const h = await harness();
  try {
    const got = await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 60_000 });
    const res = await h.app.inject({ method: 'GET', url: '/v1/cluster/snapshot' });
    if (res.statusCode !== 200) throw new Error(`snapshot: ${res.statusCode} ${res.body}`);
    return { file: res.rawPayload, token: (got.json() as { fencingToken: number }).fencingToken };
  } finally {
    await h.close();
  }
}

t.test('GET /v1/cluster/snapshot: a checked file of the state at the applied index', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 60_000 });
  // The backup spans event-loop turns: hold the state still (the time advancer proposes too) so
  // the file can be compared with the replica afterwards.
  const release = h.raft.holdApplies();
  const res = await h.app.inject({ method: 'GET', url: '/v1/cluster/snapshot' });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'application/octet-stream');
  t.equal(Number(res.headers['content-length']), res.rawPayload.length);
  t.match(String(res.headers['content-disposition']), /attachment; filename="tenure-local-\d+/);
  const { header, payload } = readSnapshotFile(res.rawPayload);
  t.equal(header.index, h.raft.status().appliedIndex);
  t.equal(header.clusterId, 'tenure-local');
  t.equal(header.nodeId, 'n1');
  t.same(Buffer.from(payload), Buffer.from(h.coord.snapshot()), 'the replica state, byte for byte');
  t.equal(header.sha256, createHash('sha256').update(payload).digest('hex'));
  release();

  const asked = await h.app.inject({
    method: 'GET',
    url: '/v1/cluster/snapshot',
    headers: { [READ_INDEX_HEADER]: '1', 'tenure-forwarded': 'n2' },
  });
  t.equal(asked.statusCode, 200, 'a follower asking the leader gets only a read index');
  t.same(asked.json(), { readIndex: h.raft.status().commitIndex });

  h.raft.setRole('follower', null);
  const none = await h.app.inject({ method: 'GET', url: '/v1/cluster/snapshot' });
  t.equal(none.statusCode, 503, 'a follower that knows no leader has no linearizable point');
  t.equal((none.json() as { error: { code: string } }).error.code, 'no_leader');
  const notLeader = await h.app.inject({
    method: 'GET',
    url: '/v1/cluster/snapshot',
    headers: { [READ_INDEX_HEADER]: '1', 'tenure-forwarded': 'n2' },
  });
  t.equal(notLeader.statusCode, 503, 'only the leader gives read indexes');
});

t.test('--restore and --token-floor settings', async (t) => {
  const base = ['--id', 'n1', '--peers', PEERS];
  const c = loadConfig([...base, '--restore', 'b.snap', '--token-floor', '5'], {}, '/srv');
  t.equal(c.restoreFile, '/srv/b.snap');
  t.equal(c.tokenFloor, 5);
  const none = loadConfig(base, {});
  t.equal(none.restoreFile, null);
  t.equal(none.tokenFloor, 0);
  t.throws(() => loadConfig([...base, '--token-floor', '5'], {}), ConfigError, 'floor alone');
  t.throws(() => loadConfig([...base, '--restore', 'x', '--token-floor', '-1'], {}), ConfigError);
});

t.test('the launcher passes --restore to every node it starts', async (t) => {
  const p = launchPlan(['--restore', 'b.tenure-snapshot', '--data-dir', '/tmp/x'], {});
  for (const n of p.selected)
    t.match(nodeArgs(p, n, 'local-1').slice(-2), ['--restore', /\/b\.tenure-snapshot$/], n.id);
  const plain = launchPlan([], {});
  t.notOk(nodeArgs(plain, plain.nodes[0]!, 'local-1').includes('--restore'));
});

t.test('restoreDataDir seeds a new cluster past the old tokens', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tenure-restore-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { file, token } = await backupBytes();
  const path = join(dir, 'b.tenure-snapshot');
  writeFileSync(path, file);
  const backupIndex = readSnapshotFile(file).header.index;
  const target = (name: string, clusterId = 'new'): RestoreTarget => ({
    nodeId: 'n1',
    clusterId,
    dataDir: join(dir, name),
    limits: loadConfig(['--id', 'n1', '--peers', PEERS], {}).limits,
  });

  const done = await restoreDataDir(target('a'), path, 0);
  t.equal(done.restoredIndex, backupIndex + RESTORE_INDEX_GAP);
  const storage = await LevelRaftStorage.open({
    dataDir: join(dir, 'a'),
    clusterId: 'new',
    nodeId: 'n1',
  });
  const initial = await storage.recover();
  await storage.close();
  t.equal(initial.snapshot?.index, done.restoredIndex);
  t.equal(initial.hardState.commitIndex, done.restoredIndex);
  const sm = new CoordStateMachine();
  sm.restore(initial.snapshotData!);
  t.equal(sm.getLease('L', 0)?.fencingToken, token, 'the grant keeps its token');
  t.notOk(existsSync(join(dir, 'a.restoring')));

  const floor = await restoreDataDir(target('b'), path, 7_000_000_000_000);
  t.equal(floor.restoredIndex, 7_000_000_000, 'the token floor raises the start further');

  mkdirSync(join(dir, 'empty'));
  await restoreDataDir(target('empty'), path, 0);
  t.pass('an existing empty directory is accepted');
});

t.test('restoreDataDir refuses what it cannot trust, writing nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tenure-restore-bad-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { file } = await backupBytes();
  const { header, payload } = readSnapshotFile(file);
  const limits = loadConfig(['--id', 'n1', '--peers', PEERS], {}).limits;
  const flipped = Buffer.from(file);
  flipped[flipped.length - 1] = (flipped[flipped.length - 1] ?? 0) ^ 0xff;
  const moved = Buffer.concat([
    encodeSnapshotFileHeader({ ...header, index: header.index + 1 }),
    payload,
  ]);
  const withPayload = (bytes: Buffer, patch: object = {}): Buffer =>
    Buffer.concat([
      encodeSnapshotFileHeader({
        ...header,
        payloadBytes: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        ...patch,
      }),
      bytes,
    ]);
  const cases: [string, Buffer | null, string, RegExp][] = [
    [
      'format',
      withPayload(Buffer.from(payload), { stateFormat: 'other/9' }),
      'new',
      /state format other\/9/,
    ],
    [
      'garbage',
      withPayload(Buffer.from('not msgpack')),
      'new',
      /the payload is not a state snapshot/,
    ],
    ['flipped', flipped, 'new', /checksum mismatch/],
    ['cut', file.subarray(0, file.length - 10), 'new', /truncated/],
    ['moved', moved, 'new', /does not match its payload/],
    ['same-id', file, 'tenure-local', /is a backup of cluster "tenure-local".*new --cluster-id/],
    ['missing', null, 'new', /cannot read/],
  ];
  for (const [name, bytes, clusterId, expected] of cases) {
    const path = join(dir, `${name}.tenure-snapshot`);
    if (bytes !== null) writeFileSync(path, bytes);
    const dataDir = join(dir, `data-${name}`);
    await t.rejects(
      restoreDataDir({ nodeId: 'n1', clusterId, dataDir, limits }, path, 0),
      expected,
      name,
    );
    t.notOk(existsSync(dataDir), `${name}: no data directory`);
  }
  const used = join(dir, 'used');
  mkdirSync(used);
  writeFileSync(join(used, 'LOG'), 'x');
  const path = join(dir, 'good.tenure-snapshot');
  writeFileSync(path, file);
  const err = await restoreDataDir(
    { nodeId: 'n1', clusterId: 'new', dataDir: used, limits },
    path,
    0,
  ).catch((e: unknown) => e);
  t.ok(err instanceof RestoreError);
  t.match((err as Error).message, /is not empty/);
  t.equal(readFileSync(join(used, 'LOG'), 'utf8'), 'x', 'the existing data is untouched');
});

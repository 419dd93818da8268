// Proves the `tenure` CLI works end to end against a real three-node cluster: acquire/get/release with --json, and the documented exit codes for a conflict (1), bad usage (2) and a free lease (4).
// Timing: the held lease must outlive the dozen CLI processes started before its release, which on a
// loaded 2-core machine can take many seconds each, so it is acquired with a ttl of an hour (the
// server's maximum); nothing here waits on time.
import t from 'tap';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { LocalCluster, REPO_ROOT } from '../support/cluster.js';

const CLI = join(REPO_ROOT, 'packages', 'client', 'dist', 'cli', 'main.js');

/** Ttl of the lease held across most of the test (ms): the server's maximum, one hour. */
const HOLD_TTL_MS = 3_600_000;

/** The JSON object on the first line of `stdout`, or `{}` when there is none (the exit code is asserted apart). */
function parseJsonLine(stdout: string): unknown {
  const line = stdout.trim().split('\n')[0] ?? '';
  return line === '' ? {} : (JSON.parse(line) as unknown);
}

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI with `args`; resolves with its exit code and output (never rejects on a non-zero exit). */
function tenure(args: readonly string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { timeout: 30_000, env: { ...process.env, TENURE_ENDPOINTS: '' } },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') {
          reject(error);
          return;
        }
        resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}

t.test('tenure CLI against a real cluster', async (t) => {
  t.setTimeout(600_000); // a hang fails this file instead of stalling the suite (bounds a loaded machine too)
  const cluster = await LocalCluster.start();
  t.teardown(() => cluster.teardown());
  // host:port form for one endpoint, URLs for the others (both accepted).
  const endpoints = [
    '--endpoints',
    cluster.nodes.map((n, i) => (i === 0 ? n.httpAddress : n.url)).join(','),
  ];

  const acquired = await tenure([
    ...endpoints,
    '--json',
    'lease',
    'acquire',
    'cli-lock',
    '--ttl',
    `${HOLD_TTL_MS}ms`,
  ]);
  t.equal(acquired.code, 0, `acquire exits 0 (stderr: ${acquired.stderr})`);
  const grant = parseJsonLine(acquired.stdout) as {
    event: string;
    name: string;
    holder: string;
    fencingToken: number;
    ttlMs: number;
  };
  t.equal(grant.event, 'acquired');
  t.equal(grant.name, 'cli-lock');
  t.equal(grant.ttlMs, HOLD_TTL_MS);
  t.type(grant.fencingToken, 'number');

  const got = await tenure([...endpoints, '--json', 'lease', 'get', 'cli-lock']);
  t.equal(got.code, 0, 'get exits 0');
  const view = parseJsonLine(got.stdout) as { holder: string; fencingToken: number };
  t.equal(view.holder, grant.holder, "get shows the CLI's holder");
  t.equal(view.fencingToken, grant.fencingToken);

  const conflict = await tenure([
    ...endpoints,
    '--json',
    'lease',
    'acquire',
    'cli-lock',
    '--ttl',
    '5s',
  ]);
  t.equal(conflict.code, 1, 'a second acquire by another holder exits 1 (conflict)');
  t.match(conflict.stderr, /held/, 'the error names the conflict');

  const badRelease = await tenure([
    ...endpoints,
    'lease',
    'release',
    'cli-lock',
    '--holder',
    grant.holder,
    '--token',
    String(grant.fencingToken + 1),
  ]);
  t.equal(badRelease.code, 1, 'release with the wrong token exits 1');

  for (const args of [
    ['lease', 'acquire', 'cli-lock', '--ttl', 'soon'],
    ['lease', 'acquire'],
    ['lease', 'release', 'cli-lock', '--holder', grant.holder],
    ['lease', 'frobnicate'],
    ['lease', 'acquire', 'bad/name', '--ttl', '1s'],
  ]) {
    const r = await tenure([...endpoints, ...args]);
    t.equal(r.code, 2, `bad usage exits 2: tenure ${args.join(' ')}`);
  }

  const released = await tenure([
    ...endpoints,
    '--json',
    'lease',
    'release',
    'cli-lock',
    '--holder',
    grant.holder,
    '--token',
    String(grant.fencingToken),
  ]);
  t.equal(released.code, 0, `release exits 0 (stderr: ${released.stderr})`);
  t.same(parseJsonLine(released.stdout), { name: 'cli-lock', released: true });

  const free = await tenure([...endpoints, 'lease', 'get', 'cli-lock']);
  t.equal(free.code, 4, 'get of a free lease exits 4');

  const again = await tenure([
    ...endpoints,
    '--json',
    'lease',
    'acquire',
    'cli-lock',
    '--ttl',
    '1s',
  ]);
  t.equal(again.code, 0, 'the lease can be acquired again');
  t.ok(
    ((parseJsonLine(again.stdout) as { fencingToken?: number }).fencingToken ?? 0) >
      grant.fencingToken,
    'with a higher token',
  );
});

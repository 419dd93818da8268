// Proves BC-36 (backup and restore) end to end with real processes (docs/operations.md "Backup and restore", docs/failure-scenarios.md BC-36): leases granted → `tenure snapshot save` from a follower → more grants → a new cluster started with `--restore` holds the backup's grants with their holders and tokens, not the later ones, and every token it issues is above every token the old cluster issued, those after the backup included; a damaged file is refused before any node starts, leaving no data directory.
// Timing: grants are held with the server's maximum ttl (an hour), so nothing here depends on how
// slowly the machine runs; every wait is on an event (process exit, a leader, an HTTP answer).
import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCluster, REPO_ROOT, SERVER_MAIN } from '../support/cluster.js';

const CLI = join(REPO_ROOT, 'packages', 'client', 'dist', 'cli', 'main.js');
/** Ttl of every grant (ms): the server's maximum, so no grant can expire during the test. */
const HOLD_TTL_MS = 3_600_000;
/** Bound on each cluster start (ms): generous, since six node processes start on a loaded machine. */
const START_TIMEOUT_MS = 300_000;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node <script> ...args`; resolves with the exit code and output (never on a timeout). */
function runNode(script: string, args: readonly string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [script, ...args],
      { timeout: 240_000, env: { ...process.env, TENURE_ENDPOINTS: '' } },
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

async function acquire(c: LocalCluster, node: string, name: string, holder: string) {
  const r = await c.request(node, 'POST', `/v1/leases/${name}/acquire`, {
    holder,
    ttlMs: HOLD_TTL_MS,
  });
  if (r.status !== 200) throw new Error(`acquire ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { holder: string; fencingToken: number };
}

t.test('backup → more grants → restore: grants kept, tokens only go up', async (t) => {
  t.setTimeout(900_000);
  const dir = mkdtempSync(join(tmpdir(), 'tenure-backup-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'backup.tenure-snapshot');

  const old = await LocalCluster.start({ startTimeoutMs: START_TIMEOUT_MS });
  t.teardown(() => old.teardown());
  const leader = await old.leader();
  const follower = old.nodes.find((n) => n.id !== leader)!;
  const kept = await acquire(old, leader, 'kept', 'A');
  const cycled = await acquire(old, follower.id, 'cycled', 'B');
  const put = await old.request(leader, 'PUT', '/v1/kv/config', { value: { v: 1 } });
  t.equal(put.status, 200);

  // Saved through a follower: it encodes its own state at the leader's read index.
  const save = await runNode(CLI, [
    '--endpoints',
    follower.url,
    '--json',
    'snapshot',
    'save',
    file,
  ]);
  t.equal(save.code, 0, save.stderr);
  const saved = JSON.parse(save.stdout.trim()) as { index: number; clusterId: string };
  t.equal(saved.clusterId, 'tenure-test');
  t.ok(saved.index >= put.body.revision, 'the backup holds every acknowledged write');

  // After the backup the old cluster goes on granting: release/re-acquire cycles and a new lease.
  let lastOld = 0;
  let current = cycled;
  for (let i = 0; i < 5; i++) {
    const rel = await old.request(leader, 'POST', '/v1/leases/cycled/release', {
      holder: current.holder,
      fencingToken: current.fencingToken,
    });
    t.equal(rel.status, 200);
    current = await acquire(old, leader, 'cycled', `C${i}`);
    lastOld = Math.max(lastOld, current.fencingToken);
  }
  const late = await acquire(old, leader, 'late', 'D');
  lastOld = Math.max(lastOld, late.fencingToken);
  await old.teardown();

  const restored = await LocalCluster.start({
    extraArgs: ['--cluster-id', 'tenure-restored', '--restore', file],
    startTimeoutMs: START_TIMEOUT_MS,
  });
  t.teardown(() => restored.teardown());
  const n1 = restored.nodes[0]!.id;
  const health = await restored.request(n1, 'GET', '/healthz');
  t.equal(health.body.clusterId, 'tenure-restored');

  const keptNow = await restored.request(n1, 'GET', '/v1/leases/kept');
  t.equal(keptNow.status, 200);
  t.equal(keptNow.body.holder, 'A', 'a grant live in the backup keeps its holder');
  t.equal(keptNow.body.fencingToken, kept.fencingToken, '... and its token');
  const cycledNow = await restored.request(n1, 'GET', '/v1/leases/cycled');
  t.equal(cycledNow.body.holder, 'B', 'the backup state, not what came after it');
  t.equal((await restored.request(n1, 'GET', '/v1/leases/late')).status, 404);
  const config = await restored.request(n1, 'GET', '/v1/kv/config');
  t.same(config.body.value, { v: 1 });

  // New grants: of a lease granted only after the backup, a fresh one, and a re-grant.
  const tokens = [
    (await acquire(restored, n1, 'late', 'E')).fencingToken,
    (await acquire(restored, n1, 'fresh', 'F')).fencingToken,
  ];
  const rel = await restored.request(n1, 'POST', '/v1/leases/cycled/release', {
    holder: 'B',
    fencingToken: cycled.fencingToken,
  });
  t.equal(rel.status, 200, 'the restored holder can release with its old token');
  tokens.push((await acquire(restored, n1, 'cycled', 'G')).fencingToken);
  for (const token of tokens)
    t.ok(token > lastOld, `new token ${token} above every old one (last ${lastOld})`);
  const put2 = await restored.request(n1, 'PUT', '/v1/kv/config', { value: { v: 2 } });
  t.ok(put2.body.revision > put.body.revision, 'KV revisions go on upwards too');
});

t.test('a damaged backup is refused before the node starts, naming the problem', async (t) => {
  t.setTimeout(300_000);
  const dir = mkdtempSync(join(tmpdir(), 'tenure-backup-bad-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const good = Buffer.concat([
    Buffer.from('TENURE-SNAPSHOT 1\n'),
    Buffer.from(
      JSON.stringify({
        clusterId: 'old',
        nodeId: 'n1',
        index: 1,
        term: 1,
        clusterTimeMs: 0,
        stateFormat: 'tenure-coord-state/2',
        payloadBytes: 4,
        sha256: '0'.repeat(64),
        createdAt: 'x',
      }) + '\n',
    ),
    Buffer.from([1, 2, 3, 4]),
  ]);
  // One damaged file through the real process (the other checks: packages/server restore tests).
  const cases: [string, Buffer, RegExp][] = [['checksum', good, /checksum mismatch/]];
  for (const [name, bytes, expected] of cases) {
    const file = join(dir, `${name}.tenure-snapshot`);
    writeFileSync(file, bytes);
    const dataDir = join(dir, `data-${name}`);
    const run = await runNode(SERVER_MAIN, [
      '--id',
      'n1',
      '--peers',
      'n1=127.0.0.1:1@127.0.0.1:2',
      '--cluster-id',
      'new',
      '--data-dir',
      dataDir,
      '--restore',
      file,
    ]);
    t.equal(run.code, 1, `${name}: exit code 1`);
    t.match(run.stderr, /^tenure-server: restore refused: /, `${name}: says it refused`);
    t.match(run.stderr, expected, `${name}: names the problem`);
    t.notOk(existsSync(dataDir), `${name}: no data directory left behind`);
    t.notOk(existsSync(`${dataDir}.restoring`), `${name}: nor a half-built one`);
  }
});

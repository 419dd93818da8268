// Proves the snapshot settings are parsed and validated, and GET /v1/cluster/state answers this replica's applied index and the sha256 of its state snapshot locally (never forwarded).
import { createHash } from 'node:crypto';
import t from 'tap';
import { ConfigError, loadConfig } from '../src/config.js';
import { harness, send } from './fixtures/harness.js';

const PEERS = 'n1=127.0.0.1:7101@127.0.0.1:7001,n2=127.0.0.1:7102@127.0.0.1:7002';
const base = ['--id', 'n1', '--peers', PEERS];

t.test('snapshot settings: defaults, flags, env, flags win', async (t) => {
  const d = loadConfig(base, {});
  t.equal(d.snapshotEntries, 10_000);
  t.equal(d.snapshotKeepEntries, 1_000);
  const f = loadConfig([...base, '--snapshot-entries', '100', '--snapshot-keep-entries=20'], {});
  t.equal(f.snapshotEntries, 100);
  t.equal(f.snapshotKeepEntries, 20);
  const e = loadConfig([...base, '--snapshot-entries', '300'], {
    TENURE_SNAPSHOT_ENTRIES: '200',
    TENURE_SNAPSHOT_KEEP_ENTRIES: '0',
  });
  t.equal(e.snapshotEntries, 300, 'flag wins over env');
  t.equal(e.snapshotKeepEntries, 0, 'keep 0 is allowed (drop every covered entry)');
});

t.test('bad snapshot settings name the setting', async (t) => {
  const bad: [string[], string][] = [
    [['--snapshot-entries', '0'], 'snapshot-entries'],
    [['--snapshot-entries', '1.5'], 'snapshot-entries'],
    [['--snapshot-entries', 'x'], 'snapshot-entries'],
    [['--snapshot-keep-entries', '-1'], 'snapshot-keep-entries'],
  ];
  for (const [args, setting] of bad) {
    let thrown: unknown = null;
    try {
      loadConfig([...base, ...args], {});
    } catch (err) {
      thrown = err;
    }
    t.ok(thrown instanceof ConfigError, `${args.join(' ')} throws ConfigError`);
    t.equal((thrown as ConfigError).setting, setting);
  }
});

t.test(
  'GET /v1/cluster/state: applied index and deterministic state hash, served locally',
  async (t) => {
    const off = await harness();
    const refused = await off.app.inject({ method: 'GET', url: '/v1/cluster/state' });
    await off.close();
    t.equal(refused.statusCode, 404, 'off by default');
    t.match(refused.json(), { error: { code: 'not_found', message: /--state-hash-route on/ } });
    const h = await harness(['--state-hash-route', 'on']);
    t.teardown(h.close);
    const hashOf = (): string => createHash('sha256').update(h.coord.snapshot()).digest('hex');
    const first = await h.app.inject({ method: 'GET', url: '/v1/cluster/state' });
    t.equal(first.statusCode, 200);
    const s1 = first.json() as { id: string; appliedIndex: number; stateHash: string };
    t.equal(s1.id, 'n1');
    t.equal(s1.appliedIndex, h.raft.status().appliedIndex);
    t.match(s1.stateHash, /^[0-9a-f]{64}$/);
    t.equal(s1.stateHash, hashOf());

    const got = await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 60_000 });
    t.equal(got.statusCode, 200);
    const s2 = (
      await h.app.inject({ method: 'GET', url: '/v1/cluster/state' })
    ).json() as typeof s1;
    t.ok(s2.appliedIndex > s1.appliedIndex, 'applied index advanced');
    t.not(s2.stateHash, s1.stateHash, 'a grant changes the hash');
    t.equal(s2.stateHash, hashOf());

    // A follower answers from its own replica: nothing is forwarded to the leader.
    h.raft.setRole('follower', 'n2');
    const s3 = await h.app.inject({ method: 'GET', url: '/v1/cluster/state' });
    t.equal(s3.statusCode, 200);
    t.equal((s3.json() as typeof s1).stateHash, hashOf());
    t.equal(h.forwarder.calls.length, 0, 'not forwarded');
    t.equal(
      (await h.app.inject({ method: 'GET', url: '/v1/cluster/state?consistency=stale' }))
        .statusCode,
      400,
      'no query parameters',
    );
  },
);

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
    type StateAnswer = { id: string; appliedIndex: number; stateHash: string };
    // Asks the route and hashes the replica while applies are held: the node's time advancer
    // proposes too, and the answer spans event-loop turns.
    const ask = async (): Promise<{ status: number; body: StateAnswer; expected: StateAnswer }> => {
      const release = h.raft.holdApplies();
      try {
        const res = await h.app.inject({ method: 'GET', url: '/v1/cluster/state' });
        const expected = {
          id: 'n1',
          appliedIndex: h.raft.status().appliedIndex,
          stateHash: createHash('sha256').update(h.coord.snapshot()).digest('hex'),
        };
        return { status: res.statusCode, body: res.json(), expected };
      } finally {
        release();
      }
    };
    const first = await ask();
    t.equal(first.status, 200);
    const s1 = first.body;
    t.match(s1.stateHash, /^[0-9a-f]{64}$/);
    t.same(s1, first.expected, 'this replica: its applied index and the hash of its state there');

    const got = await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 60_000 });
    t.equal(got.statusCode, 200);
    const second = await ask();
    const s2 = second.body;
    t.ok(s2.appliedIndex > s1.appliedIndex, 'applied index advanced');
    t.not(s2.stateHash, s1.stateHash, 'a grant changes the hash');
    t.same(s2, second.expected);

    // A follower answers from its own replica: nothing is forwarded to the leader.
    h.raft.setRole('follower', 'n2');
    const third = await ask();
    t.equal(third.status, 200);
    t.same(third.body, third.expected);
    t.equal(h.forwarder.calls.length, 0, 'not forwarded');
    t.equal(
      (await h.app.inject({ method: 'GET', url: '/v1/cluster/state?consistency=stale' }))
        .statusCode,
      400,
      'no query parameters',
    );
  },
);

// Proves the node's metrics: grants, ends and hold times from applied events (not from replay),
// the leader-change counter ignoring "no leader" notifications, the Raft persist/snapshot
// timings, the leader-only per-peer gauges, and the leader view of members in /v1/cluster.
import t from 'tap';
import type { ApplyOutput } from '@tenure/coord-state';
import type { RaftNodeApi, RaftStatus } from '@tenure/raft';
import { createMetrics } from '../src/metrics.js';
import { leaderView } from '../src/member-view.js';
import { GrantClock } from '../src/grant-clock.js';
import { harness, send } from './fixtures/harness.js';

/** The value of one sample line `name{labels} value` in a Prometheus text page, or null. */
function sample(text: string, series: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? null : Number(line.slice(series.length + 1));
}

t.test('grants, releases, expiries and hold time through the app', async (t) => {
  let nowMs = 1_000;
  const h = await harness();
  t.teardown(h.close);
  h.raft.now = () => nowMs;
  const a = (
    await send(h.app, 'POST', '/v1/leases/m/acquire', { holder: 'A', ttlMs: 5000 })
  ).json();
  nowMs += 2_000;
  await send(h.app, 'POST', '/v1/leases/m/release', { holder: 'A', fencingToken: a.fencingToken });
  await send(h.app, 'POST', '/v1/leases/x/acquire', { holder: 'B', ttlMs: 1000 });
  nowMs += 5_000;
  // Any entry moves cluster time on and expires the lease.
  await send(h.app, 'POST', '/v1/leases/y/acquire', { holder: 'C', ttlMs: 1000 });
  const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
  t.equal(sample(text, 'tenure_grants_total{kind="lease"}'), 3);
  t.equal(sample(text, 'tenure_grant_ends_total{kind="lease",reason="released"}'), 1);
  t.equal(sample(text, 'tenure_grant_ends_total{kind="lease",reason="expired"}'), 1);
  t.equal(sample(text, 'tenure_grant_hold_seconds_sum{kind="lease",reason="released"}'), 2);
  t.equal(sample(text, 'tenure_grant_hold_seconds_count{kind="lease",reason="expired"}'), 1);
  t.equal(sample(text, 'tenure_live_leases'), 1);
});

t.test('a queued acquire observes its wait time with its outcome', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  await send(h.app, 'POST', '/v1/leases/w/acquire', { holder: 'A', ttlMs: 60_000 });
  const r = await send(h.app, 'POST', '/v1/leases/w/acquire', {
    holder: 'B',
    ttlMs: 1000,
    waitMs: 50,
  });
  t.equal(r.statusCode, 409);
  const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
  t.equal(sample(text, 'tenure_wait_seconds_count{kind="lease",outcome="timed_out"}'), 1);
});

t.test('leader changes count new leaders only, not terms without one', async (t) => {
  const m = createMetrics(
    () => null,
    () => null,
  );
  const count = async () => sample(await m.registry.metrics(), 'tenure_leader_changes_total');
  m.noteLeader(null, 1);
  t.equal(await count(), 0, 'no leader is not a change');
  m.noteLeader('n1', 2);
  m.noteLeader('n1', 2);
  t.equal(await count(), 1, 'a repeated notification counts once');
  m.noteLeader(null, 3);
  m.noteLeader(null, 4);
  t.equal(await count(), 1, 'term bumps without a leader are not counted');
  m.noteLeader('n2', 5);
  m.noteLeader('n2', 6);
  t.equal(await count(), 3, 'a new leader and a new term of leadership both count');
});

t.test('the snapshot series have a value before the first snapshot', async (t) => {
  const m = createMetrics(
    () => null,
    () => null,
  );
  const text = await m.registry.metrics();
  for (const origin of ['taken', 'installed']) {
    t.equal(sample(text, `tenure_raft_snapshots_total{origin="${origin}"}`), 0, origin);
    t.equal(sample(text, `tenure_raft_snapshot_seconds_count{origin="${origin}"}`), 0, origin);
    t.equal(sample(text, `tenure_raft_snapshot_seconds_sum{origin="${origin}"}`), 0, origin);
  }
  t.equal(sample(text, 'tenure_raft_snapshot_bytes'), 0);
  t.equal(sample(text, 'tenure_raft_snapshot_index'), 0);
});

t.test('Raft persist and snapshot timings', async (t) => {
  const m = createMetrics(
    () => null,
    () => null,
  );
  m.raftObserver.persisted?.(4, 10);
  m.raftObserver.snapshotTaken?.({ index: 100, sizeBytes: 2048, durationMs: 30 });
  m.raftObserver.snapshotInstalled?.({ index: 200, sizeBytes: 4096, durationMs: 10 });
  const text = await m.registry.metrics();
  t.equal(sample(text, 'tenure_raft_persist_seconds_count'), 1);
  t.equal(sample(text, 'tenure_raft_persist_seconds_sum'), 0.004);
  t.equal(sample(text, 'tenure_raft_persisted_entries_total'), 10);
  t.equal(sample(text, 'tenure_raft_snapshots_total{origin="taken"}'), 1);
  t.equal(sample(text, 'tenure_raft_snapshots_total{origin="installed"}'), 1);
});

const leaderStatus = (role: RaftStatus['role']): RaftStatus =>
  ({
    id: 'n1',
    role,
    term: 3,
    leaderId: role === 'leader' ? 'n1' : 'n2',
    commitIndex: 90,
    appliedIndex: 90,
    lastLogIndex: 100,
    clusterTimeMs: 0,
    members: [
      { id: 'n1', role },
      { id: 'n2', role: 'follower', matchIndex: 100, lastContactMs: 50 },
      { id: 'n3', role: 'follower', matchIndex: 40, lastContactMs: 9_000 },
      { id: 'n4', role: 'follower', matchIndex: 0 },
    ],
  }) as unknown as RaftStatus;

t.test('per-peer lag and contact gauges exist on the leader only', async (t) => {
  let status = leaderStatus('leader');
  const raft = { status: () => status } as unknown as RaftNodeApi<ApplyOutput>;
  const m = createMetrics(
    () => raft,
    () => null,
  );
  let text = await m.registry.metrics();
  t.equal(sample(text, 'tenure_raft_peer_lag_entries{peer="n2"}'), 0);
  t.equal(sample(text, 'tenure_raft_peer_lag_entries{peer="n3"}'), 60);
  t.equal(sample(text, 'tenure_raft_peer_last_contact_seconds{peer="n3"}'), 9);
  t.equal(sample(text, 'tenure_raft_peer_last_contact_seconds{peer="n4"}'), null);
  t.equal(sample(text, 'tenure_raft_peer_lag_entries{peer="n1"}'), null, 'not itself');
  t.equal(sample(text, 'tenure_raft_has_leader'), 1);
  t.equal(sample(text, 'tenure_raft_peer_reachable{peer="n2"}'), 1);
  t.equal(sample(text, 'tenure_raft_peer_reachable{peer="n3"}'), 0, 'silent too long');
  t.equal(sample(text, 'tenure_raft_peer_reachable{peer="n4"}'), 0, 'never answered');
  status = leaderStatus('follower');
  text = await m.registry.metrics();
  t.equal(sample(text, 'tenure_raft_peer_lag_entries{peer="n3"}'), null, 'a follower reports none');
});

t.test('/v1/cluster members: reachability and lag as the leader sees them', async (t) => {
  const s = leaderStatus('leader');
  t.same(leaderView(s, 'n1', 1000), { reachable: true, lagEntries: 0 });
  t.same(leaderView(s, 'n2', 1000), { reachable: true, lagEntries: 0 });
  t.same(leaderView(s, 'n3', 1000), { reachable: false, lagEntries: 60 }, 'silent too long');
  t.same(leaderView(s, 'n4', 1000), { reachable: false, lagEntries: 100 }, 'never answered');
  t.same(leaderView(leaderStatus('follower'), 'n3', 1000), {}, 'a follower cannot know');
  const h = await harness();
  t.teardown(h.close);
  const c = (await h.app.inject({ method: 'GET', url: '/v1/cluster' })).json();
  t.match(c.members[0], { id: 'n1', role: 'leader', reachable: true, lagEntries: 0 });
  t.match(c.members[1], { id: 'n2', reachable: false }, 'a peer never heard from');
});

t.test('the grant clock is bounded', async (t) => {
  const clock = new GrantClock(1);
  const ended: (number | null)[] = [];
  const sink = {
    granted: () => {},
    ended: (_k: string, _r: string, ms: number | null) => ended.push(ms),
  };
  const ev = (name: string, type: 'granted' | 'released') => ({
    kind: 'lease' as const,
    name,
    type,
    holder: 'h',
    fencingToken: 1,
    ...(type === 'released' ? { endReason: 'released' as const } : {}),
  });
  clock.observe([ev('a', 'granted'), ev('b', 'granted')], 10, sink);
  t.equal(clock.size, 1);
  clock.observe([ev('a', 'released'), ev('b', 'released')], 25, sink);
  t.same(ended, [15, null], 'the untracked grant ends without a hold time');
  t.equal(clock.size, 0);
});

t.test(
  'the snapshot gauges show the snapshot in storage, also one recovered at start',
  async (t) => {
    const status = { ...leaderStatus('follower'), snapshotIndex: 200, snapshotBytes: 4096 };
    const m = createMetrics(
      () => ({ status: () => status }) as unknown as RaftNodeApi<ApplyOutput>,
      () => null,
    );
    const text = await m.registry.metrics();
    t.equal(sample(text, 'tenure_raft_snapshot_bytes'), 4096);
    t.equal(sample(text, 'tenure_raft_snapshot_index'), 200);
  },
);

// Proves leases expire on time (never early) and do not count down while the cluster has no leader (docs/concepts.md).
import t from 'tap';
import { DRIFT_RATIO_MAX } from '@tenure/raft/testing';
import { LEADER_TIMEOUT_MS, LocalCluster, type ClusterView } from '../support/cluster.js';
import { retrying } from '../support/http-client.js';

const ELECTION_TIMEOUT_MS = 1000;
/** Allowed lateness of an expiry: 2 × election timeout + 1 s (docs/failure-scenarios.md Δmax). */
const DELTA_MAX_MS = 2 * ELECTION_TIMEOUT_MS + 1000;
/** Cluster time a restart of every node may lose (docs/concepts.md). */
const LOST_MAX_MS = 1000;
/** Quiet period before the whole-cluster kill: long enough that losing it would show. */
const QUIET_MS = 10_000;

/** Polls /v1/cluster on `id` until it names no leader (generous deadline); returns that view. */
async function leaderlessView(c: LocalCluster, id: string): Promise<ClusterView> {
  const until = Date.now() + LEADER_TIMEOUT_MS;
  while (Date.now() < until) {
    const v = await c.clusterView(id, 5000);
    if (v !== null && v.leader === null) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${id} kept a leader`);
}

t.test('a lease expires after its ttl, not before', async (t) => {
  const c = await LocalCluster.start({ electionTimeoutMs: ELECTION_TIMEOUT_MS });
  t.teardown(() => c.teardown());
  for (const ttlMs of [100, 999, 1500]) {
    const sent = performance.now();
    const a = await c.request('n1', 'POST', `/v1/leases/t${ttlMs}/acquire`, { holder: 'A', ttlMs });
    t.equal(a.status, 200);
    const w = await c.request(
      'n2',
      'GET',
      `/v1/leases/t${ttlMs}/watch?afterToken=${a.body.fencingToken}&timeoutMs=10000`,
    );
    const elapsed = performance.now() - sent;
    t.match(w.body, { holder: null, changed: true }, `ttl ${ttlMs}: expired`);
    t.ok(elapsed >= ttlMs * 0.99, `ttl ${ttlMs}: not early (${elapsed.toFixed(0)} ms)`);
    t.ok(
      elapsed <= ttlMs + DELTA_MAX_MS + 2000,
      `ttl ${ttlMs}: on time (${elapsed.toFixed(0)} ms; Δmax plus 2 s for a loaded test machine)`,
    );
  }
});

t.test('leases are frozen while no leader exists', async (t) => {
  const c = await LocalCluster.start({ electionTimeoutMs: ELECTION_TIMEOUT_MS });
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  const ttlMs = 5000;
  const sent = performance.now();
  const a = await c.request(leader, 'POST', '/v1/leases/frozen/acquire', { holder: 'A', ttlMs });
  t.equal(a.status, 200);
  const others = c.nodes.map((n) => n.id).filter((id) => id !== leader);
  const survivor = others[1]!;
  // Kill the leader and one follower: the survivor can elect no one.
  await c.kill(leader);
  await c.kill(others[0]!);
  const leaderlessFrom = performance.now();
  const frozen = await leaderlessView(c, survivor);
  await new Promise((r) => setTimeout(r, ttlMs + 1000));
  const view = await c.clusterView(survivor);
  t.equal(view?.leader ?? null, null, 'no leader while a majority is down');
  t.equal(view?.clusterTimeMs, frozen.clusterTimeMs, '/v1/cluster shows cluster time frozen');
  const during = await c.request(
    survivor,
    'POST',
    '/v1/leases/frozen/acquire',
    { holder: 'B', ttlMs },
    { 'request-timeout-ms': '500' },
  );
  t.ok([503, 504].includes(during.status), `writes fail fast without a leader (${during.status})`);
  t.ok(performance.now() - leaderlessFrom >= ttlMs, 'leaderless for longer than the ttl');
  // One restart restores a majority; time may only have run before the kill and after this point.
  const restartFrom = performance.now();
  await c.restart(others[0]!);
  const v = await retrying(c, 'GET', '/v1/leases/frozen', undefined, {
    startNode: c.nodes.findIndex((n) => n.id === survivor),
  });
  const readAt = performance.now();
  const leaderedMs = leaderlessFrom - sent + (readAt - restartFrom);
  t.equal(v.status, 200, 'still held after the leaderless period');
  t.equal(v.body.holder, 'A');
  t.equal(v.body.fencingToken, a.body.fencingToken);
  t.ok(v.body.remainingMs > 0 && v.body.remainingMs <= ttlMs, `remaining ${v.body.remainingMs} ms`);
  t.ok(
    v.body.remainingMs >= ttlMs - leaderedMs - 100,
    `the leaderless ${ttlMs + 1000} ms did not count (remaining ${v.body.remainingMs} ms, ≤ ${leaderedMs.toFixed(0)} ms with a leader)`,
  );
  // The old leader restarts meanwhile (not awaited first: a slow start must not count as lateness).
  const restarting = c.restart(leader);
  // ...and it then expires on time, not early. The leader read its cluster time for remainingMs
  // somewhere between the read's send and its answer; on a loaded machine the answer can arrive
  // a second later. So "not early" counts from the send (the client rule of docs/concepts.md) and
  // "on time" from the answer: measured from the answer alone, a lease correctly ending
  // remainingMs after the leader's reading looks early by however long the answer took.
  const w = await retrying(
    c,
    'GET',
    `/v1/leases/frozen/watch?afterToken=${a.body.fencingToken}&timeoutMs=15000`,
    undefined,
    { totalMs: 30_000, attemptMs: 20_000 },
  );
  const goneAt = performance.now();
  t.match(w.body, { holder: null, changed: true });
  const sinceReadSentMs = goneAt - v.sentAtMs;
  t.ok(
    sinceReadSentMs >= v.body.remainingMs * (1 - DRIFT_RATIO_MAX),
    `expired no earlier than the remaining time after the read was sent (${sinceReadSentMs.toFixed(0)} vs ${v.body.remainingMs} ms; the answer took ${(readAt - v.sentAtMs).toFixed(0)} ms, served via ${v.sentTo})`,
  );
  t.ok(goneAt - readAt <= v.body.remainingMs + DELTA_MAX_MS + 2000, 'expired on time');
  await restarting;
});

t.test('cluster time survives a SIGKILL of every node after a quiet period', async (t) => {
  const c = await LocalCluster.start({ electionTimeoutMs: ELECTION_TIMEOUT_MS });
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  const ttlMs = 600_000;
  const a = await c.request(leader, 'POST', '/v1/leases/durable/acquire', { holder: 'A', ttlMs });
  t.equal(a.status, 200);
  // A quiet log: no client writes for much longer than the 1 s a full restart may lose
  // (docs/concepts.md). Without a durable record, every node would come back at the grant's time.
  await new Promise((r) => setTimeout(r, QUIET_MS));
  const before = await c.request(leader, 'GET', '/v1/leases/durable');
  t.equal(before.status, 200);
  t.ok(before.body.remainingMs <= ttlMs - QUIET_MS, `counted down (${before.body.remainingMs} ms)`);
  const clusterBefore = (await c.clusterView(leader, 30_000))!.clusterTimeMs;
  await Promise.all(c.nodes.map((n) => c.kill(n.id)));
  // The old leader alone (no majority, so no leader) shows the cluster time its disk recorded.
  await c.restart(leader);
  const recovered = await leaderlessView(c, leader);
  t.ok(
    recovered.clusterTimeMs >= clusterBefore - LOST_MAX_MS,
    `cluster time on disk ${recovered.clusterTimeMs} ms, ${clusterBefore} ms before the kill`,
  );
  for (const n of c.nodes) if (n.id !== leader) await c.restart(n.id);
  await c.waitForLeader();
  const after = await retrying(c, 'GET', '/v1/leases/durable', undefined, { totalMs: 120_000 });
  t.equal(after.status, 200);
  t.equal(after.body.fencingToken, a.body.fencingToken, 'the same grant');
  // Leaderless time does not count, so the lease may only have gained what the restart lost.
  t.ok(
    after.body.remainingMs <= before.body.remainingMs + LOST_MAX_MS,
    `remaining ${after.body.remainingMs} ms after the restart, ${before.body.remainingMs} ms before it`,
  );
});

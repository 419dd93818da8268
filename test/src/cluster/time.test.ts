// Proves leases expire on time (never early) and do not count down while the cluster has no leader (docs/concepts.md).
import t from 'tap';
import { LocalCluster } from '../support/cluster.js';
import { retrying } from '../support/http-client.js';

const ELECTION_TIMEOUT_MS = 1000;
/** Allowed lateness of an expiry: 2 × election timeout + 1 s (docs/failure-scenarios.md Δmax). */
const DELTA_MAX_MS = 2 * ELECTION_TIMEOUT_MS + 1000;

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
  await new Promise((r) => setTimeout(r, ttlMs + 1000));
  const view = await c.clusterView(survivor);
  t.equal(view?.leader ?? null, null, 'no leader while a majority is down');
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
  await c.restart(leader);
  // ...and it then expires on time, not early (measured from the read that saw remainingMs).
  const w = await retrying(
    c,
    'GET',
    `/v1/leases/frozen/watch?afterToken=${a.body.fencingToken}&timeoutMs=15000`,
    undefined,
    { totalMs: 30_000, attemptMs: 20_000 },
  );
  const waited = performance.now() - readAt;
  t.match(w.body, { holder: null, changed: true });
  t.ok(
    waited >= v.body.remainingMs - 100,
    `expired no earlier than the remaining time (${waited.toFixed(0)} vs ${v.body.remainingMs})`,
  );
  t.ok(waited <= v.body.remainingMs + DELTA_MAX_MS + 2000, 'expired on time');
});

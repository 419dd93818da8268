// Proves an aborted waiting acquire leaves no queue entry behind (BC-27), directly on the leader and through a follower, and that waits end by their deadline.
import t from 'tap';
import { LocalCluster } from '../support/cluster.js';

/** Live waiters on `id` from its /metrics. */
async function waiters(c: LocalCluster, id: string): Promise<number> {
  const m = await c.request(id, 'GET', '/metrics');
  const line = String(m.body)
    .split('\n')
    .find((l) => l.startsWith('tenure_lease_waiters '));
  return Number(line?.split(' ')[1] ?? NaN);
}

async function until(cond: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

t.test('aborted waits are withdrawn', async (t) => {
  const c = await LocalCluster.start();
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  const follower = c.nodes.find((n) => n.id !== leader)!.id;
  const a = await c.request(leader, 'POST', '/v1/leases/W/acquire', { holder: 'A', ttlMs: 30000 });
  for (const via of [leader, follower]) {
    const ac = new AbortController();
    const p = fetch(`${c.node(via).url}/v1/leases/W/acquire`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ holder: `B-${via}`, ttlMs: 30000, waitMs: 30000 }),
      signal: ac.signal,
    }).catch(() => 'aborted');
    t.ok(
      await until(async () => (await waiters(c, leader)) === 1, 60_000),
      `waiter queued via ${via}`,
    );
    ac.abort();
    t.equal(await p, 'aborted');
    t.ok(
      await until(async () => (await waiters(c, leader)) === 0, 60_000),
      `waiter withdrawn after abort via ${via}`,
    );
  }
  await c.request(leader, 'POST', '/v1/leases/W/release', {
    holder: 'A',
    fencingToken: a.body.fencingToken,
  });
  const g = await c.request(leader, 'GET', '/v1/leases/W');
  t.equal(g.status, 404, 'nobody was granted the lease after the aborted waits');
});

t.test('a wait ends by waitMs with 409 held', async (t) => {
  const c = await LocalCluster.start();
  t.teardown(() => c.teardown());
  await c.request('n1', 'POST', '/v1/leases/H/acquire', { holder: 'A', ttlMs: 30000 });
  const t0 = performance.now();
  const b = await c.request('n2', 'POST', '/v1/leases/H/acquire', {
    holder: 'B',
    ttlMs: 30000,
    waitMs: 300,
  });
  t.equal(b.status, 409);
  t.match(b.body.error, { code: 'held', holder: 'A' });
  t.ok(performance.now() - t0 >= 290, 'waited about waitMs');
  const obs = await c.request('n3', 'GET', '/v1/elections/none/observe?timeoutMs=200');
  t.match(obs.body, { changed: false, leader: null, revision: 0 });
});

t.test('with the leader paused, requests end by their deadline (never hang)', async (t) => {
  const c = await LocalCluster.start();
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  const follower = c.nodes.find((n) => n.id !== leader)!.id;
  c.pause(leader);
  try {
    for (const [method, path, body] of [
      ['POST', '/v1/leases/P/acquire', { holder: 'A', ttlMs: 5000 }],
      ['GET', '/v1/leases/P', undefined],
    ] as const) {
      const t0 = performance.now();
      const r = await c.request(follower, method, path, body, { 'request-timeout-ms': '300' });
      const elapsed = performance.now() - t0;
      t.ok(
        [503, 504].includes(r.status),
        `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`,
      );
      t.ok(['no_leader', 'timeout'].includes(r.body.error.code));
      t.ok(elapsed < 300 + 1500, `answered in ${elapsed.toFixed(0)} ms`);
    }
  } finally {
    c.resume(leader);
  }
  const after = await c.waitForLeader();
  t.ok(after, 'the cluster recovers');
});

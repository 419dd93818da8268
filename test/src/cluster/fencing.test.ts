// Proves a holder that stalls past its TTL loses the lease to a waiter with a higher token (never early), and its renew and fenced write are rejected.
import t from 'tap';
import { LocalCluster } from '../support/cluster.js';

t.test('stalled holder is fenced out', async (t) => {
  const c = await LocalCluster.start();
  t.teardown(() => c.teardown());
  const ttlMs = 1000;
  const sentAt = performance.now();
  const a = await c.request('n1', 'POST', '/v1/leases/res/acquire', { holder: 'A', ttlMs });
  t.equal(a.status, 200);
  const tA = a.body.fencingToken as number;
  t.equal(
    (
      await c.request('n2', 'PUT', '/v1/kv/counter', {
        value: 1,
        fence: { lease: 'res', fencingToken: tA },
      })
    ).status,
    200,
  );
  // A now "stalls": it sends nothing. B waits for the lease.
  const b = await c.request('n3', 'POST', '/v1/leases/res/acquire', {
    holder: 'B',
    ttlMs: 10000,
    waitMs: 20000,
  });
  const grantedAfterMs = performance.now() - sentAt;
  t.equal(b.status, 200);
  t.equal(b.body.holder, 'B');
  const tB = b.body.fencingToken as number;
  t.ok(tB > tA, 'the new grant carries a higher token');
  t.ok(
    grantedAfterMs >= ttlMs * 0.99,
    `no early expiry (granted after ${grantedAfterMs.toFixed(0)} ms)`,
  );
  const renew = await c.request('n1', 'POST', '/v1/leases/res/renew', {
    holder: 'A',
    fencingToken: tA,
  });
  t.equal(renew.status, 409);
  t.ok(
    ['not_holder', 'lease_expired'].includes(renew.body.error.code),
    `renew refused: ${renew.body.error.code}`,
  );
  const staleWrite = await c.request('n2', 'PUT', '/v1/kv/counter', {
    value: 2,
    fence: { lease: 'res', fencingToken: tA },
  });
  t.equal(staleWrite.status, 409);
  t.equal(staleWrite.body.error.code, 'stale_token');
  t.equal(
    (await c.request('n1', 'GET', '/v1/kv/counter')).body.value,
    1,
    'the stale write changed nothing',
  );
  t.equal(
    (
      await c.request('n3', 'PUT', '/v1/kv/counter', {
        value: 2,
        fence: { lease: 'res', fencingToken: tB },
      })
    ).status,
    200,
  );
  const check = await c.request('n2', 'POST', '/v1/fence/check', {
    lease: 'res',
    fencingToken: tA,
  });
  t.same(check.body, { valid: false, current: tB });
});

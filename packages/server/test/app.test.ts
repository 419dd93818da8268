// Proves every docs/api.md route answers with the contract's shapes and codes through buildApp (app.inject, fake Raft).
import t from 'tap';
import { harness, send } from './fixtures/harness.js';

t.test('leases: acquire, re-acquire renews, get, list, renew, release, 404 after', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const a = await send(h.app, 'POST', '/v1/leases/db-lock/acquire', { holder: 'A', ttlMs: 5000 });
  t.equal(a.statusCode, 200);
  t.equal(a.headers['tenure-leader'], 'n1');
  const g = a.json();
  t.match(g, { name: 'db-lock', holder: 'A', ttlMs: 5000 });
  t.type(g.fencingToken, 'number');
  const again = await send(h.app, 'POST', '/v1/leases/db-lock/acquire', {
    holder: 'A',
    ttlMs: 5000,
  });
  t.equal(again.json().fencingToken, g.fencingToken, 'same holder re-acquire keeps the token');
  const other = await send(h.app, 'POST', '/v1/leases/db-lock/acquire', {
    holder: 'B',
    ttlMs: 5000,
  });
  t.equal(other.statusCode, 409);
  t.equal(other.json().error.code, 'held');
  t.equal(other.json().error.holder, 'A');
  const view = await h.app.inject({ method: 'GET', url: '/v1/leases/db-lock' });
  t.equal(view.statusCode, 200);
  t.match(view.json(), { name: 'db-lock', holder: 'A', fencingToken: g.fencingToken, ttlMs: 5000 });
  t.ok(view.json().remainingMs > 0 && view.json().remainingMs <= 5000);
  const list = await h.app.inject({ method: 'GET', url: '/v1/leases?prefix=db&limit=10' });
  t.equal(list.json().leases.length, 1);
  const renew = await send(h.app, 'POST', '/v1/leases/db-lock/renew', {
    holder: 'A',
    fencingToken: g.fencingToken,
  });
  t.equal(renew.statusCode, 200);
  t.equal(renew.json().fencingToken, g.fencingToken);
  const wrong = await send(h.app, 'POST', '/v1/leases/db-lock/release', {
    holder: 'B',
    fencingToken: g.fencingToken,
  });
  t.equal(wrong.statusCode, 409);
  t.equal(wrong.json().error.code, 'not_holder');
  const rel = await send(h.app, 'POST', '/v1/leases/db-lock/release', {
    holder: 'A',
    fencingToken: g.fencingToken,
  });
  t.same(rel.json(), { name: 'db-lock', released: true });
  const gone = await h.app.inject({ method: 'GET', url: '/v1/leases/db-lock' });
  t.equal(gone.statusCode, 404);
  t.equal(gone.json().error.code, 'not_found');
  const renewGone = await send(h.app, 'POST', '/v1/leases/db-lock/renew', {
    holder: 'A',
    fencingToken: g.fencingToken,
  });
  t.equal(renewGone.statusCode, 409);
  const stale = await h.app.inject({ method: 'GET', url: '/v1/leases/db-lock?consistency=stale' });
  t.equal(stale.headers['tenure-stale'], 'true');
});

t.test('acquire with waitMs is granted on release, FIFO, with a higher token', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const a = (
    await send(h.app, 'POST', '/v1/leases/q/acquire', { holder: 'A', ttlMs: 10000 })
  ).json();
  const bP = send(h.app, 'POST', '/v1/leases/q/acquire', {
    holder: 'B',
    ttlMs: 10000,
    waitMs: 5000,
  });
  await new Promise((r) => setTimeout(r, 20));
  const cP = send(h.app, 'POST', '/v1/leases/q/acquire', {
    holder: 'C',
    ttlMs: 10000,
    waitMs: 5000,
  });
  await new Promise((r) => setTimeout(r, 20));
  await send(h.app, 'POST', '/v1/leases/q/release', { holder: 'A', fencingToken: a.fencingToken });
  const b = await bP;
  t.equal(b.statusCode, 200);
  t.equal(b.json().holder, 'B');
  t.ok(b.json().fencingToken > a.fencingToken);
  await send(h.app, 'POST', '/v1/leases/q/release', {
    holder: 'B',
    fencingToken: b.json().fencingToken,
  });
  const c = await cP;
  t.equal(c.json().holder, 'C');
  t.ok(c.json().fencingToken > b.json().fencingToken);
});

t.test('a wait that runs out answers 409 held and the waiter is gone', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  await send(h.app, 'POST', '/v1/leases/w/acquire', { holder: 'A', ttlMs: 10000 });
  const b = await send(h.app, 'POST', '/v1/leases/w/acquire', {
    holder: 'B',
    ttlMs: 10000,
    waitMs: 150,
  });
  t.equal(b.statusCode, 409);
  t.equal(b.json().error.code, 'held');
  t.equal(b.json().error.holder, 'A');
  t.equal(h.coord.counts().waiters, 0);
});

t.test('a lease expires after its ttl (time advancer proposes time.advance)', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  await send(h.app, 'POST', '/v1/leases/e/acquire', { holder: 'A', ttlMs: 100 });
  const w = await h.app.inject({ method: 'GET', url: '/v1/leases/e/watch?timeoutMs=3000' });
  t.equal(w.statusCode, 200);
  t.match(w.json(), { name: 'e', holder: null, fencingToken: null, changed: true });
  const before = h.raft.proposals;
  await new Promise((r) => setTimeout(r, 200));
  t.equal(h.raft.proposals, before, 'no proposals while nothing is due');
});

t.test('watch and observe answer changed:false after timeoutMs', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const a = (
    await send(h.app, 'POST', '/v1/leases/x/acquire', { holder: 'A', ttlMs: 60000 })
  ).json();
  const w = await h.app.inject({
    method: 'GET',
    url: `/v1/leases/x/watch?afterToken=${a.fencingToken}&timeoutMs=50`,
  });
  t.match(w.json(), { holder: 'A', fencingToken: a.fencingToken, changed: false });
  const o = await h.app.inject({ method: 'GET', url: '/v1/elections/g/observe?timeoutMs=50' });
  t.match(o.json(), { group: 'g', leader: null, candidates: [], revision: 0, changed: false });
  const w2 = await h.app.inject({
    method: 'GET',
    url: '/v1/leases/x/watch?afterToken=1&timeoutMs=50',
  });
  t.equal(w2.json().changed, true, 'a different token answers at once');
});

t.test('elections: campaign, wait, observe, proclaim, renew, resign', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const empty = await h.app.inject({ method: 'GET', url: '/v1/elections/g' });
  t.same(empty.json(), { group: 'g', leader: null, candidates: [], revision: 0 });
  const p = (
    await send(h.app, 'POST', '/v1/elections/g/campaign', {
      candidate: 'P',
      ttlMs: 10000,
      value: 'p-addr',
    })
  ).json();
  t.match(p, {
    group: 'g',
    candidate: 'P',
    elected: true,
    leader: { candidate: 'P', value: 'p-addr' },
  });
  t.type(p.fencingToken, 'number');
  const qP = send(h.app, 'POST', '/v1/elections/g/campaign', {
    candidate: 'Q',
    ttlMs: 10000,
    waitMs: 5000,
  });
  const obsP = h.app.inject({
    method: 'GET',
    url: `/v1/elections/g/observe?afterToken=${p.fencingToken}&timeoutMs=5000`,
  });
  await new Promise((r) => setTimeout(r, 20));
  const notLeader = await send(h.app, 'POST', '/v1/elections/g/proclaim', {
    candidate: 'Q',
    fencingToken: p.fencingToken,
    value: 1,
  });
  t.equal(notLeader.statusCode, 409);
  t.equal(notLeader.json().error.code, 'not_holder');
  const pr = await send(h.app, 'POST', '/v1/elections/g/proclaim', {
    candidate: 'P',
    fencingToken: p.fencingToken,
    value: 'v2',
  });
  t.match(pr.json(), {
    group: 'g',
    leader: { candidate: 'P', value: 'v2', fencingToken: p.fencingToken },
  });
  const rn = await send(h.app, 'POST', '/v1/elections/g/renew', { candidate: 'P' });
  t.equal(rn.statusCode, 200);
  t.equal(rn.json().elected, true);
  const rs = await send(h.app, 'POST', '/v1/elections/g/resign', { candidate: 'P' });
  t.same(rs.json(), { group: 'g', resigned: true });
  const q = await qP;
  t.match(q.json(), { candidate: 'Q', elected: true });
  t.ok(q.json().fencingToken > p.fencingToken);
  const obs = await obsP;
  t.match(obs.json(), { changed: true, leader: { candidate: 'Q' } });
  const unknown = await send(h.app, 'POST', '/v1/elections/g/resign', { candidate: 'nobody' });
  t.equal(unknown.statusCode, 409);
  t.equal(unknown.json().error.code, 'not_holder');
});

t.test('campaign waitMs that runs out answers elected:false', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  await send(h.app, 'POST', '/v1/elections/g/campaign', { candidate: 'P', ttlMs: 10000 });
  const q = await send(h.app, 'POST', '/v1/elections/g/campaign', {
    candidate: 'Q',
    ttlMs: 10000,
    waitMs: 60,
  });
  t.equal(q.statusCode, 200);
  t.match(q.json(), { candidate: 'Q', elected: false, leader: { candidate: 'P' } });
});

t.test('fence check and fenced KV writes', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const never = await send(h.app, 'POST', '/v1/fence/check', { lease: 'L', fencingToken: 5 });
  t.same(never.json(), { valid: false, current: null });
  const a = (
    await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 10000 })
  ).json();
  t.same(
    (
      await send(h.app, 'POST', '/v1/fence/check', { lease: 'L', fencingToken: a.fencingToken })
    ).json(),
    { valid: true, current: a.fencingToken },
  );
  const put = await send(h.app, 'PUT', '/v1/kv/k1', {
    value: { n: 1 },
    fence: { lease: 'L', fencingToken: a.fencingToken },
  });
  t.equal(put.statusCode, 200);
  t.type(put.json().revision, 'number');
  const stale = await send(h.app, 'PUT', '/v1/kv/k1', {
    value: 2,
    fence: { lease: 'L', fencingToken: a.fencingToken - 1 },
  });
  t.equal(stale.statusCode, 409);
  t.equal(stale.json().error.code, 'stale_token');
  const got = await h.app.inject({ method: 'GET', url: '/v1/kv/k1' });
  t.same(got.json(), { key: 'k1', value: { n: 1 }, revision: put.json().revision });
  const create = await send(h.app, 'PUT', '/v1/kv/k1', { value: 3, ifRevision: 0 });
  t.equal(create.statusCode, 409);
  t.equal(create.json().error.code, 'revision_mismatch');
  const del = await send(h.app, 'DELETE', '/v1/kv/k1');
  t.same(del.json(), { key: 'k1', deleted: true });
  t.equal((await h.app.inject({ method: 'GET', url: '/v1/kv/k1' })).statusCode, 404);
  const big = await send(h.app, 'PUT', '/v1/kv/big', { value: 'x'.repeat(70_000) });
  t.equal(big.statusCode, 413);
  t.equal(big.json().error.code, 'payload_too_large');
});

t.test('idempotency: replay returns the first answer, a different body gets 422', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const key = { 'idempotency-key': 'k-1' };
  const first = await send(
    h.app,
    'POST',
    '/v1/leases/i/acquire',
    { holder: 'A', ttlMs: 5000 },
    key,
  );
  const other = await send(h.app, 'POST', '/v1/leases/i/acquire', { holder: 'B', ttlMs: 5000 });
  t.equal(other.statusCode, 409);
  const replay = await send(
    h.app,
    'POST',
    '/v1/leases/i/acquire',
    { ttlMs: 5000, holder: 'A' },
    key,
  );
  t.equal(replay.statusCode, first.statusCode);
  t.same(replay.json(), first.json());
  const k2 = { 'idempotency-key': 'k-2' };
  const held1 = await send(h.app, 'POST', '/v1/leases/i/acquire', { holder: 'C', ttlMs: 5000 }, k2);
  await send(h.app, 'POST', '/v1/leases/i/release', {
    holder: 'A',
    fencingToken: first.json().fencingToken,
  });
  const held2 = await send(h.app, 'POST', '/v1/leases/i/acquire', { holder: 'C', ttlMs: 5000 }, k2);
  t.equal(held2.statusCode, 409, 'a replayed 409 stays a 409 even though the lease is now free');
  t.same(held2.json(), held1.json());
  const reused = await send(
    h.app,
    'POST',
    '/v1/leases/i/acquire',
    { holder: 'A', ttlMs: 6000 },
    key,
  );
  t.equal(reused.statusCode, 422);
  t.equal(reused.json().error.code, 'idempotency_key_reused');
  const otherRoute = await send(
    h.app,
    'POST',
    '/v1/leases/j/acquire',
    { holder: 'A', ttlMs: 5000 },
    key,
  );
  t.equal(otherRoute.statusCode, 422);
});

t.test('cluster, health, readiness, metrics, docs', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const c = (await h.app.inject({ method: 'GET', url: '/v1/cluster' })).json();
  t.match(c, { id: 'n1', leader: 'n1' });
  t.same(
    c.members.map((m: { id: string; role: string; httpAddress: string }) => [
      m.id,
      m.role,
      m.httpAddress,
    ]),
    [
      ['n1', 'leader', '127.0.0.1:7001'],
      ['n2', 'follower', '127.0.0.1:7002'],
      ['n3', 'follower', '127.0.0.1:7003'],
    ],
  );
  t.equal((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  t.equal((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  await send(h.app, 'POST', '/v1/leases/m/acquire', { holder: 'A', ttlMs: 5000 });
  const m = await h.app.inject({ method: 'GET', url: '/metrics' });
  t.match(m.body, /tenure_raft_term 1/);
  t.match(m.body, /tenure_live_leases 1/);
  t.match(
    m.body,
    /tenure_http_request_seconds_count\{method="POST",route="\/v1\/leases\/:name\/acquire",status="200"\} 1/,
  );
  const docs = await h.app.inject({ method: 'GET', url: '/docs/json' });
  t.equal(docs.statusCode, 200);
  t.ok(docs.json().paths['/v1/leases/{name}/acquire'], 'OpenAPI lists the acquire route');
  t.equal((await h.app.inject({ method: 'GET', url: '/docs' })).statusCode < 400, true);
  h.raft.setRole('follower', null);
  const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
  t.equal(ready.statusCode, 503);
});

// Proves every docs/api.md route works through every node of a real three-process cluster (followers forward to the leader).
import t from 'tap';
import { LocalCluster } from '../support/cluster.js';

t.test('every route through every node', async (t) => {
  const c = await LocalCluster.start();
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  for (const node of c.nodes) {
    const id = node.id;
    const L = `lease-${id}`;
    const a = await c.request(id, 'POST', `/v1/leases/${L}/acquire`, {
      holder: `h-${id}`,
      ttlMs: 30000,
    });
    t.equal(a.status, 200, `${id}: acquire`);
    t.equal(a.headers['tenure-leader'], leader, `${id}: Tenure-Leader header`);
    const tok = a.body.fencingToken as number;
    t.equal(
      (
        await c.request(id, 'POST', `/v1/leases/${L}/renew`, {
          holder: `h-${id}`,
          fencingToken: tok,
        })
      ).status,
      200,
      `${id}: renew`,
    );
    const g = await c.request(id, 'GET', `/v1/leases/${L}`);
    t.match(g.body, { name: L, holder: `h-${id}`, fencingToken: tok }, `${id}: get`);
    const stale = await c.request(id, 'GET', `/v1/leases/${L}?consistency=stale`);
    t.equal(stale.headers['tenure-stale'], 'true', `${id}: stale read`);
    const list = await c.request(id, 'GET', `/v1/leases?prefix=lease-${id}`);
    t.equal(list.body.leases.length, 1, `${id}: list`);
    const w = await c.request(id, 'GET', `/v1/leases/${L}/watch?afterToken=${tok}&timeoutMs=100`);
    t.match(w.body, { changed: false, fencingToken: tok }, `${id}: watch times out unchanged`);
    t.same(
      (await c.request(id, 'POST', '/v1/fence/check', { lease: L, fencingToken: tok })).body,
      { valid: true, current: tok },
      `${id}: fence check`,
    );
    const put = await c.request(id, 'PUT', `/v1/kv/k-${id}`, {
      value: { by: id },
      fence: { lease: L, fencingToken: tok },
    });
    t.equal(put.status, 200, `${id}: fenced put`);
    t.same(
      (await c.request(id, 'GET', `/v1/kv/k-${id}`)).body,
      { key: `k-${id}`, value: { by: id }, revision: put.body.revision },
      `${id}: kv get`,
    );
    t.equal(
      (await c.request(id, 'DELETE', `/v1/kv/k-${id}`, { fence: { lease: L, fencingToken: tok } }))
        .status,
      200,
      `${id}: fenced delete`,
    );
    t.same(
      (
        await c.request(id, 'POST', `/v1/leases/${L}/release`, {
          holder: `h-${id}`,
          fencingToken: tok,
        })
      ).body,
      { name: L, released: true },
      `${id}: release`,
    );
    const G = `group-${id}`;
    const camp = await c.request(id, 'POST', `/v1/elections/${G}/campaign`, {
      candidate: `c-${id}`,
      ttlMs: 30000,
      value: 1,
    });
    t.match(camp.body, { elected: true }, `${id}: campaign`);
    t.equal(
      (await c.request(id, 'POST', `/v1/elections/${G}/renew`, { candidate: `c-${id}` })).status,
      200,
      `${id}: election renew`,
    );
    t.equal(
      (
        await c.request(id, 'POST', `/v1/elections/${G}/proclaim`, {
          candidate: `c-${id}`,
          fencingToken: camp.body.fencingToken,
          value: 2,
        })
      ).status,
      200,
      `${id}: proclaim`,
    );
    const ev = await c.request(id, 'GET', `/v1/elections/${G}`);
    t.match(ev.body, { leader: { candidate: `c-${id}`, value: 2 } }, `${id}: election get`);
    const ob = await c.request(
      id,
      'GET',
      `/v1/elections/${G}/observe?afterRevision=${ev.body.revision}&timeoutMs=100`,
    );
    t.equal(ob.body.changed, false, `${id}: observe`);
    t.equal(
      (await c.request(id, 'POST', `/v1/elections/${G}/resign`, { candidate: `c-${id}` })).status,
      200,
      `${id}: resign`,
    );
    const cl = await c.request(id, 'GET', '/v1/cluster');
    t.equal(cl.body.leader, leader, `${id}: cluster view`);
    t.equal(cl.body.members.length, 3);
    t.equal((await c.request(id, 'GET', '/readyz')).status, 200, `${id}: ready`);
    t.equal((await c.request(id, 'GET', '/healthz')).status, 200);
    t.match((await c.request(id, 'GET', '/metrics')).body, /tenure_raft_commit_index/);
    t.equal((await c.request(id, 'GET', '/docs/json')).status, 200);
  }
  const bad = await c.request('n1', 'POST', '/v1/leases/a%2Fb/acquire', {
    holder: 'x',
    ttlMs: 1000,
  });
  t.equal(bad.status, 400);
  t.equal((await c.request('n2', 'GET', '/nope')).body.error.code, 'not_found');
});

t.test('idempotent replay through another node, and leadership transfer', async (t) => {
  const c = await LocalCluster.start();
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  const followers = c.nodes.map((n) => n.id).filter((id) => id !== leader);
  const key = { 'idempotency-key': 'once-1' };
  const first = await c.request(
    followers[0]!,
    'POST',
    '/v1/leases/I/acquire',
    { holder: 'A', ttlMs: 30000 },
    key,
  );
  const second = await c.request(
    followers[1]!,
    'POST',
    '/v1/leases/I/acquire',
    { holder: 'A', ttlMs: 30000 },
    key,
  );
  t.equal(second.status, first.status);
  t.same(second.body, first.body);
  const to = followers[0]!;
  const tr = await c.request(followers[1]!, 'POST', '/v1/cluster/transfer-leadership', { to });
  t.equal(tr.status, 200);
  t.equal(tr.body.leader, to);
  t.equal(await c.waitForLeader(), to);
  const g = await c.request(leader, 'GET', '/v1/leases/I');
  t.equal(g.body.fencingToken, first.body.fencingToken, 'the lease survives the transfer');
});

t.test(
  'SIGTERM on the leader hands leadership over and exits 0; the node restarts from its data',
  async (t) => {
    const c = await LocalCluster.start();
    t.teardown(() => c.teardown());
    const leader = await c.waitForLeader();
    const a = await c.request(leader, 'POST', '/v1/leases/G/acquire', {
      holder: 'A',
      ttlMs: 60000,
    });
    const code = await c.stop(leader);
    t.equal(code, 0, 'graceful exit');
    const next = await c.waitForLeader();
    t.not(next, leader);
    await c.restart(leader);
    const v = await c.request(leader, 'GET', '/v1/leases/G');
    t.equal(v.body.fencingToken, a.body.fencingToken);
  },
);

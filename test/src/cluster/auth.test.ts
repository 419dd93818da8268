// Proves auth on a real three-process cluster started with --auth and TENURE_ROOT_TOKEN: root is bootstrapped, tokens work through every node (followers forward the bearer), a revocation is refused on every node once that node applied it, another token cannot renew or release a grant, caps answer 429 with Retry-After, a lease whose owner token was revoked still expires, and no secret ever reaches a node's log.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { LocalCluster } from '../support/cluster.js';

const ROOT = 'root-secret-never-logged-7f3a9c';

t.test('auth on a real cluster', async (t) => {
  const c = await LocalCluster.start({
    extraArgs: ['--auth'],
    env: { TENURE_ROOT_TOKEN: ROOT },
    token: ROOT,
    logLevel: 'info',
  });
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  const ids = c.nodes.map((n) => n.id);
  const follower = ids.find((id) => id !== leader)!;
  const bearer = (s: string): Record<string, string> => ({ authorization: `Bearer ${s}` });

  t.equal((await c.request(leader, 'GET', '/v1/cluster', undefined, bearer('nope'))).status, 401);
  const role = await c.request(follower, 'PUT', '/v1/auth/roles/locks', {
    rules: [{ kinds: ['lease'], prefix: '', actions: ['write'] }],
  });
  t.equal(role.status, 200, 'an admin call through a follower is forwarded with its bearer');
  const secrets: string[] = [ROOT];
  const mint = async (name: string, quota?: object): Promise<Record<string, string>> => {
    const r = await c.request(follower, 'POST', '/v1/auth/tokens', {
      name,
      roles: ['locks'],
      ...(quota === undefined ? {} : { quota }),
    });
    t.equal(r.status, 200, `create ${name}: ${JSON.stringify(r.body)}`);
    secrets.push(r.body.secret as string);
    return bearer(r.body.secret as string);
  };
  const a = await mint('a');
  const b = await mint('b');
  const capped = await mint('capped', { leasesMax: 1 });

  // Ownership: b cannot renew or release a's grant, through any node.
  const g = await c.request(
    follower,
    'POST',
    '/v1/leases/L/acquire',
    { holder: 'A', ttlMs: 60_000 },
    a,
  );
  t.equal(g.status, 200);
  const grant = { holder: 'A', fencingToken: g.body.fencingToken };
  for (const id of ids) {
    const r = await c.request(id, 'POST', '/v1/leases/L/renew', grant, b);
    t.equal(r.status, 403, `${id}: another token's renew is forbidden`);
    t.equal(r.body.error.code, 'forbidden');
  }
  t.equal((await c.request(leader, 'POST', '/v1/leases/L/release', grant, a)).status, 200);

  // Caps: a second live lease of `capped` is refused with Retry-After.
  t.equal(
    (
      await c.request(
        leader,
        'POST',
        '/v1/leases/c1/acquire',
        { holder: 'C', ttlMs: 60_000 },
        capped,
      )
    ).status,
    200,
  );
  const over = await c.request(
    follower,
    'POST',
    '/v1/leases/c2/acquire',
    { holder: 'C', ttlMs: 60_000 },
    capped,
  );
  t.equal(over.status, 429);
  t.equal(over.body.error.code, 'resource_exhausted');
  t.ok(Number(over.headers['retry-after']) >= 1);

  // BC-43: a's lease outlives a's token only until it expires; expiry needs no credential.
  const short = await c.request(
    leader,
    'POST',
    '/v1/leases/short/acquire',
    { holder: 'A', ttlMs: 2000 },
    a,
  );
  t.equal(short.status, 200);

  // Revocation: once a node applied the revoking entry, it refuses the token.
  const del = await c.request(follower, 'DELETE', '/v1/auth/tokens/a');
  t.same(del.body, { name: 'a', revoked: true });
  const committed = (await c.clusterView(leader, 30_000))!.commitIndex;
  for (const id of ids) {
    for (;;) {
      const v = await c.clusterView(id, 30_000);
      if (v !== null && v.appliedIndex >= committed) break;
      await new Promise((r) => setImmediate(r));
    }
    const r = await c.request(id, 'GET', '/v1/cluster', undefined, a);
    t.equal(r.status, 401, `${id}: the revoked token is refused`);
  }
  const taken = await c.request(leader, 'POST', '/v1/leases/short/acquire', {
    holder: 'R',
    ttlMs: 60_000,
    waitMs: 60_000,
  });
  t.equal(taken.status, 200, 'the revoked owner’s lease expired and the waiter got it');
  t.ok(taken.body.fencingToken > short.body.fencingToken);

  for (const node of c.nodes) {
    const log = readFileSync(node.logFile, 'utf8');
    t.ok(log.length > 0, `${node.id} wrote a log`);
    for (const s of secrets) t.notOk(log.includes(s), `${node.id}: no secret in the log`);
  }
});

// Proves the auth layer through buildApp (app.inject, fake Raft): 401 without or with a bad token on every route family, 403 when roles do not cover the route (admin-only families included), secrets shown once and never listed, ownership refusals, per-token quotas as 429 with Retry-After, revocation taking effect at once, and nothing changed with auth off.
import t from 'tap';
import { createRootToken, harness, send, type Harness } from './fixtures/harness.js';

const ROOT = 'root-secret-for-tests-0123456789';

async function authHarness(args: string[] = []): Promise<Harness> {
  const h = await harness(['--auth', ...args]);
  await createRootToken(h, ROOT);
  return h;
}

const bearer = (secret: string): Record<string, string> => ({ authorization: `Bearer ${secret}` });

/** One request of every route family: [method, url, body]. */
const FAMILIES: readonly [string, string, unknown][] = [
  ['POST', '/v1/leases/jobs/acquire', { holder: 'A', ttlMs: 5000 }],
  ['GET', '/v1/leases', undefined],
  ['POST', '/v1/elections/g/campaign', { candidate: 'A', ttlMs: 5000 }],
  ['GET', '/v1/kv/k', undefined],
  ['POST', '/v1/fence/check', { lease: 'l', fencingToken: 1 }],
  ['GET', '/v1/cluster', undefined],
  ['GET', '/v1/cluster/state', undefined],
  ['POST', '/v1/cluster/transfer-leadership', {}],
  ['GET', '/metrics', undefined],
  ['GET', '/v1/auth/tokens', undefined],
  ['PUT', '/v1/auth/roles/r', { rules: [] }],
  ['GET', '/v1/nothing-here', undefined],
];

function inject(h: Harness, method: string, url: string, body: unknown, headers = {}) {
  return h.app.inject({
    method: method as 'GET',
    url,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

t.test('401 unauthorized on every route family without a token or with a bad one', async (t) => {
  const h = await authHarness();
  t.teardown(h.close);
  for (const [method, url, body] of FAMILIES) {
    for (const headers of [
      {},
      bearer('wrong'),
      bearer('tnr.root.00'),
      { authorization: 'Basic x' },
    ]) {
      const r = await inject(h, method, url, body, headers);
      t.equal(r.statusCode, 401, `${method} ${url} ${JSON.stringify(headers)}`);
      t.equal(r.json().error.code, 'unauthorized');
    }
  }
  for (const url of ['/healthz', '/readyz', '/v1/cluster/members/n9']) {
    const r = await h.app.inject({ method: 'GET', url });
    t.not(r.statusCode, 401, `${url} needs no token`);
  }
  const members = await h.app.inject({ method: 'GET', url: '/v1/cluster/members' });
  t.equal(members.statusCode, 401, 'the member list itself still needs a token');
});

t.test(
  'roles: 403 forbidden outside the rules, admin-only families; secrets shown once',
  async (t) => {
    const h = await authHarness();
    t.teardown(h.close);
    const admin = bearer(ROOT);
    const role = await send(
      h.app,
      'PUT',
      '/v1/auth/roles/jobs',
      { rules: [{ kinds: ['lease'], prefix: 'jobs', actions: ['write'] }] },
      admin,
    );
    t.equal(role.statusCode, 200, role.body);
    const slash = await send(
      h.app,
      'PUT',
      '/v1/auth/roles/slashed',
      { rules: [{ kinds: ['lease'], prefix: 'jobs/', actions: ['write'] }] },
      admin,
    );
    t.equal(slash.statusCode, 400, 'a prefix no name can start with is refused');
    t.match(slash.json().error.field, /prefix/);
    const made = await send(
      h.app,
      'POST',
      '/v1/auth/tokens',
      { name: 'worker', roles: ['jobs'] },
      admin,
    );
    t.equal(made.statusCode, 200, made.body);
    const secret = made.json().secret as string;
    t.match(secret, /^tnr\.worker\.[0-9a-f]{64}$/);
    const list = await h.app.inject({ method: 'GET', url: '/v1/auth/tokens', headers: admin });
    t.same(list.json().tokens, [
      { name: 'root', roles: ['admin'], quota: null },
      { name: 'worker', roles: ['jobs'], quota: null },
    ]);
    t.notOk(list.body.includes(secret.slice(-20)), 'never listed');
    const again = await send(
      h.app,
      'POST',
      '/v1/auth/tokens',
      { name: 'worker', roles: [] },
      admin,
    );
    t.equal(again.statusCode, 409);
    t.equal(again.json().error.code, 'already_exists');
    const del = await send(h.app, 'DELETE', '/v1/auth/roles/jobs', undefined, admin);
    t.equal(del.statusCode, 409, 'a role tokens still name is not deleted');
    t.match(del.json().error, {
      code: 'in_use',
      name: 'jobs',
      tokens: ['worker'],
      tokenCount: 1,
      message: /role jobs is named by 1 token\(s\): worker/,
    });

    const w = bearer(secret);
    const expect: Record<string, number> = {
      'POST /v1/leases/jobs/acquire': 200,
      'GET /v1/leases': 403, // prefix '' is wider than the rule's
      'POST /v1/elections/g/campaign': 403,
      'GET /v1/kv/k': 403,
      'POST /v1/fence/check': 403,
      'GET /v1/cluster': 200,
      'GET /v1/cluster/state': 403,
      'POST /v1/cluster/transfer-leadership': 403,
      'GET /metrics': 200,
      'GET /v1/auth/tokens': 403,
      'PUT /v1/auth/roles/r': 403,
      'GET /v1/nothing-here': 404,
    };
    for (const [method, url, body] of FAMILIES) {
      const r = await inject(h, method, url, body, w);
      t.equal(
        r.statusCode,
        expect[`${method} ${url}`],
        `${method} ${url}: ${r.body.slice(0, 120)}`,
      );
      if (r.statusCode === 403) {
        t.equal(r.json().error.code, 'forbidden');
        t.match(r.json().error.message, /admin|may not (read|write)/);
      }
    }
    const scoped = await h.app.inject({ method: 'GET', url: '/v1/leases?prefix=jobs', headers: w });
    t.equal(scoped.statusCode, 200, 'a list inside the prefix is allowed');
  },
);

t.test('ownership: another token is refused whatever it sends; the owner is not', async (t) => {
  const h = await authHarness();
  t.teardown(h.close);
  const admin = bearer(ROOT);
  await send(
    h.app,
    'PUT',
    '/v1/auth/roles/all',
    { rules: [{ kinds: ['lease'], prefix: '', actions: ['write'] }] },
    admin,
  );
  const a = bearer(
    (await send(h.app, 'POST', '/v1/auth/tokens', { name: 'a', roles: ['all'] }, admin)).json()
      .secret,
  );
  const b = bearer(
    (await send(h.app, 'POST', '/v1/auth/tokens', { name: 'b', roles: ['all'] }, admin)).json()
      .secret,
  );
  const g = (
    await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 5000 }, a)
  ).json();
  const body = { holder: 'A', fencingToken: g.fencingToken };
  for (const op of ['renew', 'release']) {
    const r = await send(h.app, 'POST', `/v1/leases/L/${op}`, body, b);
    t.equal(r.statusCode, 403, op);
    t.equal(r.json().error.code, 'forbidden');
    t.match(r.json().error.message, /taken by another token/);
    t.notOk('owner' in r.json().error, 'no owner field: token names are for admins only');
  }
  const steal = await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 5000 }, b);
  t.equal(steal.statusCode, 403, 'renew-by-acquire with the holder string is refused too');
  t.equal((await send(h.app, 'POST', '/v1/leases/L/renew', body, a)).statusCode, 200);
  t.equal((await send(h.app, 'POST', '/v1/leases/L/release', body, a)).statusCode, 200);
});

t.test(
  'quotas: rate per token and lease cap → 429 with Retry-After; root is not limited',
  async (t) => {
    const h = await authHarness();
    t.teardown(h.close);
    const admin = bearer(ROOT);
    await send(
      h.app,
      'PUT',
      '/v1/auth/roles/all',
      { rules: [{ kinds: ['lease'], prefix: '', actions: ['write'] }] },
      admin,
    );
    const slow = bearer(
      (
        await send(
          h.app,
          'POST',
          '/v1/auth/tokens',
          { name: 'slow', roles: ['all'], quota: { requestsPerSecond: 1 } },
          admin,
        )
      ).json().secret,
    );
    const burst = await Promise.all(
      [1, 2, 3, 4].map(() => h.app.inject({ method: 'GET', url: '/v1/leases', headers: slow })),
    );
    const limited = burst.filter((r) => r.statusCode === 429);
    t.ok(limited.length >= 1, 'a burst over 1 request/s is refused');
    t.equal(limited[0]!.json().error.code, 'resource_exhausted');
    t.ok(Number(limited[0]!.headers['retry-after']) >= 1, 'Retry-After in seconds');

    const one = bearer(
      (
        await send(
          h.app,
          'POST',
          '/v1/auth/tokens',
          { name: 'one', roles: ['all'], quota: { leasesMax: 1 } },
          admin,
        )
      ).json().secret,
    );
    t.equal(
      (await send(h.app, 'POST', '/v1/leases/x/acquire', { holder: 'A', ttlMs: 5000 }, one))
        .statusCode,
      200,
    );
    const over = await send(
      h.app,
      'POST',
      '/v1/leases/y/acquire',
      { holder: 'A', ttlMs: 5000 },
      one,
    );
    t.equal(over.statusCode, 429);
    t.equal(over.json().error.code, 'resource_exhausted');
    t.equal(over.headers['retry-after'], '1');
    for (let i = 0; i < 3; i++)
      t.equal(
        (await send(h.app, 'POST', `/v1/leases/r${i}/acquire`, { holder: 'R', ttlMs: 5000 }, admin))
          .statusCode,
        200,
      );
  },
);

t.test(
  'revoking a token refuses it at once; the idempotent replay of a create has no secret',
  async (t) => {
    const h = await authHarness();
    t.teardown(h.close);
    const admin = bearer(ROOT);
    const key = { 'idempotency-key': 'create-tmp', ...admin };
    const first = await send(h.app, 'POST', '/v1/auth/tokens', { name: 'tmp', roles: [] }, key);
    const replay = await send(h.app, 'POST', '/v1/auth/tokens', { name: 'tmp', roles: [] }, key);
    t.type(first.json().secret, 'string');
    t.same(replay.json(), { name: 'tmp', roles: [], quota: null }, 'no secret on a replay');
    const tmp = bearer(first.json().secret);
    t.equal(
      (await h.app.inject({ method: 'GET', url: '/v1/cluster', headers: tmp })).statusCode,
      200,
    );
    const del = await h.app.inject({
      method: 'DELETE',
      url: '/v1/auth/tokens/tmp',
      headers: admin,
    });
    t.same(del.json(), { name: 'tmp', revoked: true });
    const after = await h.app.inject({ method: 'GET', url: '/v1/cluster', headers: tmp });
    t.equal(after.statusCode, 401, 'the verified-token cache does not outlive the revocation');
  },
);

t.test('auth off: no token needed and no owner recorded', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const g = (
    await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 5000 })
  ).json();
  const r = await send(h.app, 'POST', '/v1/leases/L/release', {
    holder: 'A',
    fencingToken: g.fencingToken,
  });
  t.equal(r.statusCode, 200);
});

// Proves with auth on (fake Raft): an open watch stream and open long-polls are authorized against the auth state current when they send — revoking the token ends them with 401 unauthorized, taking the right from its role ends them with 403 forbidden (SSE: a final `error` event in the error shape); the last admin token is never revoked (409 last_admin); Idempotency-Keys are per token; 403s name a session by its id; `admin` cannot be deleted; auth errors name body./params. fields.
import t from 'tap';
import { createRootToken, harness, send, type Harness } from './fixtures/harness.js';
import { changes, openWatch } from './fixtures/sse-reader.js';

const ROOT = 'root-secret-for-tests-0123456789';
const admin = { authorization: `Bearer ${ROOT}` };
const RW = { rules: [{ kinds: ['lease', 'election'], prefix: 'jobs', actions: ['write'] }] };

async function served(): Promise<{ h: Harness; base: string }> {
  const h = await harness(['--auth']);
  await createRootToken(h, ROOT);
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const address = h.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { h, base: `http://127.0.0.1:${address.port}` };
}

async function ok(h: Harness, method: string, url: string, body: unknown, headers = admin) {
  const r = await send(h.app, method, url, body, headers);
  if (r.statusCode !== 200) throw new Error(`${method} ${url}: ${r.statusCode} ${r.body}`);
  return r.json<Record<string, unknown>>();
}

/** A token `name` with role `rw` (created with RW first when missing); its headers. */
async function token(h: Harness, name: string): Promise<Record<string, string>> {
  await ok(h, 'PUT', '/v1/auth/roles/rw', RW);
  const created = await ok(h, 'POST', '/v1/auth/tokens', { name, roles: ['rw'] });
  return { authorization: `Bearer ${String(created['secret'])}` };
}

/** Resolves once a long-poll subscribed to its key (the hub holds one more key than `before`). */
async function waiting(h: Harness, before: number): Promise<void> {
  while (h.hub.watchedKeys() <= before) await new Promise((r) => setImmediate(r));
}

for (const [how, change, code, status] of [
  [
    'the token is revoked',
    (h: Harness) => ok(h, 'DELETE', '/v1/auth/tokens/w1', undefined),
    'unauthorized',
    401,
  ],
  [
    'its role loses the right',
    (h: Harness) => ok(h, 'PUT', '/v1/auth/roles/rw', { rules: [] }),
    'forbidden',
    403,
  ],
] as const) {
  t.test(`open watches and long-polls end when ${how} (${status} ${code})`, {}, async (t) => {
    const { h, base } = await served();
    t.teardown(h.close);
    const w1 = await token(h, 'w1');
    const w = await openWatch(base, '/v1/watch?prefix=jobs.rv&kinds=lease', w1);
    t.teardown(() => w.close());
    t.equal(w.status, 200);
    await ok(h, 'POST', '/v1/leases/jobs.rv/acquire', { holder: 'A', ttlMs: 60_000 }, w1);
    await w.waitFor(() => changes(w.events).length >= 1);

    const before = h.hub.watchedKeys();
    // inject() starts the request only once its answer is asked for (then).
    const lease = Promise.resolve(
      h.app.inject({
        method: 'GET',
        url: '/v1/leases/jobs.rv2/watch?timeoutMs=60000',
        headers: w1,
      }),
    );
    await waiting(h, before);
    const observe = Promise.resolve(
      h.app.inject({
        method: 'GET',
        url: '/v1/elections/jobs.g/observe?timeoutMs=60000',
        headers: w1,
      }),
    );
    await waiting(h, before + 1);

    await change(h);
    const [l, o] = await Promise.all([lease, observe]);
    t.equal(l.statusCode, status, `lease watch: ${l.body}`);
    t.equal(l.json().error.code, code);
    t.equal(o.statusCode, status, `election observe: ${o.body}`);
    t.equal(o.json().error.code, code);

    // The change would have been delivered to an allowed reader: it is not, the stream ended.
    await ok(
      h,
      'POST',
      '/v1/leases/jobs.rv/release',
      { holder: 'A', fencingToken: 1 },
      admin,
    ).catch(() => undefined);
    await ok(h, 'POST', '/v1/leases/jobs.rv3/acquire', { holder: 'B', ttlMs: 60_000 });
    await w.ended;
    const last = w.events[w.events.length - 1]!;
    t.equal(last.event, 'error', 'the stream ends with an error event');
    t.equal((last.data['error'] as { code: string }).code, code);
    t.type((last.data['error'] as { message: string }).message, 'string');
    t.same(
      changes(w.events).map((e) => e.data['name']),
      ['jobs.rv'],
      'nothing after the change was sent',
    );
  });
}

t.test('the last admin token cannot be revoked: 409 last_admin', async (t) => {
  const { h } = await served();
  t.teardown(h.close);
  const r = await send(h.app, 'DELETE', '/v1/auth/tokens/root', undefined, admin);
  t.equal(r.statusCode, 409, r.body);
  t.equal(r.json().error.code, 'last_admin');
  t.match(r.json().error.message, /create another admin token first/);
  const ops = await ok(h, 'POST', '/v1/auth/tokens', { name: 'ops', roles: ['admin'] });
  const opsAuth = { authorization: `Bearer ${String(ops['secret'])}` };
  t.equal(
    (await send(h.app, 'DELETE', '/v1/auth/tokens/root', undefined, opsAuth)).statusCode,
    200,
  );
  const last = await send(h.app, 'DELETE', '/v1/auth/tokens/ops', undefined, opsAuth);
  t.equal(last.json().error.code, 'last_admin');
});

t.test('an Idempotency-Key is per token: another token cannot use it up', async (t) => {
  const { h } = await served();
  t.teardown(h.close);
  const w1 = await token(h, 'w1');
  const w2 = await (async () => {
    const c = await ok(h, 'POST', '/v1/auth/tokens', { name: 'w2', roles: ['rw'] });
    return { authorization: `Bearer ${String(c['secret'])}` };
  })();
  const g = await ok(h, 'POST', '/v1/leases/jobs.i/acquire', { holder: 'A', ttlMs: 60_000 }, w1);
  const body = { holder: 'A', fencingToken: g['fencingToken'] };
  const key = { 'idempotency-key': 'idem-R1' };
  const theirs = await send(h.app, 'POST', '/v1/leases/jobs.i/release', body, { ...w2, ...key });
  t.equal(theirs.statusCode, 403, 'not their grant');
  const mine = await send(h.app, 'POST', '/v1/leases/jobs.i/release', body, { ...w1, ...key });
  t.equal(mine.statusCode, 200, mine.body);
  const again = await send(h.app, 'POST', '/v1/leases/jobs.i/release', body, { ...w1, ...key });
  t.equal(again.statusCode, 200, 'a retry by the same token is replayed');
});

t.test('403 names the session; admin is built in; fields as the rest of the API', async (t) => {
  const { h } = await served();
  t.teardown(h.close);
  const s = await ok(h, 'POST', '/v1/sessions', { name: 'other', ttlMs: 60_000 });
  const w1 = await token(h, 'w1');
  const id = String(s['sessionId']);
  const r = await send(h.app, 'GET', `/v1/sessions/${id}`, undefined, w1);
  t.equal(r.statusCode, 403);
  t.match(r.json().error.message, `may not read session ${id} (named "other")`);
  const unknown = await send(h.app, 'GET', '/v1/sessions/s347', undefined, w1);
  t.match(unknown.json().error.message, 'may not read session s347');

  const del = await send(h.app, 'DELETE', '/v1/auth/roles/admin', undefined, admin);
  t.equal(del.statusCode, 400, del.body);
  t.match(del.json().error, {
    code: 'invalid_argument',
    field: 'params.name',
    message: /admin is built in and cannot be deleted/,
  });
  const put = await send(h.app, 'PUT', '/v1/auth/roles/admin', { rules: [] }, admin);
  t.match(put.json().error, { field: 'params.name', message: /cannot be changed/ });
  const roles = await send(h.app, 'POST', '/v1/auth/tokens', { name: 'x', roles: ['nope'] }, admin);
  t.match(roles.json().error, { code: 'invalid_argument', field: 'body.roles' });
});

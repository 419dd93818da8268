// Proves the session, semaphore, shared-lock, holder-history and revoke routes of docs/api.md through buildApp (app.inject, fake Raft): shapes, every documented error, idempotent retries, and that each answer matches the OpenAPI schema of its status.
import t from 'tap';
import { Ajv } from 'ajv';
import { harness, send, type Harness } from './fixtures/harness.js';

type Res = { statusCode: number; json(): unknown };
type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: object }> }>>;
};

/** Checks answers against the schema the OpenAPI document gives their route and status. */
async function schemaChecker(t: Tap.Test, h: Harness) {
  const doc = (await h.app.inject({ method: 'GET', url: '/docs/json' })).json<Doc>();
  const ajv = new Ajv({ strict: false });
  return <R extends Res>(method: string, path: string, res: R): R => {
    const op = doc.paths[path]?.[method.toLowerCase()];
    const content = op?.responses[String(res.statusCode)]?.content as
      Record<string, { schema: object }> | undefined;
    const schema = content?.['application/json']?.schema;
    if (schema === undefined) t.fail(`${method} ${path} ${res.statusCode}: no documented schema`);
    else
      t.ok(
        ajv.validate(schema, res.json()),
        `${method} ${path} ${res.statusCode}: ${ajv.errorsText(ajv.errors)}`,
      );
    return res;
  };
}

interface ErrorBody {
  error: { code: string; message: string; field?: string; [k: string]: unknown };
}
const errorOf = (res: Res) => (res.json() as ErrorBody).error;

t.test('sessions: create, get, keepalive, end; 404 after; session-bound grants', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const check = await schemaChecker(t, h);
  const c = check(
    'POST',
    '/v1/sessions',
    await send(h.app, 'POST', '/v1/sessions', { ttlMs: 10_000, name: 'worker-1' }),
  );
  t.equal(c.statusCode, 200);
  const { sessionId, ttlMs } = c.json() as { sessionId: string; ttlMs: number };
  t.type(sessionId, 'string');
  t.equal(ttlMs, 10_000);
  const lease = check(
    'POST',
    '/v1/leases/{name}/acquire',
    await send(h.app, 'POST', '/v1/leases/cron/acquire', { holder: 'A', session: sessionId }),
  );
  t.match(lease.json(), { name: 'cron', holder: 'A', ttlMs: null, session: sessionId });
  const permit = check(
    'POST',
    '/v1/semaphores/{name}/acquire',
    await send(h.app, 'POST', '/v1/semaphores/pool/acquire', {
      holder: 'A',
      limit: 2,
      session: sessionId,
    }),
  );
  t.match(permit.json(), { name: 'pool', limit: 2, ttlMs: null, session: sessionId });
  const camp = check(
    'POST',
    '/v1/elections/{group}/campaign',
    await send(h.app, 'POST', '/v1/elections/g/campaign', { candidate: 'A', session: sessionId }),
  );
  t.match(camp.json(), { elected: true, session: sessionId });
  const view = check(
    'GET',
    '/v1/sessions/{sessionId}',
    await h.app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}` }),
  );
  t.match(view.json(), {
    sessionId,
    name: 'worker-1',
    ttlMs: 10_000,
    leases: [{ name: 'cron' }],
    semaphores: [{ name: 'pool' }],
    candidacies: [{ group: 'g' }],
  });
  const leaseView = check(
    'GET',
    '/v1/leases/{name}',
    await h.app.inject({ method: 'GET', url: '/v1/leases/cron' }),
  );
  t.match(leaseView.json(), { holder: 'A', ttlMs: null, session: sessionId });
  const renew = await send(h.app, 'POST', '/v1/leases/cron/renew', {
    holder: 'A',
    fencingToken: (lease.json() as { fencingToken: number }).fencingToken,
  });
  t.equal(renew.statusCode, 200, 'renewing a session-bound grant answers like a keepalive');
  const ka = check(
    'POST',
    '/v1/sessions/{sessionId}/keepalive',
    await send(h.app, 'POST', `/v1/sessions/${sessionId}/keepalive`),
  );
  t.same(ka.json(), { sessionId, ttlMs: 10_000 });
  const end = check(
    'DELETE',
    '/v1/sessions/{sessionId}',
    await send(h.app, 'DELETE', `/v1/sessions/${sessionId}`),
  );
  t.same(end.json(), { sessionId, ended: true });
  t.equal(
    (await h.app.inject({ method: 'GET', url: '/v1/leases/cron' })).statusCode,
    404,
    'its lease ended',
  );
  t.equal(
    (await h.app.inject({ method: 'GET', url: '/v1/semaphores/pool' })).statusCode,
    404,
    'its permit ended',
  );
  const g = (await h.app.inject({ method: 'GET', url: '/v1/elections/g' })).json() as {
    leader: unknown;
  };
  t.equal(g.leader, null, 'its candidacy was withdrawn');
  const hist = check(
    'GET',
    '/v1/leases/{name}/history',
    await h.app.inject({ method: 'GET', url: '/v1/leases/cron/history' }),
  );
  t.match(hist.json(), {
    name: 'cron',
    grants: [{ holder: 'A', session: sessionId, endReason: 'session_ended' }],
  });
  for (const res of [
    check(
      'POST',
      '/v1/sessions/{sessionId}/keepalive',
      await send(h.app, 'POST', `/v1/sessions/${sessionId}/keepalive`),
    ),
    check(
      'GET',
      '/v1/sessions/{sessionId}',
      await h.app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}` }),
    ),
    check(
      'DELETE',
      '/v1/sessions/{sessionId}',
      await send(h.app, 'DELETE', `/v1/sessions/${sessionId}`),
    ),
    await send(h.app, 'POST', '/v1/leases/x/acquire', { holder: 'A', session: sessionId }),
  ]) {
    t.equal(res.statusCode, 404);
    t.equal(errorOf(res).code, 'not_found');
  }
  const unknown = await h.app.inject({ method: 'GET', url: '/v1/sessions/s999999' });
  t.equal(unknown.statusCode, 404);
});

t.test(
  'routes that take no body: any field is 400 naming it; an empty JSON body is none',
  async (t) => {
    const h = await harness();
    t.teardown(h.close);
    const created = await send(h.app, 'POST', '/v1/sessions', { ttlMs: 10_000 });
    const { sessionId } = created.json() as { sessionId: string };
    const inject = (method: 'POST' | 'DELETE', url: string, payload: string) =>
      h.app.inject({ method, url, payload, headers: { 'content-type': 'application/json' } });
    const keepalive = `/v1/sessions/${sessionId}/keepalive`;
    for (const [method, url, payload, field] of [
      ['POST', keepalive, '{"ttlMs":5}', 'body.ttlMs'],
      ['POST', keepalive, '{"bogus":true}', 'body.bogus'],
      ['DELETE', `/v1/sessions/${sessionId}`, '{"force":1}', 'body.force'],
      ['POST', keepalive, '[1]', 'body'],
    ] as const) {
      const r = await inject(method, url, payload);
      t.equal(r.statusCode, 400, `${method} ${payload}`);
      t.match(errorOf(r), { code: 'invalid_argument', field });
    }
    t.equal((await inject('POST', keepalive, '')).statusCode, 200, 'keepalive: empty JSON body');
    t.equal((await inject('POST', keepalive, '{}')).statusCode, 200, 'keepalive: {}');
    t.equal((await inject('POST', '/v1/leases/none/revoke', '')).statusCode, 200, 'revoke: empty');
    t.equal(
      (await inject('DELETE', `/v1/sessions/${sessionId}`, '')).statusCode,
      200,
      'end: empty',
    );
  },
);

t.test('ttlMs and session: exactly one, else 400 naming the field', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const check = await schemaChecker(t, h);
  const s = (await send(h.app, 'POST', '/v1/sessions', { ttlMs: 5000 })).json() as {
    sessionId: string;
  };
  const cases: [string, string, object, string][] = [
    ['/v1/leases/{name}/acquire', '/v1/leases/L/acquire', { holder: 'A' }, 'body.ttlMs'],
    [
      '/v1/leases/{name}/acquire',
      '/v1/leases/L/acquire',
      { holder: 'A', ttlMs: 5000, session: s.sessionId },
      'body.session',
    ],
    [
      '/v1/leases/{name}/acquire',
      '/v1/leases/L/acquire',
      { holder: 'A', session: s.sessionId, maxHoldMs: 5000 },
      'body.maxHoldMs',
    ],
    [
      '/v1/semaphores/{name}/acquire',
      '/v1/semaphores/S/acquire',
      { holder: 'A', limit: 1 },
      'body.ttlMs',
    ],
    [
      '/v1/semaphores/{name}/acquire',
      '/v1/semaphores/S/acquire',
      { holder: 'A', limit: 1, ttlMs: 5000, session: s.sessionId },
      'body.session',
    ],
    [
      '/v1/elections/{group}/campaign',
      '/v1/elections/g/campaign',
      { candidate: 'A' },
      'body.ttlMs',
    ],
    [
      '/v1/elections/{group}/campaign',
      '/v1/elections/g/campaign',
      { candidate: 'A', ttlMs: 5000, session: s.sessionId },
      'body.session',
    ],
    [
      '/v1/semaphores/{name}/acquire',
      '/v1/semaphores/S/acquire',
      { holder: 'A', limit: 0, ttlMs: 5000 },
      'body.limit',
    ],
    [
      '/v1/semaphores/{name}/acquire',
      '/v1/semaphores/S/acquire',
      { holder: 'A', limit: '2', ttlMs: 5000 },
      'body.limit',
    ],
    [
      '/v1/leases/{name}/acquire',
      '/v1/leases/L/acquire',
      { holder: 'A', ttlMs: 5000, mode: 'read' },
      'body.mode',
    ],
    ['/v1/sessions', '/v1/sessions', { ttlMs: 1 }, 'body.ttlMs'],
    ['/v1/sessions', '/v1/sessions', { ttlMs: 5000, extra: 1 }, 'body.extra'],
    ['/v1/leases/{name}/revoke', '/v1/leases/L/revoke', { fencingToken: 'x' }, 'body.fencingToken'],
  ];
  for (const [route, url, body, field] of cases) {
    const res = check('POST', route, await send(h.app, 'POST', url, body));
    t.equal(res.statusCode, 400, `${url} ${JSON.stringify(body)}`);
    t.equal(errorOf(res).field, field, `${url} ${JSON.stringify(body)} names ${field}`);
    t.match(errorOf(res).message, field);
  }
  const badId = await h.app.inject({ method: 'GET', url: '/v1/sessions/a%2Fb' });
  t.equal(badId.statusCode, 400);
  t.equal(errorOf(badId).field, 'params.sessionId');
  const hist = await h.app.inject({ method: 'GET', url: '/v1/leases/L/history?limit=101' });
  t.equal(hist.statusCode, 400);
  t.equal(errorOf(hist).field, 'query.limit');
  t.equal(
    (
      await send(h.app, 'POST', '/v1/semaphores/S/acquire', {
        holder: 'A',
        limit: 1,
        session: 'nope',
      })
    ).statusCode,
    404,
  );
});

t.test(
  'semaphores: limit, held, limit_mismatch, get, renew, release, FIFO wait, fencing',
  async (t) => {
    const h = await harness();
    t.teardown(h.close);
    const check = await schemaChecker(t, h);
    const route = '/v1/semaphores/{name}';
    const acquire = async (holder: string, extra: object = {}) =>
      check(
        'POST',
        `${route}/acquire`,
        await send(h.app, 'POST', '/v1/semaphores/pool/acquire', {
          holder,
          limit: 2,
          ttlMs: 10_000,
          ...extra,
        }),
      );
    const a = (await acquire('A')).json() as { fencingToken: number };
    const b = (await acquire('B')).json() as { fencingToken: number };
    t.ok(b.fencingToken > a.fencingToken, 'each permit gets a higher token');
    const again = (await acquire('A')).json() as { fencingToken: number };
    t.equal(again.fencingToken, a.fencingToken, 'a second acquire by a holder renews its permit');
    const full = await acquire('C');
    t.equal(full.statusCode, 409);
    t.match(errorOf(full), { code: 'held', limit: 2 });
    const mismatch = await acquire('C', { limit: 3 });
    t.equal(mismatch.statusCode, 409);
    t.match(errorOf(mismatch), { code: 'limit_mismatch', limit: 2 });
    const view = check(
      'GET',
      route,
      await h.app.inject({ method: 'GET', url: '/v1/semaphores/pool' }),
    );
    t.match(view.json(), {
      name: 'pool',
      limit: 2,
      waiters: 0,
      holders: [
        { holder: 'A', fencingToken: a.fencingToken },
        { holder: 'B', fencingToken: b.fencingToken },
      ],
    });
    const fence = await send(h.app, 'POST', '/v1/fence/check', {
      semaphore: 'pool',
      fencingToken: a.fencingToken,
    });
    t.match(fence.json(), { valid: true }, 'a live permit token is valid');
    const put = await send(h.app, 'PUT', '/v1/kv/out', {
      value: 1,
      fence: { semaphore: 'pool', fencingToken: b.fencingToken },
    });
    t.equal(put.statusCode, 200, 'a fenced write with a live permit commits');
    const two = await send(h.app, 'POST', '/v1/fence/check', {
      lease: 'x',
      semaphore: 'pool',
      fencingToken: 1,
    });
    t.equal(two.statusCode, 400);
    const renew = check(
      'POST',
      `${route}/renew`,
      await send(h.app, 'POST', '/v1/semaphores/pool/renew', {
        holder: 'A',
        fencingToken: a.fencingToken,
      }),
    );
    t.match(renew.json(), { holder: 'A', fencingToken: a.fencingToken, limit: 2, ttlMs: 10_000 });
    const waitC = acquire('C', { waitMs: 20_000 });
    await new Promise((r) => setTimeout(r, 30));
    const queued = (await h.app.inject({ method: 'GET', url: '/v1/semaphores/pool' })).json() as {
      waiters: number;
    };
    t.equal(queued.waiters, 1, 'the waiter is counted');
    const rel = check(
      'POST',
      `${route}/release`,
      await send(h.app, 'POST', '/v1/semaphores/pool/release', {
        holder: 'A',
        fencingToken: a.fencingToken,
      }),
    );
    t.same(rel.json(), { name: 'pool', released: true });
    const c = await waitC;
    t.equal(c.statusCode, 200, 'the waiter gets the freed permit');
    t.ok((c.json() as { fencingToken: number }).fencingToken > b.fencingToken);
    const stale = check(
      'POST',
      `${route}/renew`,
      await send(h.app, 'POST', '/v1/semaphores/pool/renew', {
        holder: 'A',
        fencingToken: a.fencingToken,
      }),
    );
    t.equal(stale.statusCode, 409);
    t.ok(['not_holder', 'lease_expired'].includes(errorOf(stale).code));
    const staleWrite = await send(h.app, 'PUT', '/v1/kv/out', {
      value: 2,
      fence: { semaphore: 'pool', fencingToken: a.fencingToken },
    });
    t.equal(errorOf(staleWrite).code, 'stale_token', "a released permit's token is fenced");
    const none = check(
      'GET',
      route,
      await h.app.inject({ method: 'GET', url: '/v1/semaphores/never' }),
    );
    t.equal(none.statusCode, 404);
    const timedOut = await send(h.app, 'POST', '/v1/semaphores/pool/acquire', {
      holder: 'D',
      limit: 2,
      ttlMs: 10_000,
      waitMs: 200,
    });
    t.equal(timedOut.statusCode, 409, 'a wait that runs out answers held');
    t.match(errorOf(timedOut), { code: 'held', limit: 2, live: 2 });
    t.notOk('holders' in errorOf(timedOut), 'the count is `live`, not `holders`');
  },
);

t.test(
  'shared locks: many shared holders, exclusive excluded, GET shows the shared shape',
  async (t) => {
    const h = await harness();
    t.teardown(h.close);
    const check = await schemaChecker(t, h);
    const acquire = async (holder: string, body: object) =>
      check(
        'POST',
        '/v1/leases/{name}/acquire',
        await send(h.app, 'POST', '/v1/leases/cfg/acquire', { holder, ttlMs: 10_000, ...body }),
      );
    const r1 = await acquire('R1', { mode: 'shared' });
    t.match(r1.json(), { holder: 'R1', mode: 'shared' });
    const r2 = await acquire('R2', { mode: 'shared' });
    t.equal(r2.statusCode, 200);
    const w = await acquire('W', { mode: 'exclusive' });
    t.equal(w.statusCode, 409);
    t.equal(errorOf(w).code, 'held');
    const timedOut = await acquire('W', { waitMs: 200 });
    t.same(
      [
        timedOut.statusCode,
        errorOf(timedOut).code,
        errorOf(timedOut).holder,
        errorOf(timedOut).mode,
      ],
      [409, 'held', 'R1', 'shared'],
      'a wait that ran out says what the immediate 409 says',
    );
    const upgrade = await acquire('R1', { mode: 'exclusive' });
    t.equal(upgrade.statusCode, 409, 'a shared holder is never answered as exclusive');
    t.match(errorOf(upgrade), {
      code: 'grant_mismatch',
      holder: 'R1',
      mode: 'shared',
      session: null,
    });
    const view = check(
      'GET',
      '/v1/leases/{name}',
      await h.app.inject({ method: 'GET', url: '/v1/leases/cfg' }),
    );
    t.match(view.json(), {
      name: 'cfg',
      mode: 'shared',
      holders: [{ holder: 'R1' }, { holder: 'R2' }],
    });
    const wWait = acquire('W', { waitMs: 20_000 });
    await new Promise((r) => setTimeout(r, 30));
    const r3 = await acquire('R3', { mode: 'shared' });
    t.equal(r3.statusCode, 409, 'a waiting exclusive acquire blocks a later shared one');
    for (const r of [r1, r2]) {
      const g = r.json() as { holder: string; fencingToken: number };
      await send(h.app, 'POST', '/v1/leases/cfg/release', {
        holder: g.holder,
        fencingToken: g.fencingToken,
      });
    }
    const wg = await wWait;
    t.equal(wg.statusCode, 200, 'the exclusive waiter is granted once the readers left');
    t.notOk('mode' in (wg.json() as object), 'an exclusive grant has no mode field');
  },
);

t.test('history and revoke for leases, semaphores and elections', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const check = await schemaChecker(t, h);
  const never = check(
    'GET',
    '/v1/leases/{name}/history',
    await h.app.inject({ method: 'GET', url: '/v1/leases/never/history' }),
  );
  t.same(never.json(), { name: 'never', grants: [] });
  const a = (
    await send(h.app, 'POST', '/v1/leases/L/acquire', {
      holder: 'A',
      ttlMs: 10_000,
      lockDelayMs: 5_000,
    })
  ).json() as { fencingToken: number };
  const notLive = check(
    'POST',
    '/v1/leases/{name}/revoke',
    await send(h.app, 'POST', '/v1/leases/L/revoke', { fencingToken: a.fencingToken + 99 }),
  );
  t.equal(notLive.statusCode, 409);
  t.equal(errorOf(notLive).code, 'not_holder');
  const rev = check(
    'POST',
    '/v1/leases/{name}/revoke',
    await send(h.app, 'POST', '/v1/leases/L/revoke', {
      fencingToken: a.fencingToken,
      reason: 'stuck job',
    }),
  );
  t.same(rev.json(), { name: 'L', revoked: [a.fencingToken] });
  const renew = await send(h.app, 'POST', '/v1/leases/L/renew', {
    holder: 'A',
    fencingToken: a.fencingToken,
  });
  t.equal(renew.statusCode, 409, "the holder's renew is refused");
  const write = await send(h.app, 'PUT', '/v1/kv/k', {
    value: 1,
    fence: { lease: 'L', fencingToken: a.fencingToken },
  });
  t.equal(errorOf(write).code, 'stale_token', 'the revoked token is fenced');
  const delayed = await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'B', ttlMs: 10_000 });
  t.equal(delayed.statusCode, 409, 'lock-delay applies after a revoke');
  t.match(errorOf(delayed), { code: 'held', holder: null });
  const empty = check(
    'POST',
    '/v1/leases/{name}/revoke',
    await send(h.app, 'POST', '/v1/leases/L/revoke'),
  );
  t.same(empty.json(), { name: 'L', revoked: [] }, 'nothing live: an empty list (no body needed)');
  const hist = check(
    'GET',
    '/v1/leases/{name}/history',
    await h.app.inject({ method: 'GET', url: '/v1/leases/L/history?limit=1' }),
  );
  t.match(hist.json(), {
    name: 'L',
    grants: [{ holder: 'A', fencingToken: a.fencingToken, endReason: 'revoked' }],
  });
  const entry = (hist.json() as { grants: { grantedAtMs: number; endedAtMs: number }[] })
    .grants[0]!;
  t.ok(entry.endedAtMs >= entry.grantedAtMs);

  const p1 = (
    await send(h.app, 'POST', '/v1/semaphores/S/acquire', { holder: 'P1', limit: 3, ttlMs: 10_000 })
  ).json() as { fencingToken: number };
  const p2 = (
    await send(h.app, 'POST', '/v1/semaphores/S/acquire', { holder: 'P2', limit: 3, ttlMs: 10_000 })
  ).json() as { fencingToken: number };
  const semRev = check(
    'POST',
    '/v1/semaphores/{name}/revoke',
    await send(h.app, 'POST', '/v1/semaphores/S/revoke', {}),
  );
  t.same(
    semRev.json(),
    { name: 'S', revoked: [p1.fencingToken, p2.fencingToken] },
    'without a token: every live permit',
  );
  const semHist = check(
    'GET',
    '/v1/semaphores/{name}/history',
    await h.app.inject({ method: 'GET', url: '/v1/semaphores/S/history' }),
  );
  t.match(semHist.json(), {
    name: 'S',
    grants: [{ endReason: 'revoked' }, { endReason: 'revoked' }],
  });

  const lead = (
    await send(h.app, 'POST', '/v1/elections/E/campaign', { candidate: 'C1', ttlMs: 10_000 })
  ).json() as { fencingToken: number };
  const elRev = check(
    'POST',
    '/v1/elections/{group}/revoke',
    await send(h.app, 'POST', '/v1/elections/E/revoke', { fencingToken: lead.fencingToken }),
  );
  t.same(elRev.json(), { group: 'E', revoked: [lead.fencingToken] });
  const elHist = check(
    'GET',
    '/v1/elections/{group}/history',
    await h.app.inject({ method: 'GET', url: '/v1/elections/E/history' }),
  );
  t.match(elHist.json(), {
    group: 'E',
    grants: [{ candidate: 'C1', fencingToken: lead.fencingToken, endReason: 'revoked' }],
  });
});

t.test('idempotent retries answer the first status and body', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const key = { 'idempotency-key': 'create-1' };
  const first = await send(h.app, 'POST', '/v1/sessions', { ttlMs: 5000 }, key);
  const again = await send(h.app, 'POST', '/v1/sessions', { ttlMs: 5000 }, key);
  t.same(again.json(), first.json(), 'a retried create answers the same session');
  const reused = await send(h.app, 'POST', '/v1/sessions', { ttlMs: 6000 }, key);
  t.equal(reused.statusCode, 422);
  await send(h.app, 'POST', '/v1/semaphores/S/acquire', { holder: 'A', limit: 1, ttlMs: 5000 });
  const k2 = { 'idempotency-key': 'sem-b' };
  const held = await send(
    h.app,
    'POST',
    '/v1/semaphores/S/acquire',
    { holder: 'B', limit: 1, ttlMs: 5000 },
    k2,
  );
  t.equal(held.statusCode, 409);
  const heldAgain = await send(
    h.app,
    'POST',
    '/v1/semaphores/S/acquire',
    { holder: 'B', limit: 1, ttlMs: 5000 },
    k2,
  );
  t.equal(heldAgain.statusCode, 409, 'a 409 is replayed too');
  t.same(heldAgain.json(), held.json());
  const { sessionId } = first.json() as { sessionId: string };
  const k3 = { 'idempotency-key': 'end-1' };
  const end = await send(h.app, 'DELETE', `/v1/sessions/${sessionId}`, undefined, k3);
  const endAgain = await send(h.app, 'DELETE', `/v1/sessions/${sessionId}`, undefined, k3);
  t.equal(end.statusCode, 200);
  t.equal(endAgain.statusCode, 200, 'a retried end answers 200, not 404');
});

t.test('limits answer 429 resource_exhausted', async (t) => {
  const h = await harness(['--sessions-max', '1']);
  t.teardown(h.close);
  t.equal((await send(h.app, 'POST', '/v1/sessions', { ttlMs: 5000 })).statusCode, 200);
  const over = await send(h.app, 'POST', '/v1/sessions', { ttlMs: 5000 });
  t.equal(over.statusCode, 429);
  t.equal(errorOf(over).code, 'resource_exhausted');
});

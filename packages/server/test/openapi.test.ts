// Proves the OpenAPI document is generated from the route schemas (summaries, descriptions, headers, every error status, an optional DELETE body) and that real answers of the app, errors with their details included, match the response schema it documents for their status.
import t from 'tap';
import { Ajv } from 'ajv';
import { harness, send } from './fixtures/harness.js';

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: { in: string; name: string }[];
  requestBody?: { required?: boolean };
  responses: Record<string, { description?: string; content?: Record<string, { schema: object }> }>;
}
type Doc = { openapi: string; paths: Record<string, Record<string, Operation>> };

t.test('every operation is documented with headers and error answers', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const doc = (await h.app.inject({ method: 'GET', url: '/docs/json' })).json<Doc>();
  t.match(doc.openapi, /^3\.1/);
  const ops = Object.entries(doc.paths).flatMap(([path, byMethod]) =>
    Object.entries(byMethod).map(([method, op]) => ({ name: `${method} ${path}`, op })),
  );
  t.ok(ops.length >= 19, `${ops.length} operations`);
  for (const { name, op } of ops) {
    t.ok(op.summary && op.description, `${name}: summary and description`);
    t.ok(op.tags?.length, `${name}: tagged`);
    const headers = (op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
    // Reads take no Idempotency-Key; the streaming watch also takes Last-Event-ID and answers
    // text/event-stream.
    const stream = name === 'get /v1/watch';
    const common = name.startsWith('get ')
      ? ['request-timeout-ms']
      : ['idempotency-key', 'request-timeout-ms'];
    t.same(
      headers.sort(),
      stream ? [...common, 'last-event-id'].sort() : common,
      `${name}: headers (no Idempotency-Key on reads)`,
    );
    const media = stream ? 'text/event-stream' : 'application/json';
    t.ok(op.responses['200']?.content?.[media], `${name}: 200 schema`);
    t.not(op.responses['200']?.description, 'Default Response', `${name}: 200 described`);
    for (const status of ['400', '500'])
      t.ok(op.responses[status]?.content?.['application/json'], `${name}: ${status} schema`);
  }
  const acquire = doc.paths['/v1/leases/{name}/acquire']!.post!;
  t.same(
    Object.keys(acquire.responses).sort(),
    ['200', '400', '401', '403', '409', '413', '415', '422', '429', '500', '503', '504'],
    'a write documents its credentials, conflicts, limits and unavailability',
  );
  t.equal(acquire.requestBody?.required, true);
  const del = doc.paths['/v1/kv/{key}']!.delete!;
  t.equal(del.requestBody?.required, false, 'DELETE /v1/kv/{key} does not require a body');
  t.notOk('x-tenure-body-optional' in del, 'the internal marker is not published');
  t.equal(doc.paths['/v1/cluster/transfer-leadership']!.post!.requestBody?.required, false);
});

t.test('real answers match the documented schema of their status', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const doc = (await h.app.inject({ method: 'GET', url: '/docs/json' })).json<Doc>();
  const ajv = new Ajv({ strict: false });
  /** Validate one answer against the schema documented for its route and status. */
  const check = (method: string, path: string, res: { statusCode: number; json(): unknown }) => {
    const op = doc.paths[path]?.[method.toLowerCase()];
    const schema = op?.responses[String(res.statusCode)]?.content?.['application/json']?.schema;
    if (schema === undefined) {
      t.fail(`${method} ${path} ${res.statusCode}: no documented schema`);
      return res;
    }
    const ok = ajv.validate(schema, res.json());
    t.ok(ok, `${method} ${path} ${res.statusCode}: ${ajv.errorsText(ajv.errors)}`);
    return res;
  };
  const lease = '/v1/leases/{name}';
  const a = check(
    'POST',
    `${lease}/acquire`,
    await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 5000 }),
  );
  const token = (a.json() as { fencingToken: number }).fencingToken;
  const held = check(
    'POST',
    `${lease}/acquire`,
    await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'B', ttlMs: 5000 }),
  );
  t.match(held.json(), { error: { code: 'held', holder: 'A' } }, 'details survive serialization');
  check(
    'POST',
    `${lease}/renew`,
    await send(h.app, 'POST', '/v1/leases/L/renew', { holder: 'A', fencingToken: token }),
  );
  check('GET', lease, await h.app.inject({ method: 'GET', url: '/v1/leases/L' }));
  check('GET', lease, await h.app.inject({ method: 'GET', url: '/v1/leases/none' }));
  check('GET', '/v1/leases', await h.app.inject({ method: 'GET', url: '/v1/leases?limit=5' }));
  const w = check(
    'GET',
    `${lease}/watch`,
    await h.app.inject({ method: 'GET', url: '/v1/leases/none/watch?timeoutMs=1' }),
  );
  t.match(w.json(), { holder: null, fencingToken: null }, 'nulls stay null');
  const bad = check(
    'POST',
    `${lease}/acquire`,
    await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 1 }),
  );
  t.equal((bad.json() as { error: { field: string } }).error.field, 'body.ttlMs');
  check(
    'POST',
    `${lease}/release`,
    await send(h.app, 'POST', '/v1/leases/L/release', { holder: 'A', fencingToken: token }),
  );
  const group = '/v1/elections/{group}';
  const c = check(
    'POST',
    `${group}/campaign`,
    await send(h.app, 'POST', '/v1/elections/g/campaign', {
      candidate: 'P',
      ttlMs: 5000,
      value: { at: 'p' },
    }),
  );
  const leaderToken = (c.json() as { fencingToken: number }).fencingToken;
  check(
    'POST',
    `${group}/campaign`,
    await send(h.app, 'POST', '/v1/elections/g/campaign', { candidate: 'Q', ttlMs: 5000 }),
  );
  check(
    'POST',
    `${group}/proclaim`,
    await send(h.app, 'POST', '/v1/elections/g/proclaim', {
      candidate: 'P',
      fencingToken: leaderToken,
      value: 2,
    }),
  );
  check(
    'POST',
    `${group}/renew`,
    await send(h.app, 'POST', '/v1/elections/g/renew', { candidate: 'P' }),
  );
  check('GET', group, await h.app.inject({ method: 'GET', url: '/v1/elections/g' }));
  check(
    'GET',
    `${group}/observe`,
    await h.app.inject({ method: 'GET', url: '/v1/elections/g/observe?timeoutMs=1' }),
  );
  check(
    'POST',
    `${group}/resign`,
    await send(h.app, 'POST', '/v1/elections/g/resign', { candidate: 'P' }),
  );
  check(
    'POST',
    '/v1/fence/check',
    await send(h.app, 'POST', '/v1/fence/check', { lease: 'never', fencingToken: 1 }),
  );
  const stale = check(
    'PUT',
    '/v1/kv/{key}',
    await send(h.app, 'PUT', '/v1/kv/k', { value: 1, fence: { lease: 'L', fencingToken: token } }),
  );
  t.match(stale.json(), { error: { code: 'stale_token', current: null } });
  const put = check(
    'PUT',
    '/v1/kv/{key}',
    await send(h.app, 'PUT', '/v1/kv/k', { value: [1, 'x'] }),
  );
  const mismatch = check(
    'PUT',
    '/v1/kv/{key}',
    await send(h.app, 'PUT', '/v1/kv/k', { value: 2, ifRevision: 0 }),
  );
  t.match(mismatch.json(), {
    error: { code: 'revision_mismatch', revision: (put.json() as { revision: number }).revision },
  });
  check('GET', '/v1/kv/{key}', await h.app.inject({ method: 'GET', url: '/v1/kv/k' }));
  check('DELETE', '/v1/kv/{key}', await send(h.app, 'DELETE', '/v1/kv/k'));
  check('DELETE', '/v1/kv/{key}', await send(h.app, 'DELETE', '/v1/kv/k'));
  check('GET', '/v1/cluster', await h.app.inject({ method: 'GET', url: '/v1/cluster' }));
  check(
    'GET',
    '/v1/cluster/state',
    await h.app.inject({ method: 'GET', url: '/v1/cluster/state' }),
  );
  check('GET', '/healthz', await h.app.inject({ method: 'GET', url: '/healthz' }));
  check('GET', '/readyz', await h.app.inject({ method: 'GET', url: '/readyz' }));
  check(
    'POST',
    '/v1/cluster/transfer-leadership',
    await send(h.app, 'POST', '/v1/cluster/transfer-leadership', { to: 'n1' }),
  );
});

t.test(
  'a DELETE with content-type application/json and no body is a DELETE without a body',
  async (t) => {
    const h = await harness();
    t.teardown(h.close);
    await send(h.app, 'PUT', '/v1/kv/d', { value: 1 });
    const res = await h.app.inject({
      method: 'DELETE',
      url: '/v1/kv/d',
      headers: { 'content-type': 'application/json' },
    });
    t.equal(res.statusCode, 200);
    t.same(res.json(), { key: 'd', deleted: true });
    const post = await h.app.inject({
      method: 'POST',
      url: '/v1/leases/L/acquire',
      headers: { 'content-type': 'application/json' },
    });
    t.equal(post.statusCode, 400, 'a route that needs a body still refuses an empty one');
    t.equal(post.json().error.field, 'body');
  },
);

// Proves the QA input fixes: lone-surrogate / control-character holders and candidates and lone-surrogate values get 400 naming the field (so distinct holders never share a grant), __proto__ keys get a precise 400 while constructor.prototype is stored as data, and query strings are checked alike on every route.
import t from 'tap';
import { harness, send } from './fixtures/harness.js';

/** POST a raw JSON text (JSON.stringify cannot produce lone-surrogate escapes portably). */
function rawJson(
  app: Awaited<ReturnType<typeof harness>>['app'],
  method: 'POST' | 'PUT',
  url: string,
  text: string,
) {
  return app.inject({
    method,
    url,
    headers: { 'content-type': 'application/json' },
    payload: text,
  });
}

t.test('holders and candidates must be well-formed printable Unicode', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  for (const holder of ['x\\ud800', 'x\\udbff', '\\udc00', 'a\\u0085b', 'a\\u007fb']) {
    const r = await rawJson(
      h.app,
      'POST',
      '/v1/leases/sur/acquire',
      `{"holder":"${holder}","ttlMs":30000}`,
    );
    t.equal(r.statusCode, 400, `holder "${holder}"`);
    t.equal(r.json().error.code, 'invalid_argument');
    t.equal(r.json().error.field, 'body.holder');
    t.match(r.json().error.message, /body\.holder must be 1-200 printable characters/);
  }
  for (const [url, body] of [
    ['/v1/leases/sur/renew', '{"holder":"x\\ud800","fencingToken":1}'],
    ['/v1/leases/sur/release', '{"holder":"x\\ud800","fencingToken":1}'],
    ['/v1/elections/g/campaign', '{"candidate":"x\\ud800","ttlMs":30000}'],
    ['/v1/elections/g/renew', '{"candidate":"x\\ud800"}'],
    ['/v1/elections/g/resign', '{"candidate":"x\\ud800"}'],
    ['/v1/elections/g/proclaim', '{"candidate":"x\\ud800","fencingToken":1,"value":1}'],
  ] as const) {
    const r = await rawJson(h.app, 'POST', url, body);
    t.equal(r.statusCode, 400, url);
    t.match(r.json().error.field, /^body\.(holder|candidate)$/, `${url} names the field`);
  }
  // The QA repro: two distinct lone-surrogate holders used to share one grant.
  const a = await rawJson(
    h.app,
    'POST',
    '/v1/leases/sur3/acquire',
    '{"holder":"x\\ud800","ttlMs":30000}',
  );
  const b = await rawJson(
    h.app,
    'POST',
    '/v1/leases/sur3/acquire',
    '{"holder":"x\\udbff","ttlMs":30000}',
  );
  t.same([a.statusCode, b.statusCode], [400, 400]);
  t.equal(h.raft.proposals, 0, 'nothing reached the log');
  // Astral characters (well-formed surrogate pairs) are printable and keep holders distinct.
  const e1 = await send(h.app, 'POST', '/v1/leases/emoji/acquire', {
    holder: 'me 😀',
    ttlMs: 30000,
  });
  t.equal(e1.statusCode, 200);
  t.equal(e1.json().holder, 'me 😀');
  const e2 = await send(h.app, 'POST', '/v1/leases/emoji/acquire', {
    holder: 'me 😁',
    ttlMs: 30000,
  });
  t.equal(e2.statusCode, 409, 'another astral holder is a different holder');
});

t.test('KV and election values with lone surrogates are refused, not changed', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const cases: [string, 'POST' | 'PUT', string, string][] = [
    ['/v1/kv/k1', 'PUT', '{"value":"\\ud800x"}', 'body.value'],
    ['/v1/kv/k1', 'PUT', '{"value":{"a":["ok","\\udfff"]}}', 'body.value.a[1]'],
    ['/v1/kv/k1', 'PUT', '{"value":{"k\\ud800":1}}', 'body.value'],
    [
      '/v1/elections/g/campaign',
      'POST',
      '{"candidate":"c","ttlMs":30000,"value":"\\ud800"}',
      'body.value',
    ],
  ];
  for (const [url, method, body, field] of cases) {
    const r = await rawJson(h.app, method, url, body);
    t.equal(r.statusCode, 400, body);
    t.equal(r.json().error.field, field, `names ${field}`);
    t.match(r.json().error.message, /lone UTF-16 surrogate/);
  }
  t.equal(
    (await h.app.inject({ method: 'GET', url: '/v1/kv/k1' })).statusCode,
    404,
    'nothing was written',
  );
  const ok = await send(h.app, 'PUT', '/v1/kv/k2', { value: 'pair 😀' });
  t.equal(ok.statusCode, 200);
  t.equal(
    (await h.app.inject({ method: 'GET', url: '/v1/kv/k2' })).json().value,
    'pair 😀',
    'well-formed text round-trips',
  );
});

t.test(
  '__proto__ keys get a precise 400; constructor.prototype is stored as plain data',
  async (t) => {
    const h = await harness();
    t.teardown(h.close);
    const p = await rawJson(
      h.app,
      'PUT',
      '/v1/kv/p',
      '{"value":{"a":{"__proto__":{"polluted":true}}}}',
    );
    t.equal(p.statusCode, 400);
    t.equal(p.json().error.code, 'invalid_argument');
    t.equal(p.json().error.field, 'body.value.a.__proto__');
    t.equal(p.json().error.message, 'body.value.a.__proto__ keys named __proto__ are not allowed');
    t.notMatch(p.json().error.message, /not valid JSON/);
    const top = await rawJson(
      h.app,
      'POST',
      '/v1/leases/L/acquire',
      '{"__proto__":{"x":1},"holder":"A","ttlMs":1000}',
    );
    t.equal(top.statusCode, 400);
    t.equal(top.json().error.field, 'body.__proto__', 'an unknown top-level field');
    const c = await rawJson(
      h.app,
      'PUT',
      '/v1/kv/c',
      '{"value":{"constructor":{"prototype":{"x":1}}}}',
    );
    t.equal(c.statusCode, 200, 'constructor.prototype is ordinary data');
    const g = await h.app.inject({ method: 'GET', url: '/v1/kv/c' });
    t.same(g.json().value, { constructor: { prototype: { x: 1 } } });
    t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
    t.equal(({} as Record<string, unknown>).x, undefined);
  },
);

t.test(
  'query strings: unknown parameters are rejected on every route; repeats are named',
  async (t) => {
    const h = await harness();
    t.teardown(h.close);
    const post = await send(h.app, 'POST', '/v1/leases/L/acquire?bogus=1', {
      holder: 'A',
      ttlMs: 1000,
    });
    t.equal(post.statusCode, 400);
    t.equal(post.json().error.field, 'query.bogus');
    t.match(post.json().error.message, /query\.bogus is not allowed/);
    t.equal(h.raft.proposals, 0);
    for (const url of ['/v1/cluster?x=1', '/healthz?x=1', '/readyz?x=1']) {
      const r = await h.app.inject({ method: 'GET', url });
      t.equal(r.statusCode, 400, url);
      t.equal(r.json().error.field, 'query.x');
    }
    const get = await h.app.inject({ method: 'GET', url: '/v1/leases/L?bogus=1' });
    t.equal(get.statusCode, 400);
    t.equal(get.json().error.field, 'query.bogus');
    const rep = await h.app.inject({ method: 'GET', url: '/v1/leases?limit=1&limit=2' });
    t.equal(rep.statusCode, 400);
    t.equal(rep.json().error.message, 'query.limit must be given once');
    t.equal(rep.json().error.field, 'query.limit');
    const repPost = await send(
      h.app,
      'POST',
      '/v1/fence/check?consistency=stale&consistency=stale',
      { lease: 'L', fencingToken: 1 },
    );
    t.equal(repPost.statusCode, 400);
    t.equal(repPost.json().error.message, 'query.consistency must be given once');
    const staleCheck = await send(h.app, 'POST', '/v1/fence/check?consistency=stale', {
      lease: 'L',
      fencingToken: 1,
    });
    t.equal(staleCheck.statusCode, 200, 'a stale fence check still works');
    t.equal(staleCheck.headers['tenure-stale'], 'true');
    t.equal((await h.app.inject({ method: 'GET', url: '/v1/leases?limit=1' })).statusCode, 200);
    t.equal(
      (await h.app.inject({ method: 'GET', url: '/nope?x=1' })).statusCode,
      404,
      'unknown routes stay 404',
    );
  },
);

// Proves cursor pagination of the listings (docs/api.md, Listings): leases, elections and KV keys
// come in name order, `limit` at a time, `nextCursor` leads to the next page and is null on the
// last; walking the pages visits every item exactly once; a bad cursor or limit is a 400.
import t from 'tap';
import { harness, send, type Harness } from './fixtures/harness.js';

/** Walks every page of `url` (limit `limit`), returning the names per page. */
async function walk(h: Harness, url: string, field: string, nameOf: string, limit: number) {
  const pages: string[][] = [];
  let after: string | null = null;
  for (let i = 0; i < 100; i++) {
    const q: string = `${url}${url.includes('?') ? '&' : '?'}limit=${limit}${after === null ? '' : `&after=${after}`}`;
    const r = await h.app.inject({ method: 'GET', url: q });
    if (r.statusCode !== 200) throw new Error(`${q}: ${r.statusCode} ${r.body}`);
    const body = r.json() as Record<string, unknown> & { nextCursor: string | null };
    const items = body[field] as Record<string, string>[];
    pages.push(items.map((x) => x[nameOf]!));
    if (body.nextCursor === null) return pages;
    after = body.nextCursor;
  }
  throw new Error('too many pages');
}

t.test('leases: pages in name order with a cursor, by prefix', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const names = ['b3', 'a1', 'b1', 'c1', 'b2', 'a2', 'b4'];
  for (const name of names)
    await send(h.app, 'POST', `/v1/leases/${name}/acquire`, { holder: 'H', ttlMs: 60_000 });
  t.same(await walk(h, '/v1/leases', 'leases', 'name', 3), [
    ['a1', 'a2', 'b1'],
    ['b2', 'b3', 'b4'],
    ['c1'],
  ]);
  t.same(await walk(h, '/v1/leases?prefix=b', 'leases', 'name', 2), [
    ['b1', 'b2'],
    ['b3', 'b4'],
  ]);
  const all = (await h.app.inject({ method: 'GET', url: '/v1/leases' })).json();
  t.equal(all.leases.length, 7);
  t.equal(all.nextCursor, null, 'one page when everything fits');
  // A cursor that is not a present name still orders correctly.
  const r = (await h.app.inject({ method: 'GET', url: '/v1/leases?after=b25&limit=10' })).json();
  t.same(
    r.leases.map((l: { name: string }) => l.name),
    ['b3', 'b4', 'c1'],
  );
});

t.test('elections: a listing with the same pagination', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  for (const group of ['g3', 'g1', 'g2'])
    await send(h.app, 'POST', `/v1/elections/${group}/campaign`, {
      candidate: 'c',
      ttlMs: 60_000,
      value: group,
    });
  t.same(await walk(h, '/v1/elections', 'elections', 'group', 2), [['g1', 'g2'], ['g3']]);
  const first = (await h.app.inject({ method: 'GET', url: '/v1/elections?limit=1' })).json();
  t.match(first.elections[0], {
    group: 'g1',
    leader: { candidate: 'c', value: 'g1' },
    candidates: [{ candidate: 'c' }],
  });
  t.equal(first.nextCursor, 'g1');
});

t.test('KV keys: a listing of keys and revisions, without values', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  for (const key of ['k2', 'k1', 'x1']) await send(h.app, 'PUT', `/v1/kv/${key}`, { value: key });
  t.same(await walk(h, '/v1/kv?prefix=k', 'keys', 'key', 1), [['k1'], ['k2']]);
  const r = (await h.app.inject({ method: 'GET', url: '/v1/kv' })).json();
  t.equal(r.keys.length, 3);
  t.type(r.keys[0].revision, 'number');
  t.notOk('value' in r.keys[0], 'values are read one key at a time');
});

t.test('bad cursors and limits are 400 naming the field', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  for (const [url, field] of [
    ['/v1/leases?after=%2Fx', 'after'],
    ['/v1/elections?limit=0', 'limit'],
    ['/v1/kv?limit=1001', 'limit'],
    ['/v1/kv?cursor=a', 'cursor'],
  ] as const) {
    const r = await h.app.inject({ method: 'GET', url });
    t.equal(r.statusCode, 400, url);
    t.match(r.json().error, { code: 'invalid_argument', field: new RegExp(field) }, url);
  }
});

// Proves the body parser and header rules answer in the error shape: malformed JSON named once, compressed or non-UTF-8 bodies refused with 415, invalid UTF-8 refused with 400 instead of being stored as U+FFFD, and one message naming the bounds for any out-of-range Request-Timeout-Ms.
import t from 'tap';
import { harness } from './fixtures/harness.js';

const acquire = '/v1/leases/L/acquire';
const good = '{"holder":"A","ttlMs":1000}';

t.test('body encodings', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const post = (headers: Record<string, string>, payload: string | Buffer) =>
    h.app.inject({ method: 'POST', url: acquire, headers, payload });
  const bad = await post({ 'content-type': 'application/json' }, '{"holder":');
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().error.message.match(/not valid JSON/g)?.length, 1, 'said once');
  t.equal(bad.json().error.field, 'body');
  const gz = await post({ 'content-type': 'application/json', 'content-encoding': 'gzip' }, good);
  t.equal(gz.statusCode, 415);
  t.equal(gz.json().error.code, 'unsupported_media_type');
  const u16 = await post({ 'content-type': 'application/json; charset=utf-16' }, good);
  t.equal(u16.statusCode, 415);
  t.match(u16.json().error.message, /charset utf-16/);
  const u8 = await post({ 'content-type': 'application/json; charset=UTF-8' }, good);
  t.equal(u8.statusCode, 200, 'charset utf-8 is fine');
  const latin1 = Buffer.concat([
    Buffer.from('{"value":"caf'),
    Buffer.from([0xe9]),
    Buffer.from('"}'),
  ]);
  const put = await h.app.inject({
    method: 'PUT',
    url: '/v1/kv/k',
    headers: { 'content-type': 'application/json' },
    payload: latin1,
  });
  t.equal(put.statusCode, 400);
  t.match(put.json().error.message, /not valid UTF-8/);
  t.equal((await h.app.inject({ method: 'GET', url: '/v1/kv/k' })).statusCode, 404, 'not stored');
});

t.test('Request-Timeout-Ms: 0, negative or not a whole number is one 400 message', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const messages = new Set<string>();
  for (const v of ['0', '-5', 'abc', '1.5', '1e3', '']) {
    const r = await h.app.inject({
      method: 'GET',
      url: '/v1/leases/L',
      headers: { 'request-timeout-ms': v },
    });
    t.equal(r.statusCode, 400, v);
    t.equal(r.json().error.field, 'header Request-Timeout-Ms');
    messages.add(r.json().error.message);
  }
  t.same(
    [...messages],
    ['header Request-Timeout-Ms must be a whole number of milliseconds, at least 1'],
  );
  const ok = await h.app.inject({
    method: 'GET',
    url: '/v1/leases?limit=3',
    headers: { 'request-timeout-ms': '2000' },
  });
  t.equal(ok.statusCode, 200, 'an in-range header and a coerced query are accepted');
});

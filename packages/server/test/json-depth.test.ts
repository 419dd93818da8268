// Proves a deeply nested body is refused from its bytes, before JSON.parse (docs/security.md):
// brackets inside strings do not count, the refusal is a 400 naming `body` (413 when the body is
// also over the size limit, which is checked first), and a value just past the value rule still
// gets that rule's precise path.
import t from 'tap';
import { BODY_DEPTH_MAX, nestsDeeperThan } from '../src/json-depth.js';
import { harness, send } from './fixtures/harness.js';

const bytes = (text: string) => Buffer.from(text, 'utf8');

t.test('nestsDeeperThan counts arrays and objects, not brackets in strings', async (t) => {
  t.equal(nestsDeeperThan(bytes('[[{"a":[1]}]]'), 4), false);
  t.equal(nestsDeeperThan(bytes('[[{"a":[1]}]]'), 3), true);
  t.equal(nestsDeeperThan(bytes('{"a":"[[[[[[[[\\"[[[["}'), 1), false, 'escaped quote stays in');
  t.equal(nestsDeeperThan(bytes('[1],[2],[3]'), 1), false, 'siblings do not add up');
  t.equal(nestsDeeperThan(bytes('"é[[[" '), 0), false);
});

t.test('a body nested 100,000 deep is a 400 naming body', async (t) => {
  // A value limit large enough that the body limit does not refuse it first.
  const h = await harness(['--value-bytes-max', String(1024 * 1024)]);
  t.teardown(h.close);
  const deep = '{"value":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}';
  const r = await h.app.inject({
    method: 'PUT',
    url: '/v1/kv/a',
    headers: { 'content-type': 'application/json' },
    payload: deep,
  });
  t.equal(r.statusCode, 400);
  t.match(r.json(), {
    error: {
      code: 'invalid_argument',
      field: 'body',
      message: `body nests deeper than ${BODY_DEPTH_MAX} levels`,
    },
  });
});

t.test(
  'with the default limits a 100,000-deep body is over the size limit first: 413',
  async (t) => {
    // 200,000 bracket bytes pass the 144 KiB body limit: the size is checked while the body arrives
    // (reading stops there), the depth only on a complete body (docs/security.md).
    const h = await harness();
    t.teardown(h.close);
    const deep = '{"value":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}';
    const r = await h.app.inject({
      method: 'PUT',
      url: '/v1/kv/a',
      headers: { 'content-type': 'application/json' },
      payload: deep,
    });
    t.equal(r.statusCode, 413);
    t.equal(r.json().error.code, 'payload_too_large');
  },
);

t.test('a value just past its own bound still gets the precise path', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  let value: unknown = 1;
  for (let i = 0; i < BODY_DEPTH_MAX - 2; i++) value = [value];
  const r = await send(h.app, 'PUT', '/v1/kv/a', { value });
  t.equal(r.statusCode, 400);
  t.match(r.json(), { error: { code: 'invalid_argument', field: /^body\.value/ } });
});

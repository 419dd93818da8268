// Proves idempotency fingerprints depend on route, params and JSON value — not on key order or whitespace.
import t from 'tap';
import { canonicalJson, requestFingerprint } from '../src/canonical-json.js';

t.test('canonical JSON sorts keys recursively', async (t) => {
  t.equal(
    canonicalJson({ b: 1, a: { d: [1, { z: 0, y: null }], c: 'x' } }),
    '{"a":{"c":"x","d":[1,{"y":null,"z":0}]},"b":1}',
  );
  t.equal(canonicalJson({ a: undefined, b: 1 }), '{"b":1}');
});

t.test('fingerprints', async (t) => {
  const f = requestFingerprint(
    'POST',
    '/v1/leases/:name/acquire',
    { name: 'L' },
    { holder: 'A', ttlMs: 1 },
  );
  t.equal(
    f,
    requestFingerprint(
      'POST',
      '/v1/leases/:name/acquire',
      { name: 'L' },
      { ttlMs: 1, holder: 'A' },
    ),
  );
  t.not(
    f,
    requestFingerprint(
      'POST',
      '/v1/leases/:name/acquire',
      { name: 'M' },
      { holder: 'A', ttlMs: 1 },
    ),
  );
  t.not(
    f,
    requestFingerprint('POST', '/v1/leases/:name/renew', { name: 'L' }, { holder: 'A', ttlMs: 1 }),
  );
  t.not(
    f,
    requestFingerprint(
      'POST',
      '/v1/leases/:name/acquire',
      { name: 'L' },
      { holder: 'A', ttlMs: 2 },
    ),
  );
});

// Proves the revoke checker fails on a fenced write, a fence check, a renew or a read accepting a
// revoked token after the revoke was acknowledged, on a next grant with a lower token and on a
// malformed answer — and passes when only a concurrent or unknown revoke could explain the same ops.
import t from 'tap';
import { checkRevokes } from './revoke.js';
import { HistoryBuilder, fail, ok, unknown } from './testing.js';
import type { JsonObject, OpKind } from '../types.js';

const L = 'L';

/** A holds token 5 from t=0; an operator revokes it at [100, 120] (ok unless `outcome` given). */
function revoked(outcome = ok({ name: L, revoked: [5] })): HistoryBuilder {
  const h = new HistoryBuilder();
  h.add(
    'a',
    'lease.acquire',
    { name: L, holder: 'A', ttlMs: 3000 },
    0,
    10,
    ok({ name: L, holder: 'A', fencingToken: 5, ttlMs: 3000 }),
  );
  h.add('op', 'lease.revoke', { name: L, fencingToken: 5, reason: 'test' }, 100, 120, outcome);
  return h;
}

t.test('a fenced KV write with the revoked token accepted after the ack fails', async (t) => {
  const h = revoked();
  h.add(
    'a',
    'kv.put',
    { key: 'k', value: 1, fence: { lease: L, fencingToken: 5 } },
    130,
    140,
    ok({ key: 'k', revision: 9 }),
  );
  const r = checkRevokes(h.ops);
  t.notOk(r.ok);
  t.equal(r.violations[0]?.property, 'revoked-token-accepted');
});

t.test(
  'a fence check, a renew or a GET showing the revoked token after the ack fail',
  async (t) => {
    for (const [kind, args, value] of [
      ['fence.check', { lease: L, fencingToken: 5 }, { valid: true, current: 5 }],
      [
        'lease.renew',
        { name: L, holder: 'A', fencingToken: 5 },
        { name: L, holder: 'A', fencingToken: 5 },
      ],
      ['lease.get', { name: L }, { name: L, holder: 'A', fencingToken: 5, remainingMs: 9 }],
      [
        'lease.history',
        { name: L },
        {
          name: L,
          grants: [
            { holder: 'A', fencingToken: 5, grantedAtMs: 1, endedAtMs: null, endReason: null },
          ],
        },
      ],
    ] satisfies [OpKind, JsonObject, JsonObject][]) {
      const h = revoked();
      h.add('x', kind, args, 200, 210, ok(value));
      const r = checkRevokes(h.ops);
      t.equal(r.violations[0]?.property, 'revoked-token-accepted', kind);
    }
  },
);

t.test('the next grant of a revoked lease with a lower token fails', async (t) => {
  const h = revoked();
  h.add(
    'b',
    'lease.acquire',
    { name: L, holder: 'B', ttlMs: 3000 },
    200,
    210,
    ok({ name: L, holder: 'B', fencingToken: 4, ttlMs: 3000 }),
  );
  t.equal(checkRevokes(h.ops).violations[0]?.property, 'revoke-token-order');
});

t.test('a revoke answering another token than it was asked for fails', async (t) => {
  const h = revoked(ok({ name: L, revoked: [6] }));
  t.equal(checkRevokes(h.ops).violations[0]?.property, 'revoke-answer');
  const h2 = revoked(ok({ name: L, revoked: 'all' }));
  t.equal(checkRevokes(h2.ops).violations[0]?.property, 'revoke-answer');
});

t.test('ops concurrent with the revoke, or after an unknown one, pass', async (t) => {
  const h = revoked();
  // Sent before the ack: may have been applied before the revoke.
  h.add(
    'a',
    'kv.put',
    { key: 'k', value: 1, fence: { lease: L, fencingToken: 5 } },
    110,
    130,
    ok({ key: 'k', revision: 9 }),
  );
  // A retry of a write first sent before the revoke, answered from the idempotency record after it.
  h.add(
    'a',
    'kv.put',
    { key: 'k', value: 2, fence: { lease: L, fencingToken: 5 }, idempotencyKey: 'w', attempt: 1 },
    90,
    95,
    unknown(),
  );
  h.add(
    'a',
    'kv.put',
    { key: 'k', value: 2, fence: { lease: L, fencingToken: 5 }, idempotencyKey: 'w', attempt: 2 },
    150,
    160,
    ok({ key: 'k', revision: 10 }),
  );
  // A higher token after the revoke is what should happen.
  h.add(
    'b',
    'lease.acquire',
    { name: L, holder: 'B', ttlMs: 3000 },
    200,
    210,
    ok({ name: L, holder: 'B', fencingToken: 6, ttlMs: 3000 }),
  );
  const r = checkRevokes(h.ops);
  t.ok(r.ok, JSON.stringify(r.violations));
  t.equal(r.stats['tokensRevoked'], 1);

  const u = revoked(unknown());
  u.add(
    'a',
    'lease.renew',
    { name: L, holder: 'A', fencingToken: 5 },
    200,
    210,
    ok({ name: L, holder: 'A', fencingToken: 5 }),
  );
  t.ok(checkRevokes(u.ops).ok, 'an unknown revoke fences nothing');
  const f = revoked(fail('not_holder'));
  f.add(
    'a',
    'lease.renew',
    { name: L, holder: 'A', fencingToken: 5 },
    200,
    210,
    ok({ name: L, holder: 'A', fencingToken: 5 }),
  );
  t.ok(checkRevokes(f.ops).ok, 'a refused revoke fences nothing');
});

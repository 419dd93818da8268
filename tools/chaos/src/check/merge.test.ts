// Proves retries are merged into one logical request only within the server's idempotency window:
// a repeat sent a full window later may be applied afresh, so it is its own operation (docs/api.md).
import t from 'tap';
import { IDEMPOTENCY_WINDOW_MS, mergeAttempts } from './merge.js';
import { checkDurability } from './durability.js';
import { HistoryBuilder, ok, unknown } from './testing.js';

t.test('attempts within the window merge; a repeat past it is a new request', async (t) => {
  const h = new HistoryBuilder();
  const args = { name: 'L', holder: 'A', ttlMs: 3000, idempotencyKey: 'k1' };
  h.add('a', 'lease.acquire', args, 0, 2000, unknown());
  h.add(
    'a',
    'lease.acquire',
    args,
    2100,
    2110,
    ok({ name: 'L', holder: 'A', fencingToken: 5000, ttlMs: 3000 }),
  );
  h.add(
    'a',
    'lease.acquire',
    args,
    IDEMPOTENCY_WINDOW_MS + 5000,
    IDEMPOTENCY_WINDOW_MS + 5010,
    ok({ name: 'L', holder: 'A', fencingToken: 9000, ttlMs: 3000 }),
  );
  const merged = mergeAttempts(h.ops);
  t.equal(merged.length, 2, 'two logical requests');
  t.equal(merged[0]!.invokeMs, 0);
  t.same(merged[0]!.outcome, ok({ name: 'L', holder: 'A', fencingToken: 5000, ttlMs: 3000 }));
  t.equal(merged[1]!.invokeMs, IDEMPOTENCY_WINDOW_MS + 5000);
  t.notOk(
    checkDurability(h.ops).violations.some((v) => v.property === 'idempotency-replay'),
    'a repeat past the window may differ',
  );
});

t.test('a different answer within the window is still an idempotency violation', async (t) => {
  const h = new HistoryBuilder();
  const args = { name: 'L', holder: 'A', ttlMs: 3000, idempotencyKey: 'k2' };
  h.add(
    'a',
    'lease.acquire',
    args,
    0,
    10,
    ok({ name: 'L', holder: 'A', fencingToken: 5000, ttlMs: 3000 }),
  );
  h.add(
    'a',
    'lease.acquire',
    args,
    60_000,
    60_010,
    ok({ name: 'L', holder: 'A', fencingToken: 9000, ttlMs: 3000 }),
  );
  t.ok(checkDurability(h.ops).violations.some((v) => v.property === 'idempotency-replay'));
});

// Proves the durability checker flags a lost acknowledged KV write, a token granted twice, an
// Idempotency-Key answered differently on retry, and a double-applied counter increment (BC-13, BC-26).
import t from 'tap';
import { checkDurability } from './durability.js';
import { HistoryBuilder, ok, fail, unknown } from './testing.js';

t.test('acked writes visible later; deletes excuse 404', async (t) => {
  const h = new HistoryBuilder();
  h.add('a', 'kv.put', { key: 'k', value: 1 }, 0, 10, ok({ key: 'k', revision: 4 }));
  h.add('q', 'kv.get', { key: 'k' }, 20, 30, ok({ key: 'k', value: 1, revision: 4 }));
  t.ok(checkDurability(h.ops).ok);
  h.add(
    'q',
    'kv.get',
    { key: 'k', final: true },
    100,
    110,
    ok({ key: 'k', value: 0, revision: 2 }),
  );
  const r = checkDurability(h.ops);
  t.notOk(r.ok);
  t.equal(r.violations[0]!.property, 'lost-write');
  const d = new HistoryBuilder();
  d.add('a', 'kv.put', { key: 'k', value: 1 }, 0, 10, ok({ key: 'k', revision: 4 }));
  d.add('b', 'kv.delete', { key: 'k' }, 15, 5000, unknown());
  d.add('q', 'kv.get', { key: 'k' }, 20, 30, fail('not_found', 404));
  t.ok(checkDurability(d.ops).ok);
});

t.test('BC-26: a token granted to two holders is flagged', async (t) => {
  const h = new HistoryBuilder();
  h.add(
    'a',
    'lease.acquire',
    { name: 'L', holder: 'A', ttlMs: 3000 },
    0,
    10,
    ok({ name: 'L', holder: 'A', fencingToken: 3, ttlMs: 3000 }),
  );
  h.add(
    'b',
    'lease.acquire',
    { name: 'L', holder: 'B', ttlMs: 3000 },
    9000,
    9010,
    ok({ name: 'L', holder: 'B', fencingToken: 3, ttlMs: 3000 }),
  );
  const r = checkDurability(h.ops);
  t.notOk(r.ok);
  t.equal(r.violations[0]!.property, 'token-reissued');
});

t.test('a released token granted again to the same holder is flagged', async (t) => {
  const h = new HistoryBuilder();
  h.add(
    'a',
    'lease.acquire',
    { name: 'L', holder: 'A', ttlMs: 3000 },
    0,
    10,
    ok({ name: 'L', holder: 'A', fencingToken: 3, ttlMs: 3000 }),
  );
  h.add(
    'a',
    'lease.release',
    { name: 'L', holder: 'A', fencingToken: 3 },
    20,
    30,
    ok({ name: 'L', released: true }),
  );
  h.add(
    'a',
    'lease.acquire',
    { name: 'L', holder: 'A', ttlMs: 3000 },
    40,
    50,
    ok({ name: 'L', holder: 'A', fencingToken: 3, ttlMs: 3000 }),
  );
  t.notOk(checkDurability(h.ops).ok);
});

t.test('an idempotent retry must return the first outcome', async (t) => {
  const h = new HistoryBuilder();
  const args = { key: 'c', value: 1, ifRevision: 0, idempotencyKey: 'k1' };
  h.add('a', 'kv.put', { ...args, attempt: 1 }, 0, 5000, unknown());
  h.add('a', 'kv.put', { ...args, attempt: 2 }, 5000, 5010, ok({ key: 'c', revision: 7 }));
  h.add('a', 'kv.put', { ...args, attempt: 3 }, 5020, 5030, ok({ key: 'c', revision: 7 }));
  t.ok(checkDurability(h.ops).ok);
  h.add('a', 'kv.put', { ...args, attempt: 4 }, 5040, 5050, fail('revision_mismatch'));
  const r = checkDurability(h.ops);
  t.notOk(r.ok);
  t.equal(r.violations[0]!.property, 'idempotency-replay');
});

t.test('BC-13: counter increments applied twice or lost are flagged', async (t) => {
  const mk = (finalValue: number) => {
    const h = new HistoryBuilder();
    h.add(
      'a',
      'kv.put',
      { key: 'c', value: 1, ifRevision: 0, counter: true, idempotencyKey: 'i1' },
      0,
      10,
      ok({ key: 'c', revision: 2 }),
    );
    // Applied but reported as a failure: the retry was not deduplicated.
    h.add(
      'a',
      'kv.put',
      { key: 'c', value: 2, ifRevision: 2, counter: true, idempotencyKey: 'i2', attempt: 1 },
      20,
      5000,
      unknown(),
    );
    h.add(
      'a',
      'kv.put',
      { key: 'c', value: 2, ifRevision: 2, counter: true, idempotencyKey: 'i2', attempt: 2 },
      5000,
      5010,
      fail('revision_mismatch'),
    );
    h.add(
      'a',
      'kv.put',
      { key: 'c', value: 3, ifRevision: 5, counter: true, idempotencyKey: 'i3' },
      5100,
      5110,
      ok({ key: 'c', revision: 8 }),
    );
    h.add(
      'a',
      'kv.get',
      { key: 'c', final: true },
      6000,
      6010,
      ok({ key: 'c', value: finalValue, revision: 8 }),
    );
    return checkDurability(h.ops);
  };
  const r = mk(3);
  t.notOk(r.ok, 'final 3 but only 2 acknowledged and 0 unknown');
  t.equal(r.violations[0]!.property, 'counter-mismatch');
  t.notOk(mk(1).ok, 'an acknowledged increment lost');
  t.ok(mk(2).ok);
});

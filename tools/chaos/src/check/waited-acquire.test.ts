// Regression case for a chaos report ("no linearization of kv:…-L0-data + lease:…-L0: op lease.acquire
// {waitMs: 1787} → fail 409 held cannot be explained"), reduced to its lease: B's waited acquire is
// withdrawn while A holds the lease (an earlier attempt's connection went away during a rolling
// restart); B's retry is answered after A's ttl ran out. The server used to name today's holder
// (nobody: `held` with holder null and no lock-delay), which no linearization explains — the checker
// is right to refuse it. It now names the holder when the waiter was withdrawn, which is linearizable.
import t from 'tap';
import { checkLinearizability } from './linearizability.js';
import { HistoryBuilder, fail, ok } from './testing.js';

const opts = { maxDriftRatio: 0.01, searchBudgetMs: 10_000 };
const L = 'L0';

function history(heldBy: string | null): HistoryBuilder {
  const h = new HistoryBuilder();
  h.add(
    'a',
    'lease.acquire',
    { name: L, holder: 'A', ttlMs: 2000 },
    0,
    10,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 2000 }),
  );
  // Long interval: two rolling restarts (cluster time froze while leaderless).
  h.add(
    'b',
    'lease.acquire',
    { name: L, holder: 'B', ttlMs: 2000, waitMs: 1787 },
    100,
    6300,
    fail('held', 409, { error: { code: 'held', holder: heldBy } }),
  );
  h.add(
    'c',
    'lease.acquire',
    { name: L, holder: 'C', ttlMs: 2000 },
    5000,
    5010,
    ok({ name: L, holder: 'C', fencingToken: 5, ttlMs: 2000 }),
  );
  return h;
}

t.test('a withdrawn waiter answered with the holder at withdrawal is linearizable', async (t) => {
  const r = checkLinearizability(history('A').ops, opts);
  t.ok(r.ok, JSON.stringify(r.violations));
});

t.test('held with nobody holding (no lock-delay) is refused', async (t) => {
  const r = checkLinearizability(history(null).ops, opts);
  t.notOk(r.ok);
  t.equal(r.violations[0]?.property, 'linearizability');
  t.match(r.violations[0]?.message, /lease\.acquire/);
});

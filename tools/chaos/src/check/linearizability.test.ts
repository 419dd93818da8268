// Proves the linearizability checker accepts valid lease/election/KV histories (with unknown outcomes
// and expiry) and flags stale reads, double grants, early expiry and lost writes — including the
// exact history `?consistency=stale` produces on a deposed leader during a partition (BC-08).
import t from 'tap';
import { checkLinearizability, partitionOps } from './linearizability.js';
import { HistoryBuilder, ok, fail, unknown } from './testing.js';
import type { JsonObject, OpOutcome } from '../types.js';

const opts = { maxDriftRatio: 0.01, searchBudgetMs: 10_000 };
const L = 'L';

t.test('sequential acquire / renew / release / get is linearizable', async (t) => {
  const h = new HistoryBuilder();
  h.add(
    'a',
    'lease.acquire',
    { name: L, holder: 'A', ttlMs: 3000 },
    0,
    10,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
  );
  h.add(
    'q',
    'lease.get',
    { name: L },
    20,
    30,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000, remainingMs: 2900 }),
  );
  h.add(
    'a',
    'lease.renew',
    { name: L, holder: 'A', fencingToken: 1 },
    40,
    50,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
  );
  h.add(
    'b',
    'lease.acquire',
    { name: L, holder: 'B', ttlMs: 3000 },
    60,
    70,
    fail('held', 409, { error: { code: 'held', holder: 'A' } }),
  );
  h.add(
    'a',
    'lease.release',
    { name: L, holder: 'A', fencingToken: 1 },
    80,
    90,
    ok({ name: L, released: true }),
  );
  h.add('q', 'lease.get', { name: L }, 100, 110, fail('not_found', 404));
  h.add(
    'b',
    'lease.acquire',
    { name: L, holder: 'B', ttlMs: 3000 },
    120,
    130,
    ok({ name: L, holder: 'B', fencingToken: 7, ttlMs: 3000 }),
  );
  const r = checkLinearizability(h.ops, opts);
  t.ok(r.ok, JSON.stringify(r.violations));
  t.equal(r.stats['partitions'], 1);
});

t.test('concurrent ops may be reordered within their intervals', async (t) => {
  const h = new HistoryBuilder();
  // A's acquire and Q's read overlap; Q sees A although A's response came later.
  h.add(
    'a',
    'lease.acquire',
    { name: L, holder: 'A', ttlMs: 3000 },
    0,
    100,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
  );
  h.add(
    'q',
    'lease.get',
    { name: L },
    10,
    20,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000, remainingMs: 2990 }),
  );
  t.ok(checkLinearizability(h.ops, opts).ok);
});

t.test('BC-08: a stale read of A/t1 after B was granted t2 is flagged', async (t) => {
  const h = new HistoryBuilder();
  h.add(
    'a',
    'lease.acquire',
    { name: L, holder: 'A', ttlMs: 3000 },
    0,
    10,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
    'n1',
  );
  // Partition: N1 (old leader) is cut off from N2/N3. A releases through N2, B acquires through N2.
  h.add(
    'a',
    'lease.release',
    { name: L, holder: 'A', fencingToken: 1 },
    1000,
    1500,
    ok({ name: L, released: true }),
    'n2',
  );
  h.add(
    'b',
    'lease.acquire',
    { name: L, holder: 'B', ttlMs: 3000 },
    1600,
    1700,
    ok({ name: L, holder: 'B', fencingToken: 2, ttlMs: 3000 }),
    'n2',
  );
  // Q reads with ?consistency=stale on N1 after B's grant completed: N1 still answers A/t1.
  const stale = h.add(
    'q',
    'lease.get',
    { name: L, consistency: 'stale' },
    1800,
    1801,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000, remainingMs: 1200 }),
    'n1',
  );
  const r = checkLinearizability(h.ops, opts);
  t.notOk(r.ok);
  t.equal(r.violations.length, 1);
  t.equal(r.violations[0]!.property, 'linearizability');
  t.ok(r.violations[0]!.opIds!.includes(stale), 'names the stale read');
});

t.test(
  'BC-08 variant by expiry: A never releases; B granted after ttl; stale read of A is flagged',
  async (t) => {
    const h = new HistoryBuilder();
    h.add(
      'a',
      'lease.acquire',
      { name: L, holder: 'A', ttlMs: 3000 },
      0,
      10,
      ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
      'n1',
    );
    h.add(
      'q',
      'lease.get',
      { name: L, consistency: 'stale' },
      1000,
      1001,
      ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000, remainingMs: 2000 }),
      'n1',
    );
    h.add(
      'b',
      'lease.acquire',
      { name: L, holder: 'B', ttlMs: 3000, waitMs: 5000 },
      500,
      3400,
      ok({ name: L, holder: 'B', fencingToken: 2, ttlMs: 3000 }),
      'n2',
    );
    const ok1 = checkLinearizability(h.ops, opts);
    t.ok(ok1.ok, "reads before B's grant may see A");
    h.add(
      'q',
      'lease.get',
      { name: L, consistency: 'stale' },
      3500,
      3501,
      ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000, remainingMs: 10 }),
      'n1',
    );
    t.notOk(checkLinearizability(h.ops, opts).ok);
  },
);

t.test(
  'expiry is allowed only after ttl × (1 − drift): an early second grant is flagged',
  async (t) => {
    const early = new HistoryBuilder();
    early.add(
      'a',
      'lease.acquire',
      { name: L, holder: 'A', ttlMs: 3000 },
      0,
      10,
      ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
    );
    early.add(
      'b',
      'lease.acquire',
      { name: L, holder: 'B', ttlMs: 3000 },
      2000,
      2100,
      ok({ name: L, holder: 'B', fencingToken: 2, ttlMs: 3000 }),
    );
    t.notOk(
      checkLinearizability(early.ops, opts).ok,
      "granted to B 2.1 s after A's send with ttl 3 s",
    );
    const late = new HistoryBuilder();
    late.add(
      'a',
      'lease.acquire',
      { name: L, holder: 'A', ttlMs: 3000 },
      0,
      10,
      ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
    );
    late.add(
      'b',
      'lease.acquire',
      { name: L, holder: 'B', ttlMs: 3000 },
      2900,
      3000,
      ok({ name: L, holder: 'B', fencingToken: 2, ttlMs: 3000 }),
    );
    t.ok(checkLinearizability(late.ops, opts).ok, 'B may be granted once 2970 ms have passed');
    // A renewal moves the bound: renewed at 1000, so B at 3000 is early.
    const renewed = new HistoryBuilder();
    renewed.add(
      'a',
      'lease.acquire',
      { name: L, holder: 'A', ttlMs: 3000 },
      0,
      10,
      ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
    );
    renewed.add(
      'a',
      'lease.renew',
      { name: L, holder: 'A', fencingToken: 1 },
      1000,
      1010,
      ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
    );
    renewed.add(
      'b',
      'lease.acquire',
      { name: L, holder: 'B', ttlMs: 3000 },
      2900,
      3000,
      ok({ name: L, holder: 'B', fencingToken: 2, ttlMs: 3000 }),
    );
    t.notOk(checkLinearizability(renewed.ops, opts).ok);
  },
);

t.test('two simultaneous holders and token reuse are flagged', async (t) => {
  const h = new HistoryBuilder();
  h.add(
    'a',
    'lease.acquire',
    { name: L, holder: 'A', ttlMs: 3000 },
    0,
    10,
    ok({ name: L, holder: 'A', fencingToken: 5, ttlMs: 3000 }),
  );
  h.add(
    'a',
    'lease.release',
    { name: L, holder: 'A', fencingToken: 5 },
    20,
    30,
    ok({ name: L, released: true }),
  );
  h.add(
    'b',
    'lease.acquire',
    { name: L, holder: 'B', ttlMs: 3000 },
    40,
    50,
    ok({ name: L, holder: 'B', fencingToken: 5, ttlMs: 3000 }),
  );
  t.notOk(checkLinearizability(h.ops, opts).ok, 'token 5 reissued');
  const two = new HistoryBuilder();
  two.add(
    'a',
    'lease.acquire',
    { name: L, holder: 'A', ttlMs: 3000 },
    0,
    10,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
  );
  two.add(
    'b',
    'lease.acquire',
    { name: L, holder: 'B', ttlMs: 3000 },
    20,
    30,
    ok({ name: L, holder: 'B', fencingToken: 2, ttlMs: 3000 }),
  );
  t.notOk(checkLinearizability(two.ops, opts).ok, 'B granted while A live');
});

t.test('unknown outcomes: may take effect late, or never', async (t) => {
  const never = new HistoryBuilder();
  never.add('a', 'lease.acquire', { name: L, holder: 'A', ttlMs: 3000 }, 0, 5000, unknown());
  never.add(
    'b',
    'lease.acquire',
    { name: L, holder: 'B', ttlMs: 3000 },
    100,
    200,
    ok({ name: L, holder: 'B', fencingToken: 3, ttlMs: 3000 }),
  );
  t.ok(checkLinearizability(never.ops, opts).ok, 'unknown acquire never took effect');
  const late = new HistoryBuilder();
  late.add('a', 'lease.acquire', { name: L, holder: 'A', ttlMs: 3000 }, 0, 100, unknown());
  late.add('q', 'lease.get', { name: L }, 200, 210, fail('not_found', 404));
  late.add(
    'q',
    'lease.get',
    { name: L },
    300,
    310,
    ok({ name: L, holder: 'A', fencingToken: 9, ttlMs: 3000, remainingMs: 2999 }),
  );
  late.add(
    'b',
    'lease.acquire',
    { name: L, holder: 'B', ttlMs: 3000 },
    400,
    410,
    fail('held', 409, { error: { code: 'held', holder: 'A' } }),
  );
  t.ok(checkLinearizability(late.ops, opts).ok, 'unknown acquire took effect after its timeout');
  const unseen = new HistoryBuilder();
  unseen.add(
    'q',
    'lease.get',
    { name: L },
    300,
    310,
    ok({ name: L, holder: 'A', fencingToken: 9, ttlMs: 3000, remainingMs: 2999 }),
  );
  t.notOk(checkLinearizability(unseen.ops, opts).ok, 'a holder nobody asked for');
});

t.test('waited acquire is linearized at its grant', async (t) => {
  const h = new HistoryBuilder();
  h.add(
    'a',
    'lease.acquire',
    { name: L, holder: 'A', ttlMs: 3000 },
    0,
    10,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
  );
  h.add(
    'b',
    'lease.acquire',
    { name: L, holder: 'B', ttlMs: 3000, waitMs: 5000 },
    20,
    1020,
    ok({ name: L, holder: 'B', fencingToken: 2, ttlMs: 3000 }),
  );
  h.add(
    'a',
    'lease.release',
    { name: L, holder: 'A', fencingToken: 1 },
    1000,
    1010,
    ok({ name: L, released: true }),
  );
  t.ok(checkLinearizability(h.ops, opts).ok);
});

t.test(
  'a waited 409 decided at its deadline in cluster time (chaos slice, op #7917 lease.acquire)',
  async (t) => {
    // The shape of the reported history: A holds L (ttl 4000); W waits 1787 ms, but rolling
    // restarts freeze cluster time, so W's answer comes 6.2 s later in real time, after A's ttl
    // ran out in real time. Then C acquires the free name.
    const history = (wAnswer: ReturnType<typeof ok>) => {
      const h = new HistoryBuilder();
      h.add(
        'a',
        'lease.acquire',
        { name: L, holder: 'A', ttlMs: 4000 },
        0,
        10,
        ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 4000 }),
      );
      h.add(
        'w',
        'lease.acquire',
        { name: L, holder: 'W', ttlMs: 4000, waitMs: 1787 },
        2500,
        8700,
        wAnswer,
      );
      h.add(
        'c',
        'lease.acquire',
        { name: L, holder: 'C', ttlMs: 4000 },
        8800,
        8810,
        ok({ name: L, holder: 'C', fencingToken: 9, ttlMs: 4000 }),
      );
      return h.ops;
    };
    // Before the fix the server let W time out in the entry that also ended A's grant (cluster
    // time had jumped past both) and answered `held` naming nobody, with no lock-delay in play:
    // no state explains that, and the checker must keep saying so.
    const nobody = checkLinearizability(
      history(fail('held', 409, { error: { code: 'held', holder: null } })),
      opts,
    );
    t.notOk(nobody.ok, 'held with holder null and no lock-delay is a violation');
    t.equal(nobody.violations[0]?.property, 'linearizability');
    // Fixed server: a deadline reached while A still held L names A (linearized before the expiry,
    // which is allowed and never required) ...
    const named = checkLinearizability(
      history(fail('held', 409, { error: { code: 'held', holder: 'A' } })),
      opts,
    );
    t.ok(named.ok, JSON.stringify(named.violations));
    // ... and a name that fell free before the deadline goes to the waiter (granted at a real
    // time past its wait), whose grant may in turn have run out before C's acquire.
    const granted = checkLinearizability(
      history(ok({ name: L, holder: 'W', fencingToken: 5, ttlMs: 4000 })),
      opts,
    );
    t.ok(granted.ok, JSON.stringify(granted.violations));
  },
);

t.test('BC-12: a replayed release of an old token must not free the new grant', async (t) => {
  const h = new HistoryBuilder();
  h.add(
    'a',
    'lease.acquire',
    { name: L, holder: 'A', ttlMs: 3000 },
    0,
    10,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
  );
  h.add(
    'a',
    'lease.release',
    { name: L, holder: 'A', fencingToken: 1 },
    20,
    30,
    ok({ name: L, released: true }),
  );
  h.add(
    'a',
    'lease.acquire',
    { name: L, holder: 'A', ttlMs: 3000 },
    40,
    50,
    ok({ name: L, holder: 'A', fencingToken: 2, ttlMs: 3000 }),
  );
  h.add(
    'a',
    'lease.release',
    { name: L, holder: 'A', fencingToken: 1 },
    60,
    70,
    ok({ name: L, released: true }),
  );
  t.notOk(checkLinearizability(h.ops, opts).ok, 'release of t1 acked while t2 is current');
  const good = new HistoryBuilder();
  good.ops.push(...h.ops.slice(0, 3));
  good.add(
    'a',
    'lease.release',
    { name: L, holder: 'A', fencingToken: 1 },
    60,
    70,
    fail('not_holder'),
  );
  good.add(
    'b',
    'lease.acquire',
    { name: L, holder: 'B', ttlMs: 3000 },
    80,
    90,
    fail('held', 409, { error: { code: 'held', holder: 'A' } }),
  );
  t.ok(checkLinearizability(good.ops, opts).ok);
});

t.test('KV: stale read after a newer write, lost write, conditional writes', async (t) => {
  const h = new HistoryBuilder();
  h.add('a', 'kv.put', { key: 'k', value: 1 }, 0, 10, ok({ key: 'k', revision: 5 }));
  h.add(
    'a',
    'kv.put',
    { key: 'k', value: 2, ifRevision: 5 },
    20,
    30,
    ok({ key: 'k', revision: 8 }),
  );
  h.add('b', 'kv.put', { key: 'k', value: 9, ifRevision: 5 }, 40, 50, fail('revision_mismatch'));
  h.add('q', 'kv.get', { key: 'k' }, 60, 70, ok({ key: 'k', value: 2, revision: 8 }));
  t.ok(checkLinearizability(h.ops, opts).ok);
  h.add('q', 'kv.get', { key: 'k' }, 80, 90, ok({ key: 'k', value: 1, revision: 5 }));
  t.notOk(checkLinearizability(h.ops, opts).ok, 'stale read of value 1 after value 2 was read');
  const lost = new HistoryBuilder();
  lost.add('a', 'kv.put', { key: 'k', value: 1 }, 0, 10, ok({ key: 'k', revision: 5 }));
  lost.add('q', 'kv.get', { key: 'k' }, 100, 110, fail('not_found', 404));
  t.notOk(checkLinearizability(lost.ops, opts).ok, 'acked write not visible');
  const cond = new HistoryBuilder();
  cond.add(
    'a',
    'kv.put',
    { key: 'k', value: 1, ifRevision: 0 },
    0,
    10,
    ok({ key: 'k', revision: 5 }),
  );
  cond.add(
    'b',
    'kv.put',
    { key: 'k', value: 1, ifRevision: 0 },
    20,
    30,
    ok({ key: 'k', revision: 6 }),
  );
  t.notOk(checkLinearizability(cond.ops, opts).ok, 'create-if-absent succeeded twice');
});

t.test('fenced KV writes join the lease partition and need the live token', async (t) => {
  const h = new HistoryBuilder();
  h.add(
    'a',
    'lease.acquire',
    { name: L, holder: 'A', ttlMs: 3000 },
    0,
    10,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
  );
  h.add(
    'a',
    'kv.put',
    { key: 'k', value: 'x', fence: { lease: L, fencingToken: 1 } },
    20,
    30,
    ok({ key: 'k', revision: 3 }),
  );
  h.add(
    'a',
    'lease.release',
    { name: L, holder: 'A', fencingToken: 1 },
    40,
    50,
    ok({ name: L, released: true }),
  );
  t.equal(partitionOps(h.ops).length, 1);
  t.ok(checkLinearizability(h.ops, opts).ok);
  h.add(
    'a',
    'kv.put',
    { key: 'k', value: 'y', fence: { lease: L, fencingToken: 1 } },
    60,
    70,
    ok({ key: 'k', revision: 4 }),
  );
  t.notOk(checkLinearizability(h.ops, opts).ok, 'fenced write with a released token accepted');
});

t.test('elections: campaign, promotion on resign, proclaim, stale leader read', async (t) => {
  const h = new HistoryBuilder();
  const G = 'g';
  h.add(
    'p',
    'election.campaign',
    { group: G, candidate: 'P', ttlMs: 5000, value: 'p' },
    0,
    10,
    ok({
      group: G,
      candidate: 'P',
      elected: true,
      fencingToken: 1,
      leader: { candidate: 'P', value: 'p', fencingToken: 1 },
    }),
  );
  h.add(
    'q',
    'election.campaign',
    { group: G, candidate: 'Q', ttlMs: 5000, value: 'q' },
    20,
    30,
    ok({
      group: G,
      candidate: 'Q',
      elected: false,
      leader: { candidate: 'P', value: 'p', fencingToken: 1 },
    }),
  );
  h.add(
    'p',
    'election.proclaim',
    { group: G, candidate: 'P', fencingToken: 1, value: 'p2' },
    40,
    50,
    ok({ group: G, leader: { candidate: 'P', value: 'p2', fencingToken: 1 } }),
  );
  h.add(
    'p',
    'election.resign',
    { group: G, candidate: 'P' },
    60,
    70,
    ok({ group: G, resigned: true }),
  );
  h.add(
    'r',
    'election.get',
    { group: G },
    80,
    90,
    ok({
      group: G,
      leader: { candidate: 'Q', value: 'q', fencingToken: 2 },
      candidates: [],
      revision: 4,
    }),
  );
  h.add(
    'p',
    'election.proclaim',
    { group: G, candidate: 'P', fencingToken: 1, value: 'p3' },
    100,
    110,
    fail('not_holder'),
  );
  t.ok(
    checkLinearizability(h.ops, opts).ok,
    JSON.stringify(checkLinearizability(h.ops, opts).violations),
  );
  h.add(
    'r',
    'election.get',
    { group: G },
    120,
    130,
    ok({
      group: G,
      leader: { candidate: 'P', value: 'p2', fencingToken: 1 },
      candidates: [],
      revision: 3,
    }),
  );
  t.notOk(checkLinearizability(h.ops, opts).ok, 'old leader read after the new one');
});

t.test(
  'elections: the next candidate is promoted when the leader expires, not before',
  async (t) => {
    const G = 'g';
    const mk = (readAt: number): boolean => {
      const h = new HistoryBuilder();
      h.add(
        'p',
        'election.campaign',
        { group: G, candidate: 'P', ttlMs: 2000, value: null },
        0,
        10,
        ok({
          group: G,
          candidate: 'P',
          elected: true,
          fencingToken: 1,
          leader: { candidate: 'P', value: null, fencingToken: 1 },
        }),
      );
      h.add(
        'q',
        'election.campaign',
        { group: G, candidate: 'Q', ttlMs: 60000, value: null },
        20,
        30,
        ok({
          group: G,
          candidate: 'Q',
          elected: false,
          leader: { candidate: 'P', value: null, fencingToken: 1 },
        }),
      );
      h.add(
        'r',
        'election.get',
        { group: G },
        readAt,
        readAt + 10,
        ok({
          group: G,
          leader: { candidate: 'Q', value: null, fencingToken: 2 },
          candidates: [],
          revision: 2,
        }),
      );
      return checkLinearizability(h.ops, opts).ok;
    };
    t.notOk(mk(1000), "Q leader 1 s into P's 2 s candidacy");
    t.ok(mk(2500), 'Q leader after P lapsed');
  },
);

t.test('a budget that is too small reports unknown instead of hanging', async (t) => {
  const h = new HistoryBuilder();
  for (let i = 0; i < 40; i++)
    h.add(
      `c${i}`,
      'lease.acquire',
      { name: L, holder: `H${i}`, ttlMs: 3000 },
      i,
      100_000,
      unknown(),
    );
  h.add(
    'q',
    'lease.get',
    { name: L },
    200_000,
    200_010,
    ok({ name: L, holder: 'nobody', fencingToken: 1, ttlMs: 3000, remainingMs: 1 }),
  );
  const r = checkLinearizability(h.ops, {
    maxDriftRatio: 0.01,
    searchBudgetMs: 2000,
    stepsMaxPerPartition: 3000,
  });
  t.ok(r.ok, 'unknown is not a violation');
  t.equal(r.stats['partitionsUnknown'], 1);
});

/** A holds token 1 from t=0; an operator revokes `revoke` at [100, 110] with `outcome`. */
function revokedLease(revoke: JsonObject, outcome: OpOutcome): HistoryBuilder {
  const h = new HistoryBuilder();
  h.add(
    'a',
    'lease.acquire',
    { name: L, holder: 'A', ttlMs: 3000 },
    0,
    10,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
  );
  h.add('op', 'lease.revoke', { name: L, ...revoke }, 100, 110, outcome);
  return h;
}

t.test(
  'revoke ends the grant at once: renew refused, next grant higher, history shows it',
  async (t) => {
    for (const revoke of [{}, { fencingToken: 1 }]) {
      const h = revokedLease(revoke, ok({ name: L, revoked: [1] }));
      h.add(
        'a',
        'lease.renew',
        { name: L, holder: 'A', fencingToken: 1 },
        120,
        130,
        fail('lease_expired'),
      );
      h.add(
        'b',
        'lease.acquire',
        { name: L, holder: 'B', ttlMs: 3000 },
        140,
        150,
        ok({ name: L, holder: 'B', fencingToken: 4, ttlMs: 3000 }),
      );
      h.add(
        'q',
        'lease.history',
        { name: L },
        160,
        170,
        ok({
          name: L,
          grants: [
            { holder: 'B', fencingToken: 4, grantedAtMs: 9, endedAtMs: null, endReason: null },
            { holder: 'A', fencingToken: 1, grantedAtMs: 1, endedAtMs: 5, endReason: 'revoked' },
          ],
        }),
      );
      h.add('op', 'lease.revoke', { name: L, fencingToken: 1 }, 180, 190, fail('not_holder'));
      const r = checkLinearizability(h.ops, opts);
      t.ok(r.ok, JSON.stringify(r.violations));
    }
  },
);

t.test('a revoked token still live after the ack is not linearizable', async (t) => {
  const h = revokedLease({}, ok({ name: L, revoked: [1] }));
  h.add(
    'q',
    'lease.get',
    { name: L },
    120,
    130,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000, remainingMs: 2800 }),
  );
  t.notOk(checkLinearizability(h.ops, opts).ok, 'GET shows the revoked grant');
  const w = revokedLease({ fencingToken: 1 }, ok({ name: L, revoked: [1] }));
  w.add(
    'a',
    'kv.put',
    { key: 'k', value: 1, fence: { lease: L, fencingToken: 1 } },
    120,
    130,
    ok({ key: 'k', revision: 3 }),
  );
  t.notOk(checkLinearizability(w.ops, opts).ok, 'a fenced write with the revoked token');
  const none = revokedLease({}, ok({ name: L, revoked: [] }));
  t.notOk(checkLinearizability(none.ops, opts).ok, 'revoked: [] while A certainly held it');
  const refused = revokedLease({ fencingToken: 1 }, fail('not_holder'));
  t.notOk(checkLinearizability(refused.ops, opts).ok, 'not_holder for the live token');
  const hist = revokedLease({}, unknown());
  hist.add('q', 'lease.history', { name: L }, 120, 130, ok({ name: L, grants: [] }));
  hist.add(
    'q',
    'lease.get',
    { name: L },
    140,
    150,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000, remainingMs: 2800 }),
  );
  t.notOk(
    checkLinearizability(hist.ops, opts).ok,
    'history says free, then a GET shows the grant again',
  );
});

t.test('grant_mismatch is allowed only to the current holder', async (t) => {
  const history = (holder: string): HistoryBuilder => {
    const h = new HistoryBuilder();
    h.add(
      'a',
      'lease.acquire',
      { name: L, holder: 'A', ttlMs: 3000 },
      0,
      10,
      ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: 3000 }),
    );
    h.add(
      'x',
      'lease.acquire',
      { name: L, holder, ttlMs: 3000, mode: 'shared' },
      20,
      30,
      fail('grant_mismatch', 409, { error: { code: 'grant_mismatch', holder } }),
    );
    return h;
  };
  t.ok(checkLinearizability(history('A').ops, opts).ok, 'the holder: another mode');
  t.notOk(checkLinearizability(history('B').ops, opts).ok, 'not the holder');
});

// Proves the holder-history checker fails on answers out of token order, with unknown reasons or
// overlapping exclusive grants, and on entries the clients contradict (another holder, a holder
// that never asked, a missing grant, an end nobody caused, an expiry before its time, a live grant
// after its release, a rewritten entry) — and passes a correct history whose ends are explained
// only by requests of unknown outcome.
import t from 'tap';
import { checkHolderHistory } from './holder-history.js';
import { HistoryBuilder, ok, unknown } from './testing.js';
import type { JsonObject } from '../types.js';

const L = 'L';
const DRIFT = 0.01;
const TTL = 1000;

/** An ok acquire of L by `holder` sent at `at`, acked 10 ms later, with `token`. */
function acquire(h: HistoryBuilder, holder: string, token: number, at: number): void {
  h.add(
    holder,
    'lease.acquire',
    { name: L, holder, ttlMs: TTL },
    at,
    at + 10,
    ok({ name: L, holder, fencingToken: token, ttlMs: TTL }),
  );
}

/** A history entry. */
function entry(
  holder: string,
  fencingToken: number,
  grantedAtMs: number,
  end: [number, string] | null,
): JsonObject {
  return {
    holder,
    fencingToken,
    mode: 'exclusive',
    grantedAtMs,
    endedAtMs: end === null ? null : end[0],
    endReason: end === null ? null : end[1],
  };
}

/** An ok history read of L over [at, at + 10]. */
function read(h: HistoryBuilder, at: number, grants: JsonObject[]): void {
  h.add('op', 'lease.history', { name: L, limit: 20 }, at, at + 10, ok({ name: L, grants }));
}

/** A releases token 1 at 100; B acquires token 2 at 200 and holds it. */
function base(): HistoryBuilder {
  const h = new HistoryBuilder();
  acquire(h, 'A', 1, 0);
  h.add(
    'A',
    'lease.release',
    { name: L, holder: 'A', fencingToken: 1 },
    100,
    110,
    ok({ name: L, released: true }),
  );
  acquire(h, 'B', 2, 200);
  return h;
}

const fine = [entry('B', 2, 5200, null), entry('A', 1, 5000, [5100, 'released'])];

function property(h: HistoryBuilder): string | undefined {
  return checkHolderHistory(h.ops, DRIFT).violations[0]?.property;
}

function properties(h: HistoryBuilder): string[] {
  return checkHolderHistory(h.ops, DRIFT).violations.map((v) => v.property);
}

t.test('a correct answer passes', async (t) => {
  const h = base();
  read(h, 300, fine);
  const r = checkHolderHistory(h.ops, DRIFT);
  t.ok(r.ok, JSON.stringify(r.violations));
  t.equal(r.stats['entriesChecked'], 2);
});

t.test('entries out of token order, unknown reasons and malformed entries fail', async (t) => {
  const h = base();
  read(h, 300, [fine[1]!, fine[0]!]);
  t.equal(property(h), 'history-order');
  const r = base();
  read(r, 300, [fine[0]!, entry('A', 1, 5000, [5100, 'evicted'])]);
  t.equal(property(r), 'history-end-reason');
  const m = base();
  read(m, 300, [fine[0]!, { ...entry('A', 1, 5000, null), endReason: 'released' }]);
  t.equal(property(m), 'history-malformed');
});

t.test('an exclusive grant starting before the previous one ended fails', async (t) => {
  const h = base();
  read(h, 300, [entry('B', 2, 5050, null), entry('A', 1, 5000, [5100, 'released'])]);
  t.equal(property(h), 'history-overlap');
  const live = base();
  read(live, 300, [entry('B', 2, 5200, null), entry('A', 1, 5000, null)]);
  t.equal(property(live), 'history-overlap');
});

t.test('a token answered to another holder, or a holder that never asked, fails', async (t) => {
  const h = base();
  read(h, 300, [entry('C', 2, 5200, null), fine[1]!]);
  const vs = checkHolderHistory(h.ops, DRIFT).violations.map((v) => v.property);
  t.ok(vs.includes('history-holder-mismatch'), vs.join());
  t.ok(vs.includes('history-phantom-holder'), vs.join());
});

t.test('a grant answered before the read and within its range but not listed fails', async (t) => {
  const h = base();
  read(h, 300, [entry('B', 2, 5200, null)]);
  t.ok(checkHolderHistory(h.ops, DRIFT).ok, 'token 1 is below the range of a one-entry answer');
  acquire(h, 'C', 3, 1300); // C was answered token 3 before the next read
  read(h, 1400, [entry('B', 2, 5200, [6300, 'expired'])]);
  t.equal(property(h), 'history-missing-grant');
});

t.test(
  'an end nobody caused fails; a revoke or release of unknown outcome explains it',
  async (t) => {
    const h = base();
    read(h, 300, [fine[0]!, entry('A', 1, 5000, [5100, 'revoked'])]);
    t.equal(property(h), 'history-unexplained-end');
    const ok2 = base();
    ok2.add('op', 'lease.revoke', { name: L }, 50, 2050, unknown());
    read(ok2, 300, [fine[0]!, entry('A', 1, 5000, [5100, 'revoked'])]);
    t.ok(checkHolderHistory(ok2.ops, DRIFT).ok, 'an unknown revoke may have ended it');
    const rel = new HistoryBuilder();
    acquire(rel, 'A', 1, 0);
    read(rel, 300, [entry('A', 1, 5000, [5100, 'released'])]);
    t.equal(property(rel), 'history-unexplained-end');
    rel.add('A', 'lease.release', { name: L, holder: 'A', fencingToken: 1 }, 100, 2100, unknown());
    t.ok(checkHolderHistory(rel.ops, DRIFT).ok, 'an unknown release may have ended it');
  },
);

t.test('an expiry before ttl × (1 − drift) of an acked renew fails', async (t) => {
  const h = new HistoryBuilder();
  acquire(h, 'A', 1, 0);
  h.add(
    'A',
    'lease.renew',
    { name: L, holder: 'A', fencingToken: 1 },
    400,
    410,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: TTL }),
  );
  read(h, 1200, [entry('A', 1, 5000, [6000, 'expired'])]);
  t.equal(property(h), 'history-early-expiry', 'read ended at 1210 < 400 + 990');
  const late = new HistoryBuilder();
  acquire(late, 'A', 1, 0);
  read(late, 1000, [entry('A', 1, 5000, [6000, 'expired'])]);
  t.ok(checkHolderHistory(late.ops, DRIFT).ok, 'read ended at 1010 ≥ 0 + 990');
  const cluster = new HistoryBuilder();
  acquire(cluster, 'A', 1, 0);
  read(cluster, 3000, [entry('A', 1, 5000, [5500, 'expired'])]);
  t.equal(property(cluster), 'history-early-expiry', 'ended 500 ms of cluster time after grant');
});

t.test('a live entry after an acked release, or a revived ended grant, fails', async (t) => {
  const h = base();
  read(h, 300, [fine[0]!, entry('A', 1, 5000, null)]);
  t.ok(properties(h).includes('history-end-contradicted'), properties(h).join());
  const revived = new HistoryBuilder();
  acquire(revived, 'A', 1, 0);
  read(revived, 1000, [entry('A', 1, 5000, [6000, 'expired'])]);
  revived.add(
    'A',
    'lease.renew',
    { name: L, holder: 'A', fencingToken: 1 },
    1100,
    1110,
    ok({ name: L, holder: 'A', fencingToken: 1, ttlMs: TTL }),
  );
  t.ok(properties(revived).includes('history-end-contradicted'), properties(revived).join());
});

t.test('a later read listing an earlier grant differently, or omitting it, fails', async (t) => {
  const h = base();
  read(h, 300, fine);
  read(h, 400, [entry('B', 2, 5200, null), entry('A', 1, 5000, [5150, 'released'])]);
  t.equal(property(h), 'history-rewritten');
  const omitted = base();
  acquire(omitted, 'C', 3, 1000);
  read(omitted, 300, [entry('B', 2, 5200, null)]);
  read(omitted, 2000, [entry('C', 3, 6000, null), entry('A', 1, 5000, [5100, 'released'])]);
  const vs = checkHolderHistory(omitted.ops, DRIFT).violations.map((v) => v.property);
  t.ok(vs.includes('history-rewritten'), vs.join());
  const later = base();
  read(later, 300, fine);
  read(later, 400, [entry('B', 2, 5200, [5300, 'revoked']), fine[1]!]);
  later.add('op', 'lease.revoke', { name: L }, 350, 360, ok({ name: L, revoked: [2] }));
  t.ok(checkHolderHistory(later.ops, DRIFT).ok, 'a live grant may end between reads');
});

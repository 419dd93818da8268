// Proves the checkers are sound on histories from a simulated correct server (concurrency, lost
// responses, late-applied requests, frozen expiry, operator revokes, holder-history reads: no
// violation), and that corrupting one read in such a history is caught by the linearizability
// checker, one history entry by the holder-history checker and one read after a revoke by the
// revoke checker.
import t from 'tap';
import { createRandom } from '../util/random.js';
import { simulateHistory } from './reference-sim.js';
import { checkLinearizability } from './linearizability.js';
import { checkFencing } from './fencing.js';
import { checkLeaseTiming } from './lease-timing.js';
import { checkDurability } from './durability.js';
import { checkRevokes } from './revoke.js';
import { checkHolderHistory } from './holder-history.js';
import { DEFAULT_TIMING } from './testing.js';
import type { HistoryOp, JsonObject } from '../types.js';

const seeds = Array.from({ length: 25 }, (_, i) => 1000 + i);

t.test('histories of a correct server pass every history checker', async (t) => {
  let ops = 0;
  let unknownPartitions = 0;
  let revokes = 0;
  let historyEntries = 0;
  for (const seed of seeds) {
    const h = simulateHistory({
      random: createRandom(seed),
      processes: 4,
      opsPerProcess: 40,
      lostProbability: 0.1,
      freezeMsMax: 200,
    });
    ops += h.length;
    const lin = checkLinearizability(h, { maxDriftRatio: 0.01, searchBudgetMs: 5000 });
    unknownPartitions += Number(lin.stats['partitionsUnknown']);
    if (!lin.ok) t.fail(`seed ${seed}: ${lin.violations[0]!.message}`);
    const fen = checkFencing(h, null);
    if (!fen.ok) t.fail(`seed ${seed} fencing: ${fen.violations[0]!.message}`);
    const tim = checkLeaseTiming(h, [], [], { timing: DEFAULT_TIMING });
    if (!tim.ok) t.fail(`seed ${seed} timing: ${tim.violations[0]!.message}`);
    const dur = checkDurability(h);
    if (!dur.ok) t.fail(`seed ${seed} durability: ${dur.violations[0]!.message}`);
    const rev = checkRevokes(h);
    if (!rev.ok) t.fail(`seed ${seed} revoke: ${rev.violations[0]!.message}`);
    revokes += Number(rev.stats['tokensRevoked']);
    const his = checkHolderHistory(h, 0.01);
    if (!his.ok) t.fail(`seed ${seed} holder-history: ${his.violations[0]!.message}`);
    historyEntries += Number(his.stats['entriesChecked']);
  }
  t.equal(unknownPartitions, 0, 'every search finished within budget');
  t.ok(ops > 2000, `checked ${ops} ops`);
  t.ok(revokes > 20, `${revokes} acknowledged revokes judged`);
  t.ok(historyEntries > 200, `${historyEntries} holder-history entries judged`);
});

/** Replaces the answer of the `n`-th ok lease.get showing a holder by an older token / other holder. */
function corruptRead(h: HistoryOp[], pick: number): HistoryOp[] | null {
  const reads = h.filter((o) => o.kind === 'lease.get' && o.outcome.status === 'ok');
  const target = reads[pick % Math.max(1, reads.length)];
  if (target === undefined || target.outcome.status !== 'ok') return null;
  const v = target.outcome.value as JsonObject;
  const forged: JsonObject = { ...v, holder: 'H-nobody' };
  return h.map((o) =>
    o === target ? { ...o, outcome: { status: 'ok', httpStatus: 200, value: forged } } : o,
  );
}

t.test('a forged read in a correct history is caught', async (t) => {
  let caught = 0;
  let tried = 0;
  for (const seed of seeds.slice(0, 10)) {
    const h = simulateHistory({
      random: createRandom(seed),
      processes: 4,
      opsPerProcess: 40,
      lostProbability: 0.1,
      freezeMsMax: 200,
    });
    const bad = corruptRead(h, seed);
    if (bad === null) continue;
    tried++;
    if (!checkLinearizability(bad, { maxDriftRatio: 0.01, searchBudgetMs: 5000 }).ok) caught++;
  }
  t.ok(tried >= 5, `${tried} histories corrupted`);
  t.equal(caught, tried, 'every forged holder is flagged');
});

/** Replaces the holder of the first ended entry of the `pick`-th history read with one that never asked. */
function forgeHistory(h: HistoryOp[], pick: number): HistoryOp[] | null {
  const reads = h.filter(
    (o) =>
      o.kind === 'lease.history' &&
      o.outcome.status === 'ok' &&
      ((o.outcome.value as JsonObject)['grants'] as JsonObject[]).some(
        (e) => e['endReason'] !== null,
      ),
  );
  const target = reads[pick % Math.max(1, reads.length)];
  if (target === undefined || target.outcome.status !== 'ok') return null;
  const v = target.outcome.value as JsonObject;
  const grants = v['grants'] as JsonObject[];
  const i = grants.findIndex((e) => e['endReason'] !== null);
  const forged = grants.map((e, j) => (j === i ? { ...e, holder: 'H-nobody' } : e));
  return h.map((o) =>
    o === target
      ? { ...o, outcome: { status: 'ok', httpStatus: 200, value: { ...v, grants: forged } } }
      : o,
  );
}

/** Makes the first ok GET of a lease sent after an acknowledged revoke show the revoked token. */
function forgeRevokedRead(h: HistoryOp[]): HistoryOp[] | null {
  for (const r of h) {
    const v = r.outcome.status === 'ok' ? (r.outcome.value as JsonObject) : null;
    const t = (v?.['revoked'] as number[] | undefined)?.[0];
    if (r.kind !== 'lease.revoke' || t === undefined || r.completeMs === null) continue;
    const get = h.find(
      (o) =>
        o.kind === 'lease.get' &&
        o.args['name'] === r.args['name'] &&
        o.outcome.status === 'ok' &&
        o.invokeMs > r.completeMs!,
    );
    if (get === undefined || get.outcome.status !== 'ok') continue;
    const value = { ...(get.outcome.value as JsonObject), fencingToken: t };
    return h.map((o) => (o === get ? { ...o, outcome: { ...get.outcome, value } } : o));
  }
  return null;
}

t.test('a forged history entry or a revoked token read live is caught', async (t) => {
  let forgedHistories = 0;
  let forgedReads = 0;
  for (const seed of seeds.slice(0, 10)) {
    const h = simulateHistory({
      random: createRandom(seed),
      processes: 4,
      opsPerProcess: 40,
      lostProbability: 0.1,
      freezeMsMax: 200,
    });
    const bad = forgeHistory(h, seed);
    if (bad !== null) {
      forgedHistories++;
      t.notOk(checkHolderHistory(bad, 0.01).ok, `seed ${seed}: forged history entry flagged`);
    }
    const read = forgeRevokedRead(h);
    if (read !== null) {
      forgedReads++;
      t.notOk(checkRevokes(read).ok, `seed ${seed}: revoked token read live flagged`);
    }
  }
  t.ok(forgedHistories >= 5, `${forgedHistories} histories with a forged entry`);
  t.ok(forgedReads >= 5, `${forgedReads} histories with a revoked token read live`);
});

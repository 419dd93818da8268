/**
 * Checker (e): durability and at-most-once effects (docs/concepts.md, §1.6, §1.7; BC-12, BC-13, BC-26).
 *
 * - `token-reissued`: one resource's token is never granted to two holders, and a holder that
 *   released token t and acquired again never gets t back.
 * - `lost-write`: an acknowledged KV write is visible to every later read: a read invoked after the
 *   put's ack answers with revision ≥ the acked revision (or 404 only if a delete of the key may
 *   have happened in between).
 * - `idempotency-replay`: all definite answers (2xx/4xx) to attempts with one Idempotency-Key are
 *   equal (status and body) — a repeat returns the first outcome.
 * - `counter-mismatch`: for KV counters incremented with conditional puts (`args.counter: true`,
 *   each increment a logical request with its own key), the final counter value read at the end is
 *   ≥ increments acknowledged and ≤ acknowledged + unknown (a retry that applied twice, or an applied
 *   request reported as failed, shows up here).
 */
import type { Checker, CheckResult, HistoryOp, RunRecord, Violation } from '../types.js';
import { canonicalJson, describeOp, effectOf, num, okValue, str } from './history.js';
import { IDEMPOTENCY_WINDOW_MS, logicalKey, mergeAttempts } from './merge.js';
import { tokenObservations } from './fencing.js';

/** Checks the history (attempts are merged here where needed). */
export function checkDurability(rawOps: readonly HistoryOp[]): CheckResult {
  const ops = mergeAttempts(rawOps);
  const violations: Violation[] = [
    ...tokenReissue(ops),
    ...lostWrites(ops),
    ...idempotencyReplay(rawOps),
    ...counters(ops),
  ];
  return {
    ok: violations.length === 0,
    violations,
    stats: {
      opsLogical: ops.length,
      idempotencyKeys: new Set(rawOps.map(logicalKey).filter((k) => k !== null)).size,
      kvWritesAcked: ops.filter((o) => o.kind === 'kv.put' && o.outcome.status === 'ok').length,
    },
  };
}

function tokenReissue(ops: readonly HistoryOp[]): Violation[] {
  const out: Violation[] = [];
  const owner = new Map<string, { holder: string; op: HistoryOp }>();
  for (const o of tokenObservations(ops)) {
    if (o.holder === null) continue;
    const k = `${o.resource}#${o.token}`;
    const first = owner.get(k);
    if (first === undefined) owner.set(k, { holder: o.holder, op: o.op });
    else if (first.holder !== o.holder) {
      out.push({
        property: 'token-reissued',
        opIds: [first.op.opId, o.op.opId],
        timeMs: o.op.completeMs ?? o.op.invokeMs,
        message: `${o.resource} token ${o.token} granted to ${first.holder} (${describeOp(first.op)}) and to ${o.holder} (${describeOp(o.op)})`,
      });
    }
  }
  // Same holder, same token after an acked release of that token (a new grant must get a new token).
  const releases = ops.filter((o) => o.kind === 'lease.release' && o.outcome.status === 'ok');
  for (const acq of ops) {
    const v = okValue(acq.outcome);
    if (acq.kind !== 'lease.acquire' || v === null) continue;
    const rel = releases.find(
      (r) =>
        r.completeMs !== null &&
        r.completeMs < acq.invokeMs &&
        str(r.args, 'name') === str(acq.args, 'name') &&
        str(r.args, 'holder') === str(v, 'holder') &&
        num(r.args, 'fencingToken') === num(v, 'fencingToken'),
    );
    if (rel !== undefined) {
      out.push({
        property: 'token-reissued',
        opIds: [rel.opId, acq.opId],
        timeMs: acq.completeMs ?? acq.invokeMs,
        message: `lease:${str(acq.args, 'name')} token ${num(v, 'fencingToken')} released (${describeOp(rel)}) and granted again (${describeOp(acq)})`,
      });
    }
  }
  return out;
}

function lostWrites(ops: readonly HistoryOp[]): Violation[] {
  const out: Violation[] = [];
  const byKey = new Map<string, HistoryOp[]>();
  for (const o of ops) {
    if (!o.kind.startsWith('kv.')) continue;
    const k = str(o.args, 'key');
    if (k === null) continue;
    const l = byKey.get(k);
    if (l === undefined) byKey.set(k, [o]);
    else l.push(o);
  }
  for (const [key, list] of byKey) {
    const puts = list
      .filter(
        (o) =>
          o.kind === 'kv.put' &&
          o.outcome.status === 'ok' &&
          o.completeMs !== null &&
          num(okValue(o.outcome), 'revision') !== null,
      )
      .sort((a, b) => a.completeMs! - b.completeMs!);
    const deletes = list.filter((o) => o.kind === 'kv.delete' && effectOf(o.outcome) !== 'fail');
    const reads = list
      .filter(
        (o) =>
          o.kind === 'kv.get' &&
          (o.outcome.status === 'ok' ||
            (o.outcome.status === 'fail' && o.outcome.code === 'not_found')) &&
          str(o.args, 'consistency') !== 'stale',
      )
      .sort((a, b) => a.invokeMs - b.invokeMs);
    let j = 0;
    let best: HistoryOp | null = null;
    for (const r of reads) {
      while (j < puts.length && puts[j]!.completeMs! < r.invokeMs) {
        const p = puts[j++]!;
        if (
          best === null ||
          num(okValue(p.outcome), 'revision')! > num(okValue(best.outcome), 'revision')!
        )
          best = p;
      }
      if (best === null) continue;
      const acked = num(okValue(best.outcome), 'revision')!;
      const deletedSince = deletes.some(
        (d) =>
          d.invokeMs < (r.completeMs ?? Infinity) &&
          (d.completeMs === null ||
            effectOf(d.outcome) === 'maybe' ||
            d.completeMs > best!.invokeMs),
      );
      const got = num(okValue(r.outcome), 'revision');
      if (got === null ? !deletedSince : got < acked) {
        out.push({
          property: 'lost-write',
          opIds: [best.opId, r.opId],
          timeMs: r.invokeMs,
          message: `kv ${key}: write acked at revision ${acked} (${describeOp(best)}) but a later read answered ${got === null ? '404' : `revision ${got}`} (${describeOp(r)})`,
        });
      }
    }
  }
  return out;
}

function idempotencyReplay(rawOps: readonly HistoryOp[]): Violation[] {
  const out: Violation[] = [];
  const first = new Map<string, HistoryOp>();
  for (const o of [...rawOps].sort(
    (a, b) => (a.completeMs ?? Infinity) - (b.completeMs ?? Infinity),
  )) {
    const k = logicalKey(o);
    if (k === null || effectOf(o.outcome) === 'maybe') continue;
    const f = first.get(k);
    // Past the window the server may have forgotten the key: a repeat is then a new request.
    if (f === undefined || o.invokeMs - f.invokeMs >= IDEMPOTENCY_WINDOW_MS) {
      first.set(k, o);
      continue;
    }
    const a = f.outcome;
    const b = o.outcome;
    const same =
      a.status === b.status &&
      (a.status === 'ok' && b.status === 'ok'
        ? canonicalJson(a.value) === canonicalJson(b.value)
        : a.status === 'fail' && b.status === 'fail'
          ? a.code === b.code && a.httpStatus === b.httpStatus
          : false);
    if (!same) {
      out.push({
        property: 'idempotency-replay',
        opIds: [f.opId, o.opId],
        timeMs: o.completeMs ?? o.invokeMs,
        message: `Idempotency-Key ${str(o.args, 'idempotencyKey')}: first answer ${describeOp(f)}, repeat answered ${describeOp(o)}`,
      });
    }
  }
  return out;
}

function counters(ops: readonly HistoryOp[]): Violation[] {
  const out: Violation[] = [];
  const keys = new Set(
    ops
      .filter((o) => o.kind === 'kv.put' && o.args['counter'] === true)
      .map((o) => str(o.args, 'key'))
      .filter((k): k is string => k !== null),
  );
  for (const key of keys) {
    const incs = ops.filter(
      (o) => o.kind === 'kv.put' && o.args['counter'] === true && str(o.args, 'key') === key,
    );
    const acked = incs.filter((o) => o.outcome.status === 'ok').length;
    const maybe = incs.filter((o) => effectOf(o.outcome) === 'maybe').length;
    const finals = ops.filter(
      (o) =>
        o.kind === 'kv.get' &&
        o.args['final'] === true &&
        str(o.args, 'key') === key &&
        o.outcome.status === 'ok',
    );
    const fin = finals.sort((a, b) => (b.completeMs ?? 0) - (a.completeMs ?? 0))[0];
    if (fin === undefined) continue;
    const value = okValue(fin.outcome)?.['value'];
    if (typeof value !== 'number') continue;
    if (value < acked || value > acked + maybe) {
      out.push({
        property: 'counter-mismatch',
        opIds: [fin.opId],
        timeMs: fin.completeMs ?? fin.invokeMs,
        message: `counter ${key}: final value ${value}, but ${acked} increments were acknowledged and ${maybe} had unknown outcomes (allowed ${acked}..${acked + maybe})`,
      });
    }
  }
  return out;
}

/** The checker object. */
export function durabilityChecker(): Checker {
  return { name: 'durability', check: (run: RunRecord) => checkDurability(run.ops) };
}

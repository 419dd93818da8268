/**
 * Checker (b): fencing at the write boundary (docs/concepts.md, §5; BC-02, BC-07, BC-10, BC-22).
 *
 * 1. `fencing-stale-accepted`: per resource, the store's accepted writes come in non-decreasing
 *    token order (the store's own rule — checked so that a broken store cannot pass silently).
 * 2. `fencing-token-shared`: each accepted token belongs to one writer (two holders never write
 *    under one token, so accepted side effects of different holders never interleave).
 * 3. `holder-regression`: the server never reports an older grant after a newer one was observed:
 *    for observations A, B of a resource's current token (acquire/renew/campaign answers, GETs,
 *    proclaims, fence checks) with A completed before B was invoked, token(B) ≥ token(A).
 *    This is implied by linearizability but cheap, so it still holds when the search gives up.
 *
 * 4. `belief-violated` (BC-15, BC-22): a side effect the writer sent while it still believed it
 *    held the grant was rejected as stale — a newer grant existed before the writer's safe deadline:
 *    an early expiry, or a client whose deadline is wrong. Judged for raw workers from
 *    `args.beliefUntilMs` (write answered before it) and for the client library from
 *    `value.believedAfter` (its handle still said "held" after the rejection). A write whose grant
 *    an operator may have revoked before the answer (a revoke of the resource naming its token or
 *    none, sent before the write completed, not refused: docs/api.md Operator revoke) is excused:
 *    revoke ends a grant without telling its holder.
 *
 * The store's log comes from `fenced-store.jsonl` in the run folder (or is passed in); without it,
 * the accepted `fs.write` ops of the history stand in (ordered by real time only where they do not
 * overlap).
 */
import { join } from 'node:path';
import type { Checker, CheckResult, HistoryOp, RunRecord, Violation } from '../types.js';
import { FENCED_STORE_LOG, type FencedWriteRecord } from '@tenure/testkit';
import { describeOp, effectOf, num, obj, okValue, readJsonl, str } from './history.js';
import { mergeAttempts } from './merge.js';

/** One observation of a resource's current grant token. */
export interface TokenObservation {
  readonly resource: string;
  readonly token: number;
  readonly holder: string | null;
  readonly op: HistoryOp;
}

/**
 * Extracts the current-grant observations from ok ops: lease acquire/renew/get, election
 * campaign/renew (leader), proclaim, get, and fence checks (`current`). Long-polls are left out.
 */
export function tokenObservations(ops: readonly HistoryOp[]): TokenObservation[] {
  const out: TokenObservation[] = [];
  for (const op of ops) {
    const v = okValue(op.outcome);
    if (v === null) continue;
    const a = op.args;
    switch (op.kind) {
      case 'lease.acquire':
      case 'lease.renew':
      case 'lease.get': {
        const t = num(v, 'fencingToken');
        if (t !== null)
          out.push({ resource: `lease:${str(a, 'name')}`, token: t, holder: str(v, 'holder'), op });
        break;
      }
      case 'election.campaign':
      case 'election.renew':
      case 'election.get':
      case 'election.proclaim': {
        const leader = obj(v, 'leader');
        const t = num(leader, 'fencingToken');
        if (t !== null)
          out.push({
            resource: `election:${str(a, 'group')}`,
            token: t,
            holder: str(leader, 'candidate'),
            op,
          });
        break;
      }
      case 'fence.check': {
        const t = num(v, 'current');
        const r =
          str(a, 'lease') !== null ? `lease:${str(a, 'lease')}` : `election:${str(a, 'election')}`;
        if (t !== null) out.push({ resource: r, token: t, holder: null, op });
        break;
      }
      default:
        break;
    }
  }
  return out;
}

/** Options: the store log (else read from the run folder). */
export interface FencingOptions {
  readonly storeLog?: readonly FencedWriteRecord[];
}

/** Store records derived from the history when the store's own log is missing. */
function recordsFromHistory(ops: readonly HistoryOp[]): FencedWriteRecord[] {
  const out: FencedWriteRecord[] = [];
  for (const op of ops) {
    if (op.kind !== 'fs.write' || op.outcome.status === 'unknown') continue;
    const t = num(op.args, 'fencingToken');
    const r = str(op.args, 'resource');
    const w = str(op.args, 'writer');
    if (t === null || r === null || w === null) continue;
    out.push({
      seq: op.opId,
      timeMs: op.completeMs ?? op.invokeMs,
      resource: r,
      fencingToken: t,
      writer: w,
      accepted: op.outcome.status === 'ok',
      highestBefore: null,
      payload: null,
    });
  }
  return out;
}

/** Checks the store log and the history's observations. */
export function checkFencing(
  ops: readonly HistoryOp[],
  storeLog: readonly FencedWriteRecord[] | null,
): CheckResult {
  const violations: Violation[] = [];
  const records = storeLog ?? recordsFromHistory(ops);
  const ordered = storeLog !== null; // the store's seq is a true order; history times are not
  const highest = new Map<string, FencedWriteRecord>();
  const owner = new Map<string, FencedWriteRecord>();
  let accepted = 0;
  let rejected = 0;
  for (const rec of [...records].sort((a, b) => a.seq - b.seq)) {
    if (!rec.accepted) {
      rejected++;
      continue;
    }
    accepted++;
    const prev = highest.get(rec.resource);
    if (ordered && prev !== undefined && rec.fencingToken < prev.fencingToken) {
      violations.push({
        property: 'fencing-stale-accepted',
        timeMs: rec.timeMs,
        message: `store accepted ${rec.resource} token ${rec.fencingToken} from ${rec.writer} (seq ${rec.seq}) after token ${prev.fencingToken} from ${prev.writer} (seq ${prev.seq})`,
        details: { seq: rec.seq, previousSeq: prev.seq },
      });
    }
    if (prev === undefined || rec.fencingToken > prev.fencingToken) highest.set(rec.resource, rec);
    const key = `${rec.resource}#${rec.fencingToken}`;
    const first = owner.get(key);
    if (first === undefined) owner.set(key, rec);
    else if (first.writer !== rec.writer) {
      violations.push({
        property: 'fencing-token-shared',
        timeMs: rec.timeMs,
        message: `${rec.resource} token ${rec.fencingToken} used by ${first.writer} (seq ${first.seq}) and ${rec.writer} (seq ${rec.seq}): two holders' writes accepted under one token`,
      });
    }
  }
  if (!ordered) {
    // Without the store's order, real time orders only non-overlapping fs.write ops.
    const writes = ops
      .filter(
        (o) =>
          o.kind === 'fs.write' &&
          o.outcome.status === 'ok' &&
          num(o.args, 'fencingToken') !== null,
      )
      .map((o) => ({
        resource: str(o.args, 'resource') ?? '',
        token: num(o.args, 'fencingToken')!,
        holder: str(o.args, 'writer'),
        op: o,
      }));
    violations.push(...holderRegressions(writes, 'fencing-stale-accepted'));
  }
  violations.push(...beliefViolations(ops));
  const regressions = holderRegressions(tokenObservations(mergeAttempts(ops)));
  violations.push(...regressions);
  return {
    ok: violations.length === 0,
    violations,
    stats: {
      storeLog: ordered ? 'fenced-store.jsonl' : 'history',
      writesAccepted: accepted,
      writesRejected: rejected,
      resources: highest.size,
    },
  };
}

/** Send times of lease revokes that may have taken effect, by `lease:NAME`, with their token (null = all). */
function revokesByResource(
  ops: readonly HistoryOp[],
): Map<string, { sentMs: number; token: number | null }[]> {
  const out = new Map<string, { sentMs: number; token: number | null }[]>();
  for (const op of ops) {
    if (op.kind !== 'lease.revoke' || effectOf(op.outcome) === 'fail') continue;
    const r = `lease:${str(op.args, 'name')}`;
    const l = out.get(r) ?? [];
    l.push({ sentMs: op.invokeMs, token: num(op.args, 'fencingToken') });
    out.set(r, l);
  }
  return out;
}

/** `belief-violated`: rejected fs.write ops sent (and answered) inside the writer's belief interval. */
export function beliefViolations(ops: readonly HistoryOp[]): Violation[] {
  const out: Violation[] = [];
  const revokes = revokesByResource(ops);
  for (const op of ops) {
    if (
      op.kind !== 'fs.write' ||
      op.outcome.status !== 'fail' ||
      op.outcome.code !== 'stale_token' ||
      op.completeMs === null
    )
      continue;
    const until = num(op.args, 'beliefUntilMs');
    const v = op.outcome.value;
    const libBelieved =
      v !== null &&
      v !== undefined &&
      typeof v === 'object' &&
      !Array.isArray(v) &&
      v['believedAfter'] === true;
    const token = num(op.args, 'fencingToken');
    const completeMs = op.completeMs;
    const revoked = (revokes.get(str(op.args, 'resource') ?? '') ?? []).some(
      (r) => r.sentMs < completeMs && (r.token === null || r.token === token),
    );
    if (((until !== null && op.completeMs <= until) || libBelieved) && !revoked) {
      out.push({
        property: 'belief-violated',
        timeMs: op.completeMs,
        opIds: [op.opId],
        message: `${str(op.args, 'writer')}'s write to ${str(op.args, 'resource')} with token ${num(op.args, 'fencingToken')} was rejected as stale at ${op.completeMs.toFixed(1)} ms while it still held the grant by its safe deadline (${until !== null ? `until ${until.toFixed(1)} ms` : 'client library handle not aborted'}): ${describeOp(op)}`,
      });
    }
  }
  return out;
}

/**
 * `holder-regression`: sweep observations by invoke time, keeping per resource the highest token
 * among observations completed before the current one's invoke.
 */
export function holderRegressions(
  obs: readonly TokenObservation[],
  property = 'holder-regression',
): Violation[] {
  const out: Violation[] = [];
  const byRes = new Map<string, TokenObservation[]>();
  for (const o of obs) {
    const l = byRes.get(o.resource);
    if (l === undefined) byRes.set(o.resource, [o]);
    else l.push(o);
  }
  for (const [res, list] of byRes) {
    const byInvoke = [...list].sort((a, b) => a.op.invokeMs - b.op.invokeMs);
    const byComplete = list
      .filter((o) => o.op.completeMs !== null)
      .sort((a, b) => a.op.completeMs! - b.op.completeMs!);
    let j = 0;
    let best: TokenObservation | null = null;
    for (const o of byInvoke) {
      while (j < byComplete.length && byComplete[j]!.op.completeMs! < o.op.invokeMs) {
        const c = byComplete[j++]!;
        if (best === null || c.token > best.token) best = c;
      }
      if (best !== null && o.token < best.token) {
        out.push({
          property,
          timeMs: o.op.invokeMs,
          opIds: [best.op.opId, o.op.opId],
          message: `${res}: token ${o.token}${o.holder === null ? '' : ` (${o.holder})`} reported by ${describeOp(o.op)} after token ${best.token}${best.holder === null ? '' : ` (${best.holder})`} was observed by ${describeOp(best.op)}`,
        });
      }
    }
  }
  return out;
}

/** The checker object; reads `fenced-store.jsonl` from the run folder unless a log is given. */
export function fencingChecker(options: FencingOptions = {}): Checker {
  return {
    name: 'fencing',
    check: (run: RunRecord) => {
      const log =
        options.storeLog ?? readJsonl<FencedWriteRecord>(join(run.runDir, FENCED_STORE_LOG));
      return checkFencing(run.ops, options.storeLog !== undefined || log.length > 0 ? log : null);
    },
  };
}

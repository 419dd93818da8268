/**
 * Checker: operator revoke fences the holder's token (docs/api.md "Operator revoke",
 * docs/primitives.md "Holder history and operator revoke").
 *
 * For every lease revoke acknowledged ok with `revoked: [T, ...]` (R, acked at R's completion),
 * judged on the merged history (retries of one request are one op from its first send, merge.ts):
 * - `revoked-token-accepted`: an op sent after R's ack that shows T still live — a KV write fenced
 *   by `{lease, fencingToken: T}` or a fence check of T answered ok/`valid: true`, a renew of T, or
 *   a read (GET, acquire, holder history's live entry, fence check `current`) naming T as the
 *   lease's current grant. Revoke ends the grant at its log position, before the ack, and a grant
 *   never comes back.
 * - `revoke-token-order`: a grant of the lease observed by an op sent after R's ack carries a token
 *   below T: the next grant of a revoked lease gets a higher token.
 * - `revoke-answer`: an ok answer that is not a list of tokens oldest first (strictly increasing),
 *   or, for a revoke naming `fencingToken` T, is not exactly `[T]`.
 *
 * Sound by construction: only acknowledged revokes fence, only ops sent after the acknowledgement
 * are judged, and ops of unknown outcome are never evidence. A revoke of unknown outcome, or
 * `revoked: []`, proves nothing and is not used. Whether the revoke itself was linearizable (the
 * right grant ended) is the linearizability model's business (model.ts).
 */
import type { Checker, CheckResult, HistoryOp, RunRecord, Violation } from '../types.js';
import { describeOp, num, obj, okValue, str } from './history.js';
import { mergeAttempts } from './merge.js';

/** One acknowledged revoke of one token. */
interface RevokedGrant {
  readonly lease: string;
  readonly token: number;
  readonly ackMs: number;
  readonly op: HistoryOp;
}

/** A token an ok op showed as the lease's live grant (`accepted`: it acted under the token). */
interface LiveEvidence {
  readonly lease: string;
  readonly token: number;
  readonly op: HistoryOp;
  /** True for ops that presented the token (fenced write, renew, fence check): T must be refused. */
  readonly presented: boolean;
}

/** The lease a fenced op names (`args.fence.lease` for KV, `args.lease` for fence checks). */
function fenceLease(op: HistoryOp): { lease: string; token: number } | null {
  const f = op.kind === 'fence.check' ? op.args : obj(op.args, 'fence');
  const lease = str(f, 'lease');
  const token = num(f, 'fencingToken');
  return lease === null || token === null ? null : { lease, token };
}

/** Every token an ok op shows live for a lease, and tokens it successfully presented. */
export function liveEvidence(op: HistoryOp): LiveEvidence[] {
  const v = okValue(op.outcome);
  if (v === null) return [];
  const name = str(op.args, 'name');
  const out: LiveEvidence[] = [];
  switch (op.kind) {
    case 'kv.put':
    case 'kv.delete': {
      const f = fenceLease(op);
      if (f !== null) out.push({ ...f, op, presented: true });
      break;
    }
    case 'fence.check': {
      const f = fenceLease(op);
      if (f !== null && v['valid'] === true) out.push({ ...f, op, presented: true });
      const current = num(v, 'current');
      if (f !== null && current !== null && !(v['valid'] === true && current === f.token))
        out.push({ lease: f.lease, token: current, op, presented: false });
      break;
    }
    case 'lease.renew':
    case 'lease.acquire':
    case 'lease.get': {
      const t = num(v, 'fencingToken');
      if (name !== null && t !== null)
        out.push({ lease: name, token: t, op, presented: op.kind === 'lease.renew' });
      break;
    }
    case 'lease.history': {
      const grants = v['grants'];
      if (name === null || !Array.isArray(grants)) break;
      for (const e of grants) {
        if (e === null || typeof e !== 'object' || Array.isArray(e) || e['endReason'] !== null)
          continue;
        const t = num(e, 'fencingToken');
        if (t !== null) out.push({ lease: name, token: t, op, presented: false });
      }
      break;
    }
    default:
      break;
  }
  return out;
}

/** Acknowledged revokes, one per revoked token; malformed answers as `revoke-answer` violations. */
function acknowledgedRevokes(ops: readonly HistoryOp[], violations: Violation[]): RevokedGrant[] {
  const out: RevokedGrant[] = [];
  for (const op of ops) {
    if (op.kind !== 'lease.revoke' || op.completeMs === null) continue;
    const v = okValue(op.outcome);
    const name = str(op.args, 'name');
    if (v === null || name === null) continue;
    const list = v['revoked'];
    const asked = num(op.args, 'fencingToken');
    const tokens = Array.isArray(list) && list.every((x) => typeof x === 'number') ? list : null;
    const increasing = tokens !== null && tokens.every((x, i) => i === 0 || x > tokens[i - 1]!);
    if (
      tokens === null ||
      !increasing ||
      (asked !== null && (tokens.length !== 1 || tokens[0] !== asked))
    ) {
      violations.push({
        property: 'revoke-answer',
        timeMs: op.completeMs,
        opIds: [op.opId],
        message: `revoke of lease ${name}${asked === null ? '' : ` token ${asked}`} answered ${JSON.stringify(list ?? null)}: expected the revoked tokens oldest first${asked === null ? '' : ` ([${asked}])`} (${describeOp(op)})`,
      });
      continue;
    }
    for (const token of tokens) out.push({ lease: name, token, ackMs: op.completeMs, op });
  }
  return out;
}

/** Checks a history (raw attempts; merged here). */
export function checkRevokes(rawOps: readonly HistoryOp[]): CheckResult {
  const ops = mergeAttempts(rawOps);
  const violations: Violation[] = [];
  const revoked = acknowledgedRevokes(ops, violations);
  const byLease = new Map<string, RevokedGrant[]>();
  for (const r of revoked) byLease.set(r.lease, [...(byLease.get(r.lease) ?? []), r]);
  let judged = 0;
  for (const op of ops) {
    if (str(op.args, 'consistency') === 'stale') continue; // stale reads may lag by design
    for (const e of liveEvidence(op)) {
      for (const r of byLease.get(e.lease) ?? []) {
        if (op.invokeMs <= r.ackMs) continue;
        judged++;
        if (e.token > r.token) continue;
        const same = e.token === r.token;
        violations.push({
          property: same ? 'revoked-token-accepted' : 'revoke-token-order',
          timeMs: op.invokeMs,
          opIds: [r.op.opId, op.opId],
          message: same
            ? `lease ${e.lease} token ${r.token} was revoked (acked at ${r.ackMs.toFixed(1)} ms) but ${e.presented ? 'accepted' : 'shown live'} by an op sent at ${op.invokeMs.toFixed(1)} ms: ${describeOp(op)} (revoke ${describeOp(r.op)})`
            : `lease ${e.lease}: token ${e.token} seen after token ${r.token} was revoked (acked at ${r.ackMs.toFixed(1)} ms): the next grant must get a higher token; ${describeOp(op)}`,
        });
      }
    }
  }
  return {
    ok: violations.length === 0,
    violations,
    stats: {
      revokesAcked: ops.filter((o) => o.kind === 'lease.revoke' && o.outcome.status === 'ok')
        .length,
      tokensRevoked: revoked.length,
      revokesUnknown: ops.filter((o) => o.kind === 'lease.revoke' && o.outcome.status === 'unknown')
        .length,
      // Evidence of a live token judged against an earlier acknowledged revoke of its lease.
      observationsAfterRevoke: judged,
    },
  };
}

/** The checker object. */
export function revokeChecker(): Checker {
  return { name: 'revoke', check: (run: RunRecord) => checkRevokes(run.ops) };
}

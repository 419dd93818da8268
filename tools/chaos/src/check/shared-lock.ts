/**
 * Checker: shared/exclusive lease modes (docs/primitives.md "Shared locks", docs/api.md "Shared
 * (read/write) locks").
 *
 * - `exclusive-overlap`: an exclusive grant certainly live at a moment another grant (shared or
 *   exclusive) of the same name was certainly live too (spans of grant-spans.ts);
 * - `lock-token-shared`: one token held by two holders;
 * - `lock-grant-mismatch`: an acquire answered with a grant of another mode or binding than it asked
 *   for (an acquire by the holder renews only a matching grant, else 409 `grant_mismatch`);
 * - `lock-fence-after-end`: a KV write fenced by a grant accepted although sent after the grant was
 *   certainly over.
 * Unknown outcomes never create a span and always may cut one, so the checker is sound.
 */
import type { Checker, CheckResult, HistoryOp, RunRecord, Violation } from '../types.js';
import { describeOp } from './history.js';
import {
  grantSpans,
  lateFencedWrites,
  mismatchedGrants,
  primitiveOps,
  sessionFacts,
  sharedTokens,
  type GrantSpan,
} from './grant-spans.js';

/** Pairs [exclusive, other] of one name whose certain spans overlap (strictly). */
export function exclusiveOverlaps(spans: readonly GrantSpan[]): [GrantSpan, GrantSpan][] {
  const live = spans.filter((s) => s.fromMs < s.toMs).sort((a, b) => a.fromMs - b.fromMs);
  const out: [GrantSpan, GrantSpan][] = [];
  for (let i = 0; i < live.length; i++) {
    const a = live[i]!;
    for (let j = i + 1; j < live.length && live[j]!.fromMs < a.toMs; j++) {
      const b = live[j]!;
      if (a.name !== b.name || a.holder === b.holder) continue;
      if (a.mode === 'exclusive' || b.mode === 'exclusive')
        out.push(a.mode === 'exclusive' ? [a, b] : [b, a]);
    }
  }
  return out;
}

/** Checks the run's shared-lock ops. */
export function checkSharedLocks(raw: readonly HistoryOp[], drift: number): CheckResult {
  const ops = primitiveOps(raw);
  const spans = grantSpans(ops, 'rw', sessionFacts(ops, drift), drift);
  const violations: Violation[] = [];
  const byName = new Map<string, GrantSpan[]>();
  for (const s of spans) byName.set(s.name, [...(byName.get(s.name) ?? []), s]);
  for (const list of byName.values())
    for (const [x, y] of exclusiveOverlaps(list))
      violations.push({
        property: 'exclusive-overlap',
        timeMs: Math.max(x.fromMs, y.fromMs),
        opIds: [x.opIds[0]!, y.opIds[0]!],
        message: `${x.name}: exclusive grant of ${x.holder} (token ${x.token}, live ${x.fromMs.toFixed(0)}..${x.toMs.toFixed(0)} ms) overlaps ${y.mode} grant of ${y.holder} (token ${y.token}, live ${y.fromMs.toFixed(0)}..${y.toMs.toFixed(0)} ms)`,
      });
  for (const [a, b] of sharedTokens(spans))
    violations.push({
      property: 'lock-token-shared',
      opIds: [a.opIds[0]!, b.opIds[0]!],
      message: `${a.name}: token ${a.token} held by ${a.holder} and ${b.holder}`,
    });
  for (const op of mismatchedGrants(ops, 'rw'))
    violations.push({
      property: 'lock-grant-mismatch',
      opIds: [op.opId],
      message: `an acquire answered with a grant of another mode or binding: ${describeOp(op)}`,
    });
  for (const { op, span } of lateFencedWrites(ops, spans, 'rw'))
    violations.push({
      property: 'lock-fence-after-end',
      opIds: [op.opId],
      message: `${span.name}: write fenced by ${span.holder}'s token ${span.token} accepted though sent at ${op.invokeMs.toFixed(0)} ms, after the grant was over by ${span.endedByMs!.toFixed(0)} ms: ${describeOp(op)}`,
    });
  const certain = spans.filter((s) => s.fromMs < s.toMs);
  return {
    ok: violations.length === 0,
    violations,
    stats: {
      grants: spans.length,
      sharedGrants: spans.filter((s) => s.mode === 'shared').length,
      exclusiveGrants: spans.filter((s) => s.mode === 'exclusive').length,
      sharedOverlapsSeen: countSharedOverlaps(certain),
    },
  };
}

/** How many pairs of shared grants were certainly live together (evidence the workload shares). */
function countSharedOverlaps(spans: readonly GrantSpan[]): number {
  let n = 0;
  for (let i = 0; i < spans.length; i++)
    for (let j = i + 1; j < spans.length; j++) {
      const a = spans[i]!;
      const b = spans[j]!;
      if (a.name === b.name && a.mode === 'shared' && b.mode === 'shared')
        if (Math.max(a.fromMs, b.fromMs) < Math.min(a.toMs, b.toMs)) n++;
    }
  return n;
}

/** The checker object. */
export function sharedLockChecker(): Checker {
  return {
    name: 'shared-lock',
    check: (run: RunRecord) => checkSharedLocks(run.ops, run.timing.maxDriftRatio),
  };
}

/**
 * Checker: semaphore safety (docs/primitives.md "Semaphores", docs/api.md "Semaphores").
 *
 * - `semaphore-over-limit`: more than `limit` permits of one name certainly live at one moment
 *   (spans of grant-spans.ts: first ack .. send + ttlMs × (1 − drift), or the session's certain
 *   life), or a linearizable GET listing more than `limit` holders;
 * - `semaphore-token-order`: a permit granted after another permit was seen (its holder's first
 *   acquire sent after an ack showing the other) carries a token that is not higher — every permit
 *   gets a token above every earlier token of its semaphore;
 * - `semaphore-token-shared`: one token held by two holders;
 * - `permit-grant-mismatch`: an acquire answered with a permit of another binding (session or ttl)
 *   than it asked for (a matching acquire by the holder renews, else 409 `grant_mismatch`);
 * - `permit-fence-after-end`: a KV write fenced by a permit accepted although it was sent after the
 *   permit was certainly over (released, renew refused, its session over).
 * Unknown outcomes never create a span and always may cut one (release), so the checker has no
 * false positives on a correct cluster under retries, crashes, pauses and partitions.
 */
import type { Checker, CheckResult, HistoryOp, RunRecord, Violation } from '../types.js';
import { describeOp, num, okValue, str } from './history.js';
import {
  grantSpans,
  lateFencedWrites,
  mismatchedGrants,
  primitiveOps,
  sessionFacts,
  sharedTokens,
  type GrantSpan,
} from './grant-spans.js';

/** The most permits of `spans` (one name) certainly live at one moment, and the spans then live. */
export function maxConcurrent(spans: readonly GrantSpan[]): {
  count: number;
  at: GrantSpan[];
  atMs: number;
} {
  const edges: { t: number; d: 1 | -1; s: GrantSpan }[] = [];
  for (const s of spans)
    if (s.fromMs < s.toMs) edges.push({ t: s.fromMs, d: 1, s }, { t: s.toMs, d: -1, s });
  edges.sort((a, b) => a.t - b.t || a.d - b.d); // ends before starts at equal times
  const live = new Set<GrantSpan>();
  let best = { count: 0, at: [] as GrantSpan[], atMs: 0 };
  for (const e of edges) {
    if (e.d === -1) live.delete(e.s);
    else {
      live.add(e.s);
      if (live.size > best.count) best = { count: live.size, at: [...live], atMs: e.t };
    }
  }
  return best;
}

/** Token-order violations of one name: [earlier-seen permit, later-granted permit]. */
export function tokenOrderViolations(spans: readonly GrantSpan[]): [GrantSpan, GrantSpan][] {
  const bySeen = [...spans].sort((a, b) => a.firstSeenMs - b.firstSeenMs);
  const out: [GrantSpan, GrantSpan][] = [];
  for (const later of spans) {
    for (const earlier of bySeen) {
      if (earlier.firstSeenMs >= later.issuedNotBeforeMs) break;
      if (earlier.holder !== later.holder && earlier.token >= later.token) {
        out.push([earlier, later]);
        break;
      }
    }
  }
  return out;
}

function describeSpan(s: GrantSpan): string {
  return `${s.holder} token ${s.token}${s.session === null ? '' : ` (session ${s.session})`} live ${s.fromMs.toFixed(0)}..${s.toMs.toFixed(0)} ms`;
}

/** Checks the run's semaphore ops. */
export function checkSemaphores(raw: readonly HistoryOp[], drift: number): CheckResult {
  const ops = primitiveOps(raw);
  const sessions = sessionFacts(ops, drift);
  const spans = grantSpans(ops, 'sem', sessions, drift);
  const violations: Violation[] = [];
  const byName = new Map<string, GrantSpan[]>();
  for (const s of spans) byName.set(s.name, [...(byName.get(s.name) ?? []), s]);
  let maxSeen = 0;
  for (const [name, list] of byName) {
    const limit = Math.max(...list.map((s) => s.limit ?? 0));
    const m = maxConcurrent(list);
    maxSeen = Math.max(maxSeen, m.count);
    if (limit > 0 && m.count > limit)
      violations.push({
        property: 'semaphore-over-limit',
        timeMs: m.atMs,
        opIds: m.at.flatMap((s) => s.opIds.slice(0, 1)),
        message: `${name}: ${m.count} permits certainly live at ${m.atMs.toFixed(0)} ms, limit ${limit}: ${m.at.map(describeSpan).join('; ')}`,
      });
    for (const [a, b] of tokenOrderViolations(list))
      violations.push({
        property: 'semaphore-token-order',
        opIds: [a.opIds[0]!, b.opIds[0]!],
        message: `${name}: ${b.holder}'s permit (first acquire sent ${b.issuedNotBeforeMs.toFixed(0)} ms) got token ${b.token}, not above token ${a.token} of ${a.holder} seen at ${a.firstSeenMs.toFixed(0)} ms`,
      });
  }
  for (const [a, b] of sharedTokens(spans))
    violations.push({
      property: 'semaphore-token-shared',
      opIds: [a.opIds[0]!, b.opIds[0]!],
      message: `${a.name}: token ${a.token} held by ${a.holder} and ${b.holder}`,
    });
  for (const op of ops) {
    if (op.kind !== 'sem.get' || str(op.args, 'consistency') === 'stale') continue;
    const v = okValue(op.outcome);
    const holders = v?.['holders'];
    const limit = num(v, 'limit');
    if (Array.isArray(holders) && limit !== null && holders.length > limit)
      violations.push({
        property: 'semaphore-over-limit',
        opIds: [op.opId],
        message: `read shows ${holders.length} holders over limit ${limit}: ${describeOp(op)}`,
      });
  }
  for (const op of mismatchedGrants(ops, 'sem'))
    violations.push({
      property: 'permit-grant-mismatch',
      opIds: [op.opId],
      message: `an acquire answered with a permit of another binding: ${describeOp(op)}`,
    });
  const late = lateFencedWrites(ops, spans, 'sem');
  for (const { op, span } of late)
    violations.push({
      property: 'permit-fence-after-end',
      opIds: [op.opId],
      message: `${span.name}: write fenced by ${span.holder}'s token ${span.token} accepted though sent at ${op.invokeMs.toFixed(0)} ms, after the permit was over by ${span.endedByMs!.toFixed(0)} ms: ${describeOp(op)}`,
    });
  return {
    ok: violations.length === 0,
    violations,
    stats: {
      permits: spans.length,
      permitsWithCertainSpan: spans.filter((s) => s.fromMs < s.toMs).length,
      sessionBoundPermits: spans.filter((s) => s.session !== null).length,
      maxConcurrentCertain: maxSeen,
      fencedWrites: ops.filter(
        (o) => o.kind === 'prim.write' && str(o.args, 'key')?.includes('sem') === true,
      ).length,
    },
  };
}

/** The checker object. */
export function semaphoreChecker(): Checker {
  return {
    name: 'semaphore',
    check: (run: RunRecord) => checkSemaphores(run.ops, run.timing.maxDriftRatio),
  };
}

/**
 * The harness's own checker over leader samples (docs/concepts.md "at most one leader per term"): no two
 * nodes may ever claim — in their own `/v1/cluster` answer — to be leader in the same term, and
 * a node's reported term never decreases, even across restarts (currentTerm is persisted, Raft
 * Figure 2) — per identity (check/node-identity.ts): a node wiped and rejoined starts from term 0. Also counts leader terms and the longest leaderless stretch for summary.md.
 */
import type { Checker, CheckResult, LeaderSample, NodeId, Violation } from '../types.js';
import { nodeIdentity } from '../check/node-identity.js';

/** Longest stretch (ms) in which no majority-agreed leader was sampled, and the number of distinct leader terms. */
export function leaderStats(
  samples: readonly LeaderSample[],
  nodeCount: number,
): { leaderTerms: number; leaderlessMaxMs: number } {
  const terms = new Set<number>();
  for (const s of samples)
    if (s.reachable && s.leader === s.node && s.term !== null) terms.add(s.term);
  // Sweep in time order, tracking each node's latest sample.
  const latest = new Map<NodeId, LeaderSample>();
  let leaderlessSinceMs: number | null = null;
  let leaderlessMaxMs = 0;
  for (const s of samples) {
    latest.set(s.node, s);
    const votes = new Map<NodeId, number>();
    for (const l of latest.values())
      if (l.reachable && l.leader !== null) votes.set(l.leader, (votes.get(l.leader) ?? 0) + 1);
    const agreed = [...votes.values()].some((count) => count * 2 > nodeCount);
    if (!agreed && leaderlessSinceMs === null) leaderlessSinceMs = s.timeMs;
    if (agreed && leaderlessSinceMs !== null) {
      leaderlessMaxMs = Math.max(leaderlessMaxMs, s.timeMs - leaderlessSinceMs);
      leaderlessSinceMs = null;
    }
  }
  const lastMs = samples.at(-1)?.timeMs;
  if (leaderlessSinceMs !== null && lastMs !== undefined)
    leaderlessMaxMs = Math.max(leaderlessMaxMs, lastMs - leaderlessSinceMs);
  return { leaderTerms: terms.size, leaderlessMaxMs: Math.round(leaderlessMaxMs) };
}

/** The checker (name `leader-samples`). */
export function leaderSampleChecker(): Checker {
  return {
    name: 'leader-samples',
    check(run): CheckResult {
      const violations: Violation[] = [];
      const leaderOfTerm = new Map<number, { node: NodeId; timeMs: number }>();
      const lastTerm = new Map<string, { term: number; timeMs: number }>();
      for (const s of run.leaderSamples) {
        if (!s.reachable || s.term === null) continue;
        const identity = nodeIdentity(s);
        const previous = identity === null ? undefined : lastTerm.get(identity);
        if (previous !== undefined && s.term < previous.term) {
          violations.push({
            property: 'term-monotonic',
            message: `${identity} reported term ${s.term} at ${s.timeMs.toFixed(0)} ms after term ${previous.term} at ${previous.timeMs.toFixed(0)} ms`,
            timeMs: s.timeMs,
          });
        }
        if (identity !== null) lastTerm.set(identity, { term: s.term, timeMs: s.timeMs });
        if (s.leader !== s.node) continue;
        const claimed = leaderOfTerm.get(s.term);
        if (claimed === undefined) leaderOfTerm.set(s.term, { node: s.node, timeMs: s.timeMs });
        else if (claimed.node !== s.node) {
          violations.push({
            property: 'one-leader-per-term',
            message: `term ${s.term}: ${claimed.node} (at ${claimed.timeMs.toFixed(0)} ms) and ${s.node} (at ${s.timeMs.toFixed(0)} ms) both claimed leadership`,
            timeMs: s.timeMs,
          });
        }
      }
      const stats = leaderStats(run.leaderSamples, run.nodeIds.length);
      return {
        ok: violations.length === 0,
        violations,
        stats: {
          samples: run.leaderSamples.length,
          reachableSamples: run.leaderSamples.filter((s) => s.reachable).length,
          leaderTerms: stats.leaderTerms,
          leaderlessMaxMs: stats.leaderlessMaxMs,
        },
      };
    },
  };
}

/**
 * Checker (c): Raft safety as seen through `/v1/cluster` samples (SPEC §1.1; Raft §5.2, §5.4).
 *
 * - `one-leader-per-term`: no two nodes name themselves leader in one term.
 * - `commit-index-regression`: a node's commitIndex never goes down, across restarts too (Tenure
 *   keeps it durable).
 * - `term-regression`: a node's term never goes down (currentTerm is persisted, Raft Figure 2).
 * Followers naming different leaders for one term are counted in stats (`leaderViewConflicts`)
 * and only become violations with `strictLeaderViews` (a node may keep a stale leader id briefly
 * after its term moved, which is a reporting quirk rather than split brain).
 */
import type { Checker, CheckResult, LeaderSample, RunRecord, Violation } from '../types.js';

/** Options: treat conflicting follower views of a term's leader as violations. */
export interface RaftCheckOptions {
  readonly strictLeaderViews?: boolean;
}

/** Checks samples (any order; sorted by time here). */
export function checkRaft(
  samples: readonly LeaderSample[],
  options: RaftCheckOptions = {},
): CheckResult {
  const violations: Violation[] = [];
  const sorted = samples.filter((s) => s.reachable).sort((a, b) => a.timeMs - b.timeMs);
  const selfLeaders = new Map<number, Map<string, LeaderSample>>();
  const views = new Map<number, Map<string, LeaderSample>>();
  const lastByNode = new Map<string, LeaderSample>();
  let conflicts = 0;
  for (const s of sorted) {
    if (s.term !== null && s.leader !== null) {
      const target = s.leader === s.node ? selfLeaders : views;
      let m = target.get(s.term);
      if (m === undefined) {
        m = new Map();
        target.set(s.term, m);
      }
      if (!m.has(s.leader)) {
        if (m.size > 0) {
          const other = [...m.values()][0]!;
          if (target === selfLeaders) {
            violations.push({
              property: 'one-leader-per-term',
              timeMs: s.timeMs,
              message: `term ${s.term}: ${other.node} claimed leadership at ${other.timeMs.toFixed(0)} ms and ${s.node} at ${s.timeMs.toFixed(0)} ms`,
              details: { term: s.term, leaders: [other.node, s.node] },
            });
          } else {
            conflicts++;
            if (options.strictLeaderViews === true) {
              violations.push({
                property: 'one-leader-per-term',
                timeMs: s.timeMs,
                message: `term ${s.term}: ${other.node} saw leader ${other.leader} and ${s.node} saw ${s.leader}`,
              });
            }
          }
        }
        m.set(s.leader, s);
      }
    }
    const prev = lastByNode.get(s.node);
    if (prev !== undefined) {
      if (prev.commitIndex !== null && s.commitIndex !== null && s.commitIndex < prev.commitIndex) {
        violations.push({
          property: 'commit-index-regression',
          timeMs: s.timeMs,
          message: `${s.node}: commitIndex ${prev.commitIndex} at ${prev.timeMs.toFixed(0)} ms, then ${s.commitIndex} at ${s.timeMs.toFixed(0)} ms`,
        });
      }
      if (prev.term !== null && s.term !== null && s.term < prev.term) {
        violations.push({
          property: 'term-regression',
          timeMs: s.timeMs,
          message: `${s.node}: term ${prev.term} at ${prev.timeMs.toFixed(0)} ms, then ${s.term} at ${s.timeMs.toFixed(0)} ms`,
        });
      }
    }
    const merged: LeaderSample = {
      ...s,
      commitIndex: s.commitIndex ?? prev?.commitIndex ?? null,
      term: s.term ?? prev?.term ?? null,
    };
    lastByNode.set(s.node, merged);
  }
  const terms = new Set([...selfLeaders.keys(), ...views.keys()]);
  return {
    ok: violations.length === 0,
    violations,
    stats: {
      samples: samples.length,
      reachableSamples: sorted.length,
      termsSeen: terms.size,
      leaderViewConflicts: conflicts,
    },
  };
}

/** The checker object. */
export function raftChecker(options: RaftCheckOptions = {}): Checker {
  return { name: 'raft', check: (run: RunRecord) => checkRaft(run.leaderSamples, options) };
}

/**
 * Checker (c): Raft safety as seen through `/v1/cluster` samples (docs/concepts.md; Raft §5.2, §5.4).
 *
 * - `one-leader-per-term`: no two nodes name themselves leader in one term.
 * - `commit-index-regression`: a node's commitIndex never goes down within one incarnation (one
 *   process lifetime, `LeaderSample.incarnation`). commitIndex is volatile state (Raft Figure 2):
 *   a restarted node may come back with a lower one and relearn it from the leader, so across a
 *   restart only the durability checker's rules apply (acknowledged writes survive). A sample
 *   whose incarnation is unknown (restarted mid-poll) is not compared. The rule is written in
 *   tools/chaos/README.md ("What the Raft checker checks").
 * - `term-regression`: a node's term never goes down, across restarts too (currentTerm is
 *   persisted, Raft Figure 2) — within one identity (node-identity.ts): a node wiped and rejoined
 *   under its old id starts again from term 0 (its commit index too, in a new incarnation anyway).
 * Followers naming different leaders for one term are counted in stats (`leaderViewConflicts`)
 * and only become violations with `strictLeaderViews` (a node may keep a stale leader id briefly
 * after its term moved, which is a reporting quirk rather than split brain).
 */
import type { Checker, CheckResult, LeaderSample, RunRecord, Violation } from '../types.js';
import { nodeIdentity } from './node-identity.js';

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
  /** Last sample per identity (`n2`, or `n2/g1` after a wipe). */
  const lastByIdentity = new Map<string, LeaderSample>();
  /** Last known commitIndex per identity and incarnation (`n2#3`, `n2/g1#4`). */
  const commitByIncarnation = new Map<string, { commitIndex: number; timeMs: number }>();
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
    const identity = nodeIdentity(s);
    if (identity === null) continue;
    const regression = commitIndexRegression(commitByIncarnation, identity, s);
    if (regression !== null) violations.push(regression);
    const prev = lastByIdentity.get(identity);
    if (prev !== undefined) {
      if (prev.term !== null && s.term !== null && s.term < prev.term) {
        violations.push({
          property: 'term-regression',
          timeMs: s.timeMs,
          message: `${identity}: term ${prev.term} at ${prev.timeMs.toFixed(0)} ms, then ${s.term} at ${s.timeMs.toFixed(0)} ms`,
        });
      }
    }
    const merged: LeaderSample = { ...s, term: s.term ?? prev?.term ?? null };
    lastByIdentity.set(identity, merged);
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

/**
 * Compares `s` with the last commitIndex seen from the same identity in the same incarnation and
 * records `s` as the new last; returns the violation when it went down. Samples without a
 * commitIndex or with an unknown incarnation are skipped.
 */
function commitIndexRegression(
  last: Map<string, { commitIndex: number; timeMs: number }>,
  identity: string,
  s: LeaderSample,
): Violation | null {
  if (s.commitIndex === null || s.incarnation === null) return null;
  const key = `${identity}#${s.incarnation}`;
  const prev = last.get(key);
  last.set(key, { commitIndex: s.commitIndex, timeMs: s.timeMs });
  if (prev === undefined || s.commitIndex >= prev.commitIndex) return null;
  return {
    property: 'commit-index-regression',
    timeMs: s.timeMs,
    message: `${identity} (incarnation ${s.incarnation}): commitIndex ${prev.commitIndex} at ${prev.timeMs.toFixed(0)} ms, then ${s.commitIndex} at ${s.timeMs.toFixed(0)} ms`,
  };
}

/** The checker object. */
export function raftChecker(options: RaftCheckOptions = {}): Checker {
  return { name: 'raft', check: (run: RunRecord) => checkRaft(run.leaderSamples, options) };
}

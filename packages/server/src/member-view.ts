/**
 * The leader's view of one member (docs/api.md, Cluster and operations; docs/operations.md,
 * Monitoring): the one place the reachability rule lives, for `/v1/cluster` and the metrics.
 */
import type { RaftStatus } from '@tenure/raft';

/** The leader's view of a member; empty on any other node, which cannot know. */
export interface LeaderView {
  /** The leader heard from it within an election timeout (the leader itself: always). */
  readonly reachable?: boolean;
  /** Entries its log is behind the leader's last index (known when its matchIndex is). */
  readonly lagEntries?: number;
}

/**
 * A member is reachable when the leader heard from it at most `electionTimeoutMs` ago: longer
 * silence is what makes a follower start an election, and a member that never answered in this
 * term is unreachable.
 */
export function leaderView(s: RaftStatus, id: string, electionTimeoutMs: number): LeaderView {
  if (s.role !== 'leader') return {};
  if (id === s.id) return { reachable: true, lagEntries: 0 };
  const m = s.members.find((x) => x.id === id);
  const reachable = m?.lastContactMs !== undefined && m.lastContactMs <= electionTimeoutMs;
  if (m?.matchIndex === undefined) return { reachable };
  return { reachable, lagEntries: Math.max(0, s.lastLogIndex - m.matchIndex) };
}

/**
 * How a member is shown in `/v1/cluster` and `/v1/cluster/members` (docs/api.md, Cluster and
 * operations): id, role (`leader | follower | candidate | learner`), addresses and — from the leader
 * — replication progress and reachability (docs/operations.md, Monitoring). The one place the
 * reachability rule lives, for those routes and the metrics. The list is the membership in effect
 * on this node (voters, then learners).
 */
import type { MemberAddress, MemberStatus, RaftStatus } from '@tenure/raft';
import type { PeerConfig } from './config.js';

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

/** docs/api.md member roles. */
export type MemberRole = 'leader' | 'follower' | 'candidate' | 'learner';

/** One member as the HTTP API shows it. */
export interface MemberView {
  readonly id: string;
  readonly role: MemberRole;
  readonly httpAddress: string;
  readonly raftAddress: string;
  readonly matchIndex?: number;
  readonly lastContactMs?: number;
  readonly reachable?: boolean;
  readonly lagEntries?: number;
}

/**
 * The HTTP address of member `id`, where followers forward to: from the membership in effect
 * (`RaftNodeApi.memberAddress`, an O(1) lookup in the address book its `config` entries carry), so
 * a member that moved to a new address under its old id is reached at the new one; else from
 * `--peers`; null when neither knows it. Called on every forwarded request: never reads `status()`.
 */
export function httpAddressOf(
  peers: readonly PeerConfig[],
  id: string,
  memberAddress: (id: string) => MemberAddress | undefined,
): string | null {
  const fromMembership = memberAddress(id)?.httpAddress;
  if (fromMembership !== undefined && fromMembership !== '') return fromMembership;
  const fromPeers = peers.find((p) => p.id === id)?.httpAddress;
  return fromPeers === undefined || fromPeers === '' ? null : fromPeers;
}

/**
 * The members of `s`; addresses from the membership, else from `--peers`, else empty; the leader's
 * view (`reachable`, `lagEntries`) judged against `electionTimeoutMs`.
 */
export function memberViews(
  s: RaftStatus,
  peers: readonly PeerConfig[],
  electionTimeoutMs: number,
): MemberView[] {
  return s.members.map((m) => {
    const p = peers.find((x) => x.id === m.id);
    return {
      id: m.id,
      role: roleOf(m, s),
      httpAddress: m.httpAddress ?? p?.httpAddress ?? '',
      raftAddress: m.raftAddress ?? p?.raftAddress ?? '',
      ...(m.matchIndex !== undefined ? { matchIndex: m.matchIndex } : {}),
      ...(m.lastContactMs !== undefined ? { lastContactMs: Math.floor(m.lastContactMs) } : {}),
      ...leaderView(s, m.id, electionTimeoutMs),
    };
  });
}

function roleOf(m: MemberStatus, s: RaftStatus): MemberRole {
  if (m.role === 'learner') return 'learner';
  if (m.id === s.leaderId) return 'leader';
  if (m.role === 'candidate' || m.role === 'precandidate') return 'candidate';
  return 'follower';
}

/**
 * How a member is shown in `/v1/cluster` and `/v1/cluster/members` (docs/api.md): id, role
 * (`leader | follower | candidate | learner`), addresses and — from the leader — replication
 * progress. The list is the membership in effect on this node (voters, then learners).
 */
import type { MemberStatus, RaftStatus } from '@tenure/raft';
import type { PeerConfig } from '../config.js';

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
}

/** The members of `s`; addresses from the membership, else from `--peers`, else empty. */
export function memberViews(s: RaftStatus, peers: readonly PeerConfig[]): MemberView[] {
  return s.members.map((m) => {
    const p = peers.find((x) => x.id === m.id);
    return {
      id: m.id,
      role: roleOf(m, s),
      httpAddress: m.httpAddress ?? p?.httpAddress ?? '',
      raftAddress: m.raftAddress ?? p?.raftAddress ?? '',
      ...(m.matchIndex !== undefined ? { matchIndex: m.matchIndex } : {}),
      ...(m.lastContactMs !== undefined ? { lastContactMs: Math.floor(m.lastContactMs) } : {}),
    };
  });
}

function roleOf(m: MemberStatus, s: RaftStatus): MemberRole {
  if (m.role === 'learner') return 'learner';
  if (m.id === s.leaderId) return 'leader';
  if (m.role === 'candidate' || m.role === 'precandidate') return 'candidate';
  return 'follower';
}

/**
 * Cluster membership (Raft dissertation ch. 4): who votes, who only receives the log, and the
 * single-server changes between two memberships.
 *
 * A membership is carried in the log by a `config` entry whose `data` is `encodeMembership(m)`; it
 * takes effect on every node as soon as the entry is appended (not when it commits, §4.1) and is
 * rolled back when that entry is truncated. Snapshots carry the membership in effect at their index
 * (SnapshotMeta.membership / configIndex), so snapshot + log recover it after a restart.
 *
 * Learners (non-voting members, §4.2.1) receive the log but never vote, never campaign and are never
 * counted in a quorum. Each change moves exactly one server, so any majority of the old voters and
 * any majority of the new voters intersect (§4.1): add a learner, promote a learner, remove a member.
 */
import assert from 'node:assert/strict';
import type { LogIndex, NodeId } from './types.js';

/** Voters and learners of the cluster; disjoint, each list in the order members were added. */
export interface Membership {
  readonly voters: readonly NodeId[];
  readonly learners: readonly NodeId[];
}

/**
 * The membership in effect on a node and the index of the `config` entry that set it (0: the
 * bootstrap membership of CoreConfig.voters). `committed` is true once commitIndex ≥ configIndex.
 */
export interface ConfigurationState {
  readonly membership: Membership;
  readonly configIndex: LogIndex;
  readonly committed: boolean;
}

/** One single-server change (dissertation §4.1, §4.2.1). */
export type MembershipChange =
  | { readonly type: 'addLearner'; readonly id: NodeId }
  | { readonly type: 'promote'; readonly id: NodeId }
  | { readonly type: 'remove'; readonly id: NodeId };

/**
 * Why a membership change was refused (stable codes; the server maps them to HTTP errors):
 * - `not_leader`: only the leader changes membership (leaderHint names it if known);
 * - `transferring`: a leadership transfer is under way (§3.10);
 * - `leader_not_ready`: this leader has not yet committed an entry of its own term (§4.1: the fix
 *   for the single-server bug; retry shortly);
 * - `reconfiguration_in_progress`: a previous change is not committed yet (§4.1: one at a time);
 * - `already_member` (addLearner), `not_a_learner` (promote), `not_a_member` (remove);
 * - `not_caught_up`: promote of a learner whose matchIndex lags the leader's last index by more than
 *   CoreConfig.catchUpEntriesMax (§4.2.1);
 * - `last_voter`: removing the only voter would leave no one to commit anything.
 */
export type MembershipRefusal =
  | 'not_leader'
  | 'transferring'
  | 'leader_not_ready'
  | 'reconfiguration_in_progress'
  | 'already_member'
  | 'not_a_learner'
  | 'not_a_member'
  | 'not_caught_up'
  | 'last_voter';

/** Result of RaftCore.proposeMembershipChange: where the `config` entry sits, or why it was refused. */
export type MembershipChangeResult =
  | {
      readonly ok: true;
      readonly index: LogIndex;
      readonly term: number;
      readonly membership: Membership;
    }
  | {
      readonly ok: false;
      readonly reason: MembershipRefusal;
      readonly leaderHint: NodeId | null;
    };

/** True if `id` is a voter of `m`. */
export function isVoter(m: Membership, id: NodeId): boolean {
  return m.voters.includes(id);
}

/** True if `id` is a voter or a learner of `m`. */
export function isMember(m: Membership, id: NodeId): boolean {
  return m.voters.includes(id) || m.learners.includes(id);
}

/** Every member of `m` but `self`: voters first, then learners (the leader's replication targets). */
export function replicationTargets(m: Membership, self: NodeId): NodeId[] {
  return [...m.voters, ...m.learners].filter((id) => id !== self);
}

/**
 * The membership after `change`, or the refusal code when `change` does not apply to `m`
 * (already_member / not_a_learner / not_a_member / last_voter). Pure.
 */
export function applyChange(
  m: Membership,
  change: MembershipChange,
): Membership | MembershipRefusal {
  const { id } = change;
  switch (change.type) {
    case 'addLearner':
      if (isMember(m, id)) return 'already_member';
      return { voters: m.voters, learners: [...m.learners, id] };
    case 'promote':
      if (!m.learners.includes(id)) return 'not_a_learner';
      return { voters: [...m.voters, id], learners: m.learners.filter((x) => x !== id) };
    case 'remove':
      if (!isMember(m, id)) return 'not_a_member';
      if (m.voters.length === 1 && m.voters[0] === id) return 'last_voter';
      return {
        voters: m.voters.filter((x) => x !== id),
        learners: m.learners.filter((x) => x !== id),
      };
  }
}

/** Throws (assertion) unless `m` lists each id once across voters and learners. */
export function assertValidMembership(m: Membership): void {
  const all = [...m.voters, ...m.learners];
  assert.equal(new Set(all).size, all.length, 'membership lists each node once');
  for (const id of all)
    assert.ok(typeof id === 'string' && id.length > 0, 'node ids are non-empty');
}

/** The bytes of a `config` entry's data: UTF-8 JSON `{voters, learners}` (deterministic order). */
export function encodeMembership(m: Membership): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ voters: m.voters, learners: m.learners }));
}

/**
 * Decode a `config` entry's data; null if it is not a valid membership (message checks drop such
 * entries before they reach the log).
 */
export function decodeMembership(data: Uint8Array): Membership | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const { voters, learners } = parsed as { voters?: unknown; learners?: unknown };
  if (!isIdList(voters) || !isIdList(learners)) return null;
  const all = [...voters, ...learners];
  if (new Set(all).size !== all.length) return null;
  return { voters, learners };
}

function isIdList(v: unknown): v is NodeId[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string' && x.length > 0);
}

/** True if both memberships list the same voters and learners in the same order. */
export function sameMembership(a: Membership, b: Membership): boolean {
  return (
    a.voters.length === b.voters.length &&
    a.learners.length === b.learners.length &&
    a.voters.every((x, i) => b.voters[i] === x) &&
    a.learners.every((x, i) => b.learners[i] === x)
  );
}

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

/**
 * Where a member is reached: Raft traffic at `raftAddress`, clients at `httpAddress` (both
 * `host:port`; the HTTP one is absent when the runtime does not know it). Opaque to the core.
 */
export interface MemberAddress {
  readonly raftAddress: string;
  readonly httpAddress?: string;
}

/** The address book a membership carries: member id → address. Opaque to the core. */
export type MemberAddresses = Readonly<Record<NodeId, MemberAddress>>;

/**
 * Voters and learners of the cluster; disjoint, each list in the order members were added.
 * `addresses` (optional, opaque to the core) is the address book the runtime recorded with the
 * change, so every node — a new one included — learns where each member listens from the log.
 */
export interface Membership {
  readonly voters: readonly NodeId[];
  readonly learners: readonly NodeId[];
  readonly addresses?: MemberAddresses;
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

/**
 * One single-server change (dissertation §4.1, §4.2.1). `addresses`, when given, becomes the new
 * membership's address book (restricted to its members); otherwise the old one is kept.
 */
export type MembershipChange = {
  readonly type: 'addLearner' | 'promote' | 'remove';
  readonly id: NodeId;
  readonly addresses?: MemberAddresses;
};

/**
 * Why a membership change was refused (stable codes; the server maps them to HTTP errors):
 * - `not_leader`: only the leader changes membership (leaderHint names it if known);
 * - `transferring`: a leadership transfer is under way (§3.10);
 * - `leader_not_ready`: this leader has not yet committed an entry of its own term (§4.1: the fix
 *   for the single-server bug; retry shortly);
 * - `reconfiguration_in_progress`: a previous change is not committed yet (§4.1: one at a time);
 * - `already_member` (addLearner), `not_a_learner` (promote), `not_a_member` (remove);
 * - `not_caught_up`: promote of a learner that has not answered this leader within an election
 *   timeout, does not hold the membership that added it, or whose matchIndex lags the leader's last
 *   index by more than CoreConfig.catchUpEntriesMax (§4.2.1); `detail` says which;
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
      /** Why, in words, where the code alone does not say (`not_caught_up`: lag or no contact). */
      readonly detail?: string;
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
  const next = changedLists(m, change);
  if (typeof next === 'string') return next;
  const book = change.addresses ?? m.addresses;
  return book === undefined ? next : { ...next, addresses: restrictAddresses(book, next) };
}

function changedLists(m: Membership, change: MembershipChange): Membership | MembershipRefusal {
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

/** The entries of `book` for members of `m`, in member order (deterministic bytes). */
function restrictAddresses(book: MemberAddresses, m: Membership): MemberAddresses {
  const out: Record<NodeId, MemberAddress> = {};
  for (const id of [...m.voters, ...m.learners]) {
    const a = book[id];
    if (a !== undefined) out[id] = a;
  }
  return out;
}

/** Throws (assertion) unless `m` lists each id once across voters and learners. */
export function assertValidMembership(m: Membership): void {
  const all = [...m.voters, ...m.learners];
  assert.equal(new Set(all).size, all.length, 'membership lists each node once');
  for (const id of all)
    assert.ok(typeof id === 'string' && id.length > 0, 'node ids are non-empty');
}

/**
 * The bytes of a `config` entry's data: UTF-8 JSON `{voters, learners, addresses?}` (deterministic
 * order: members as listed, each address as `{raftAddress, httpAddress?}`).
 */
export function encodeMembership(m: Membership): Uint8Array {
  const plain: Record<string, unknown> = { voters: m.voters, learners: m.learners };
  if (m.addresses !== undefined) plain.addresses = restrictAddresses(m.addresses, m);
  return new TextEncoder().encode(JSON.stringify(plain));
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
  return parseMembership(parsed);
}

/**
 * Validate a decoded membership (from a `config` entry, a snapshot record or an InstallSnapshot):
 * id lists without duplicates, an optional address book of `host:port` strings. Null if malformed.
 */
export function parseMembership(parsed: unknown): Membership | null {
  if (typeof parsed !== 'object' || parsed === null) return null;
  const { voters, learners, addresses } = parsed as Record<string, unknown>;
  if (!isIdList(voters) || !isIdList(learners)) return null;
  const all = [...voters, ...learners];
  if (new Set(all).size !== all.length) return null;
  if (addresses === undefined) return { voters, learners };
  const book = parseAddresses(addresses);
  return book === null ? null : { voters, learners, addresses: book };
}

function parseAddresses(v: unknown): MemberAddresses | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const out: Record<NodeId, MemberAddress> = {};
  for (const [id, a] of Object.entries(v as Record<string, unknown>)) {
    if (typeof a !== 'object' || a === null) return null;
    const { raftAddress, httpAddress } = a as Record<string, unknown>;
    if (typeof raftAddress !== 'string' || raftAddress.length === 0) return null;
    if (httpAddress !== undefined && typeof httpAddress !== 'string') return null;
    out[id] = httpAddress === undefined ? { raftAddress } : { raftAddress, httpAddress };
  }
  return out;
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

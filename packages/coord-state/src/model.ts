/**
 * The replicated data model and the context of one `apply`. Records are plain mutable objects
 * owned by `CoordStateMachine`; the handlers in leases.ts / elections.ts / kv.ts change them.
 *
 * Shaped for SPEC §6: a lease holds a `Grant` record (not a holder string), so semaphores
 * become `grants: Grant[]`, sessions a `sessionId` on Grant/Candidacy, rw locks a `mode` on
 * Grant, operator revoke an end reason `revoked` in the history.
 */
import type { FencingToken, JsonValue, Revision } from './api.js';
import type { DueEntry } from './due-queue.js';

/**
 * One grant of a lease to a holder. In the due queue with `dueMs` = expiry (cluster ms): the
 * grant is live at cluster time t iff t < dueMs. Invariant: dueMs ≤ maxHoldUntilMs when capped.
 */
export interface Grant extends DueEntry {
  readonly kind: 'grant';
  readonly lease: LeaseRecord;
  readonly holder: string;
  readonly fencingToken: FencingToken;
  /** Cluster time of the grant (acquire or waiter grant): maxHoldMs counts from here. */
  readonly grantedAtMs: number;
  /** ttlMs the holder asked for; renewals extend by this much (capped by maxHoldUntilMs). */
  ttlMsRequested: number;
  /** Effective ttl of the last grant/renewal (dueMs − renewedAtMs): what the holder was told. */
  ttlMs: number;
  /** Cluster time of the last grant/renewal. */
  renewedAtMs: number;
  /** grantedAtMs + maxHoldMs, or null when uncapped. */
  readonly maxHoldUntilMs: number | null;
  /** Lock-delay applied to the name if this grant expires (not if released). */
  readonly lockDelayMs: number;
}

/** Where a lease record sits for its lock-delay end: nowhere, the waking queue, or the sweep queue. */
export type LockDelayQueue = 'none' | 'wake' | 'sweep';

/**
 * Everything known about one lease name. Exists while it has a grant, waiters or a pending
 * lock-delay; deleted otherwise (tokens need no tombstone, see fencing.ts). In a due queue with
 * `dueMs` = `lockDelayUntilMs` while `lockDelayQueue` ≠ 'none'.
 */
export interface LeaseRecord extends DueEntry {
  readonly kind: 'lease';
  readonly name: string;
  /** The live grant, or null. Invariant: at most one (SPEC §1.3). */
  grant: Grant | null;
  /** Cluster ms until which the name cannot be granted (0 = none). Only set while grant is null. */
  lockDelayUntilMs: number;
  lockDelayQueue: LockDelayQueue;
  /** FIFO queue of waiters by waiterId (Map insertion order); null when empty. */
  waiters: Map<number, Waiter> | null;
  /** Highest token issued for this name while the record lived (0 = none). */
  lastFencingToken: FencingToken;
}

/** A queued acquire (SPEC §3 waitMs). `dueMs` = deadline (cluster ms); never granted at or after it. */
export interface Waiter extends DueEntry {
  readonly kind: 'waiter';
  readonly lease: LeaseRecord;
  /** Log index of the acquire entry that queued it. */
  readonly waiterId: number;
  readonly holder: string;
  readonly ttlMs: number;
  readonly lockDelayMs: number;
  readonly maxHoldMs: number | null;
  /** Idempotency key of the queuing acquire: its record is updated with the final outcome. */
  readonly idempotencyKey: string | null;
}

/** A candidacy in an election group; in the due queue with `dueMs` = expiry (cluster ms). */
export interface Candidacy extends DueEntry {
  readonly kind: 'candidacy';
  readonly election: ElectionRecord;
  readonly candidate: string;
  value: JsonValue;
  ttlMs: number;
}

/** One election group. Exists while it has candidates; then retired (its revision kept, bounded). */
export interface ElectionRecord {
  readonly group: string;
  /** Queue in age order (Map insertion order). Invariant: the leader, if any, is the first. */
  readonly candidates: Map<string, Candidacy>;
  leader: Candidacy | null;
  /** Token of the current leadership (0 when no leader). */
  leaderToken: FencingToken;
  /** Log index of the last change of leader or leader value (ElectionView.revision). */
  revision: number;
  lastFencingToken: FencingToken;
}

/** One KV entry; `revision` is the log index of its last write (SPEC §3). */
export interface KvRecord {
  value: JsonValue;
  revision: Revision;
}

/** The entry being applied: its log index, its cluster time, and the resource keys it changed. */
export interface ApplyContext {
  readonly index: number;
  readonly nowMs: number;
  readonly changed: Set<string>;
}

export function leaseKey(name: string): string {
  return `lease:${name}`;
}
export function electionKey(group: string): string {
  return `election:${group}`;
}
export function kvKey(key: string): string {
  return `kv:${key}`;
}

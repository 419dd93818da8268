/**
 * The replicated data model and the context of one `apply`. Records are plain mutable objects
 * owned by `CoordStateMachine`; the handlers in leases.ts / semaphores.ts / elections.ts /
 * sessions.ts / kv.ts change them.
 *
 * A grant bound to a session (`session` non-null) has no ttl of its own: it is not in the due
 * queue (`heapIndex` −1) and lives exactly as long as its session (docs/primitives.md).
 */
import type { ChangeEvent, FencingToken, JsonValue, Revision } from './api.js';
import type { Principal } from './auth.js';
import type { DueEntry } from './due-queue.js';

/**
 * One grant of a lease to a holder. In the due queue with `dueMs` = expiry (cluster ms): the
 * grant is live at cluster time t iff t < dueMs. Invariant: dueMs ≤ maxHoldUntilMs when capped.
 */
export interface Grant extends DueEntry {
  readonly kind: 'grant';
  /** Name of the token that took it (docs/security.md, ownership); null with auth off. */
  readonly owner: string | null;
  readonly lease: LeaseRecord;
  /** True for a shared-mode grant (in `lease.shared`), false for the exclusive one (`lease.grant`). */
  readonly shared: boolean;
  /** The session keeping it alive, or null for a ttl grant (then it is in the wake queue). */
  readonly session: SessionRecord | null;
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
  /** The live exclusive grant, or null. Invariant: at most one, and never with shared grants. */
  grant: Grant | null;
  /** Live shared grants by holder (insertion = grant order), or null when none. */
  shared: Map<string, Grant> | null;
  /** Cluster ms until which the name cannot be granted (0 = none). Never set while `grant` is. */
  lockDelayUntilMs: number;
  lockDelayQueue: LockDelayQueue;
  /** FIFO queue of waiters by waiterId (Map insertion order); null when empty. */
  waiters: Map<number, Waiter> | null;
  /** Highest token issued for this name while the record lived (0 = none). */
  lastFencingToken: FencingToken;
}

/** A queued acquire (docs/api.md waitMs). `dueMs` = deadline (cluster ms); never granted at or after it. */
export interface Waiter extends DueEntry {
  readonly kind: 'waiter';
  /** Name of the token that took it (docs/security.md, ownership); null with auth off. */
  readonly owner: string | null;
  readonly lease: LeaseRecord;
  /** Log index of the acquire entry that queued it. */
  readonly waiterId: number;
  readonly holder: string;
  /** ttl of the grant to make; null when session-bound. */
  readonly ttlMs: number | null;
  readonly shared: boolean;
  readonly session: SessionRecord | null;
  readonly lockDelayMs: number;
  readonly maxHoldMs: number | null;
  /** Idempotency key of the queuing acquire: its record is updated with the final outcome. */
  readonly idempotencyKey: string | null;
}

/** A candidacy in an election group; in the due queue with `dueMs` = expiry (cluster ms). */
export interface Candidacy extends DueEntry {
  readonly kind: 'candidacy';
  /** Name of the token that took it (docs/security.md, ownership); null with auth off. */
  readonly owner: string | null;
  readonly election: ElectionRecord;
  readonly candidate: string;
  value: JsonValue;
  /** Own ttl; null when session-bound (then not in the wake queue). */
  ttlMs: number | null;
  readonly session: SessionRecord | null;
}

/** One election group. Exists while it has candidates; then retired (its revision kept, bounded). */
export interface ElectionRecord {
  readonly group: string;
  /** Queue in age order (Map insertion order). Invariant: the leader, if any, is the first. */
  readonly candidates: Map<string, Candidacy>;
  leader: Candidacy | null;
  /** Token of the current leadership (0 when no leader). */
  leaderToken: FencingToken;
  /** Cluster time the current leadership began (0 when no leader). */
  leaderSinceMs: number;
  /** Log index of the last change of leader or leader value (ElectionView.revision). */
  revision: number;
  lastFencingToken: FencingToken;
}

/** One KV entry; `revision` is the log index of its last write (docs/api.md). */
export interface KvRecord {
  value: JsonValue;
  revision: Revision;
}

/**
 * A session: one ttl for many grants. In the wake queue with `dueMs` = expiry. `members` holds
 * every grant, permit, waiter and candidacy bound to it (size ≤ grantsPerSessionMax); it is
 * ordered canonically (memberOrder) whenever it is walked, so insertion order never matters.
 */
export interface SessionRecord extends DueEntry {
  readonly kind: 'session';
  /** Name of the token that took it (docs/security.md, ownership); null with auth off. */
  readonly owner: string | null;
  readonly sessionId: string;
  readonly name: string | null;
  ttlMs: number;
  readonly members: Set<SessionMember>;
}

/** Anything a session keeps alive. */
export type SessionMember = Grant | Waiter | Candidacy | Permit | SemWaiter;

/** One permit of a semaphore; in the wake queue at expiry unless session-bound. */
export interface Permit extends DueEntry {
  readonly kind: 'permit';
  /** Name of the token that took it (docs/security.md, ownership); null with auth off. */
  readonly owner: string | null;
  readonly semaphore: SemaphoreRecord;
  readonly holder: string;
  readonly fencingToken: FencingToken;
  readonly grantedAtMs: number;
  /** Own ttl; null when session-bound. */
  readonly ttlMs: number | null;
  readonly session: SessionRecord | null;
}

/** A queued semaphore acquire; `dueMs` = deadline. */
export interface SemWaiter extends DueEntry {
  readonly kind: 'semWaiter';
  /** Name of the token that took it (docs/security.md, ownership); null with auth off. */
  readonly owner: string | null;
  readonly semaphore: SemaphoreRecord;
  readonly waiterId: number;
  readonly holder: string;
  readonly ttlMs: number | null;
  readonly session: SessionRecord | null;
  readonly idempotencyKey: string | null;
}

/** A semaphore name with permits or waiters; deleted when it has neither. */
export interface SemaphoreRecord {
  readonly name: string;
  /** Permits at most; fixed while the record exists. */
  readonly limit: number;
  /** Live permits by holder (insertion = grant order). Size ≤ limit. */
  readonly permits: Map<string, Permit>;
  /** FIFO waiters by waiterId; null when empty. */
  waiters: Map<number, SemWaiter> | null;
  lastFencingToken: FencingToken;
}

/** The entry being applied: its log index, its cluster time, the resource keys and events it produced. */
export interface ApplyContext {
  readonly index: number;
  readonly nowMs: number;
  readonly changed: Set<string>;
  readonly events: ChangeEvent[];
  /** The entry's sender with auth on; absent or null = no ownership check (auth off, the server). */
  readonly principal?: Principal | null;
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
export function semaphoreKey(name: string): string {
  return `semaphore:${name}`;
}
export function sessionKey(sessionId: string): string {
  return `session:${sessionId}`;
}

/**
 * The coordination state machine's public contract: commands, results, queries.
 * The server and client build against these shapes; coord-state implements them.
 *
 * Conventions: all durations are integer ms; all times are docs/concepts.md cluster time in ms.
 * `FencingToken` values are JSON-safe integers.
 */
import type { StateError } from './errors.js';
import type {
  AuthCommand,
  AuthState,
  Principal,
  RoleView,
  TokenRecord,
  TokenView,
} from './auth.js';
import type { SemaphoreGrant } from './results.js';

/** Per-resource fencing token (docs/concepts.md): strictly increases with every new grant, never reused. */
export type FencingToken = number;
/** Global KV revision: the log index of a key's last write (docs/api.md). */
export type Revision = number;
/** A JSON value (KV values and election values). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

/** Names a fencing resource: a lease, an election group or a semaphore (exactly one). */
export type FenceRef =
  | { readonly lease: string; readonly fencingToken: FencingToken }
  | { readonly election: string; readonly fencingToken: FencingToken }
  | { readonly semaphore: string; readonly fencingToken: FencingToken };

/**
 * Lease mode (docs/primitives.md, shared locks): `exclusive` (the default) excludes every other
 * grant; any number of `shared` grants may be live at once.
 */
export type LeaseMode = 'exclusive' | 'shared';

/** Server-chosen session id (docs/primitives.md, sessions): `s` + the log index that created it. */
export type SessionId = string;

export type LeaseCommand =
  | {
      readonly type: 'lease.acquire';
      readonly name: string;
      readonly holder: string;
      /** The grant's own ttl; null exactly when `session` is given (the session keeps it alive). */
      readonly ttlMs: number | null;
      readonly waitMs: number;
      readonly lockDelayMs: number;
      /** Must be null for a session-bound grant. */
      readonly maxHoldMs: number | null;
      /** Bind the grant to this session instead of a ttl (absent = null). */
      readonly session?: SessionId | null;
      /** Absent = exclusive. */
      readonly mode?: LeaseMode;
    }
  | {
      readonly type: 'lease.renew';
      readonly name: string;
      readonly holder: string;
      readonly fencingToken: FencingToken;
    }
  | {
      readonly type: 'lease.release';
      readonly name: string;
      readonly holder: string;
      readonly fencingToken: FencingToken;
    }
  /** Withdraw a queued waiter (its HTTP request was aborted, BC-27). No-op if already granted/gone. */
  | {
      readonly type: 'lease.cancelWait';
      readonly name: string;
      readonly holder: string;
      readonly waiterId: number;
    }
  /** Operator revoke: every live grant of the name, or the one with `fencingToken`. */
  | RevokeFields<'lease.revoke', 'name'>;

/** Operator revoke of a resource's live grants (all of them, or the one with `fencingToken`). */
export type RevokeFields<T extends string, K extends 'name' | 'group'> = { readonly type: T } & {
  readonly [k in K]: string;
} & {
  /** null = every live grant of the resource. */
  readonly fencingToken: FencingToken | null;
  /** Free text kept for the operator's log (1–200 printable characters) or null. */
  readonly reason: string | null;
};

/** Sessions (docs/primitives.md): one ttl that keeps many grants alive. */
export type SessionCommand =
  | {
      readonly type: 'session.create';
      readonly ttlMs: number;
      /** Free label for operators (1–200 printable characters) or null. */
      readonly name: string | null;
    }
  | { readonly type: 'session.keepalive'; readonly sessionId: SessionId }
  | { readonly type: 'session.end'; readonly sessionId: SessionId };

/** Semaphores (docs/primitives.md): at most `limit` live permits, a fencing token per permit. */
export type SemaphoreCommand =
  | {
      readonly type: 'semaphore.acquire';
      readonly name: string;
      readonly holder: string;
      /** 1…semaphoreLimitMax; must equal the current limit while the name has holders or waiters. */
      readonly limit: number;
      /** The permit's own ttl; null exactly when `session` is given. */
      readonly ttlMs: number | null;
      readonly session: SessionId | null;
      readonly waitMs: number;
    }
  | {
      readonly type: 'semaphore.renew';
      readonly name: string;
      readonly holder: string;
      readonly fencingToken: FencingToken;
    }
  | {
      readonly type: 'semaphore.release';
      readonly name: string;
      readonly holder: string;
      readonly fencingToken: FencingToken;
    }
  | {
      readonly type: 'semaphore.cancelWait';
      readonly name: string;
      readonly holder: string;
      readonly waiterId: number;
    }
  | RevokeFields<'semaphore.revoke', 'name'>;

export type ElectionCommand =
  | {
      readonly type: 'election.campaign';
      readonly group: string;
      readonly candidate: string;
      /** The candidacy's own ttl; null exactly when `session` is given. */
      readonly ttlMs: number | null;
      readonly value: JsonValue;
      /** Bind the candidacy to this session instead of a ttl (absent = null). */
      readonly session?: SessionId | null;
    }
  | { readonly type: 'election.renew'; readonly group: string; readonly candidate: string }
  | { readonly type: 'election.resign'; readonly group: string; readonly candidate: string }
  | {
      readonly type: 'election.proclaim';
      readonly group: string;
      readonly candidate: string;
      readonly fencingToken: FencingToken;
      readonly value: JsonValue;
    }
  /** Operator revoke of the current leadership (all, or only if it carries `fencingToken`). */
  | RevokeFields<'election.revoke', 'group'>;

export type KvCommand =
  | {
      readonly type: 'kv.put';
      readonly key: string;
      readonly value: JsonValue;
      readonly fence: FenceRef | null;
      readonly ifRevision: Revision | null;
    }
  | {
      readonly type: 'kv.delete';
      readonly key: string;
      readonly fence: FenceRef | null;
      readonly ifRevision: Revision | null;
    };

/** Advances cluster time only (the leader proposes it when `nextDueMs()` has passed). */
export type TimeCommand = { readonly type: 'time.advance' };

export type Command =
  | LeaseCommand
  | ElectionCommand
  | KvCommand
  | TimeCommand
  | SessionCommand
  | SemaphoreCommand
  | AuthCommand;

/**
 * What goes into a log entry. `idempotency` (docs/concepts.md): a repeat of `key` with the same
 * `fingerprint` (server: hash of route + canonical body) within the window returns the first
 * result; a different fingerprint gives `idempotency_key_reused`.
 */
export interface CommandEnvelope {
  readonly v: 1;
  readonly command: Command;
  readonly idempotency: { readonly key: string; readonly fingerprint: string } | null;
  /**
   * The token that sent the command when auth is on (docs/security.md): grants record its name
   * and only it may renew, release or resign them; its caps bound its live grants. Absent or
   * null = auth off, or the server itself (then no ownership check applies).
   */
  readonly principal?: Principal | null;
}

export interface LeaseGrant {
  readonly name: string;
  readonly holder: string;
  readonly fencingToken: FencingToken;
  /** Effective ttl of this grant (shorter than asked when capped by maxHoldMs). */
  readonly ttlMs: number;
  /** Present as 'shared' for a shared grant (absent = exclusive). */
  readonly mode?: 'shared';
}

/** A lease grant bound to a session: no ttl of its own (docs/primitives.md, sessions). */
export interface SessionLeaseGrant {
  readonly name: string;
  readonly holder: string;
  readonly fencingToken: FencingToken;
  readonly ttlMs: null;
  readonly session: SessionId;
  /** Present as 'shared' for a shared grant (absent = exclusive). */
  readonly mode?: 'shared';
}

/** Any lease grant answer: with its own ttl, or session-bound. */
export type AnyLeaseGrant = LeaseGrant | SessionLeaseGrant;

export type LeaseAcquireValue =
  | ({ readonly kind: 'granted' } & AnyLeaseGrant)
  /** Queued FIFO (waitMs > 0). `waiterId` is the log index of the acquire entry. */
  | {
      readonly kind: 'queued';
      readonly name: string;
      readonly holder: string;
      readonly waiterId: number;
      readonly deadlineMs: number;
    };

export interface ElectionLeader {
  readonly candidate: string;
  readonly value: JsonValue;
  readonly fencingToken: FencingToken;
}
export interface CampaignValue {
  readonly group: string;
  readonly candidate: string;
  readonly elected: boolean;
  /** Present when elected. */
  readonly fencingToken?: FencingToken;
  readonly leader: ElectionLeader | null;
  /** Present (the session id) when the candidacy is bound to a session. */
  readonly session?: SessionId;
}

/** Result of applying one envelope. `replayed` is true when answered from the idempotency record. */
export type CommandResult<V = unknown> =
  | { readonly ok: true; readonly value: V; readonly replayed?: boolean }
  | { readonly ok: false; readonly error: StateError; readonly replayed?: boolean };

/** Output of `apply`: the result plus which resources changed (for watch/observe wake-ups). */
export interface ApplyOutput {
  readonly result: CommandResult;
  /**
   * Resource keys changed by this entry, including expiries it triggered, sorted: `lease:NAME`,
   * `semaphore:NAME`, `election:GROUP`, `kv:KEY`, `session:ID`.
   */
  readonly changed: readonly string[];
  /**
   * What changed, in the order it happened inside the entry (expiry step, settle step, command).
   * All events of one entry share its log index as their revision; a replayed result adds none.
   * `CoordStateMachine.apply` always sets it (optional only for outputs built elsewhere, such as
   * a server's answer to an undecodable entry: absent means no events).
   */
  readonly events?: readonly ChangeEvent[];
}

/** The resource families a change event is about (the watch stream's `kinds`). */
export type ChangeKind = 'lease' | 'semaphore' | 'election' | 'kv' | 'session';

/**
 * What happened to a resource. Grants: granted, renewed, released, expired (also max_hold),
 * revoked, session_ended. Elections: elected, resigned, expired, revoked, session_ended (the
 * leadership ended), value (the leader's value changed), renewed (a candidacy was refreshed).
 * KV: put, deleted. Sessions: granted (created), renewed (keepalive), session_ended.
 */
export type ChangeType =
  | 'granted'
  | 'renewed'
  | 'released'
  | 'expired'
  | 'revoked'
  | 'elected'
  | 'resigned'
  | 'value'
  | 'put'
  | 'deleted'
  | 'session_ended';

/** Why a grant (lease grant, permit, leadership) ended, as holder history records it. */
export type GrantEndReason =
  'released' | 'expired' | 'revoked' | 'max_hold' | 'session_ended' | 'resigned';

/**
 * One change inside an applied entry (docs/api.md, streaming watch). `name` is the lease or
 * semaphore name, the election group, the KV key or the session id. Grant events carry `holder`
 * (elections: `candidate`) and `fencingToken`; `session`/`mode` when the grant has them; ended
 * grants carry `endReason`; KV puts and election `elected`/`value` events carry `value`;
 * granted/renewed grants and sessions carry `ttlMs` (null when session-bound).
 */
export interface ChangeEvent {
  readonly kind: ChangeKind;
  readonly name: string;
  readonly type: ChangeType;
  readonly holder?: string;
  readonly candidate?: string;
  readonly fencingToken?: FencingToken;
  readonly mode?: LeaseMode;
  readonly session?: SessionId;
  readonly endReason?: GrantEndReason;
  readonly value?: JsonValue;
  readonly ttlMs?: number | null;
}

/** Final fate of a queued waiter, kept for the idempotency window. */
export type WaiterOutcome =
  | { readonly kind: 'pending'; readonly deadlineMs: number }
  | ({ readonly kind: 'granted' } & (AnyLeaseGrant | SemaphoreGrant))
  /** `holder`: who held the name at the deadline (null: lock-delay; absent in older snapshots). */
  | { readonly kind: 'timed_out'; readonly holder?: string | null }
  /**
   * Withdrawn (its client went away, or its session ended). `holder` (leases): who held the name
   * when it was withdrawn — a pending waiter means the name was held then (null: lock-delay); absent
   * for semaphores and in older snapshots.
   */
  | { readonly kind: 'cancelled'; readonly holder?: string | null }
  | { readonly kind: 'unknown' };

/** An exclusive grant with its own ttl, as `getLease` shows it. */
export interface LeaseView extends LeaseGrant {
  /** expiresAt − nowMs, floored at 0. */
  readonly remainingMs: number;
}

/** An exclusive session-bound grant as `leaseState` shows it (`remainingMs` is the session's). */
export interface SessionLeaseView extends SessionLeaseGrant {
  readonly remainingMs: number;
}

/** One live shared grant of a lease, or one live permit of a semaphore. */
export interface HolderView {
  readonly holder: string;
  readonly fencingToken: FencingToken;
  /** Time left at `nowMs` (session-bound: the session's). */
  readonly remainingMs: number;
  /** Present when session-bound. */
  readonly session?: SessionId;
}

/** `GET /v1/leases/{name}` for a name held in shared mode (docs/api.md). */
export interface SharedLeaseView {
  readonly name: string;
  readonly mode: 'shared';
  /** Oldest grant first (increasing fencingToken). */
  readonly holders: readonly HolderView[];
}

/** `GET /v1/semaphores/{name}` (docs/api.md); `waiters` is a count. */
export interface SemaphoreView {
  readonly name: string;
  readonly limit: number;
  /** Oldest permit first (increasing fencingToken). */
  readonly holders: readonly HolderView[];
  readonly waiters: number;
}

/** `GET /v1/sessions/{sessionId}` (docs/api.md). Lists are sorted by name / group. */
export interface SessionView {
  readonly sessionId: SessionId;
  readonly name: string | null;
  readonly ttlMs: number;
  readonly remainingMs: number;
  readonly leases: readonly { readonly name: string; readonly fencingToken: FencingToken }[];
  readonly semaphores: readonly { readonly name: string; readonly fencingToken: FencingToken }[];
  readonly candidacies: readonly { readonly group: string }[];
}

/** The resource families that keep holder history and can be revoked. */
export type GrantResourceKind = 'lease' | 'semaphore' | 'election';

/**
 * One grant in a resource's holder history (docs/api.md, holder history). For elections it is a
 * leadership (`holder` is the candidate). Times are cluster ms; `endedAtMs`/`endReason` null while live.
 */
export interface HistoryEntry {
  readonly holder: string;
  readonly fencingToken: FencingToken;
  /** Leases only. */
  readonly mode?: LeaseMode;
  readonly session?: SessionId;
  readonly grantedAtMs: number;
  readonly endedAtMs: number | null;
  readonly endReason: GrantEndReason | null;
}

export interface ElectionView {
  readonly group: string;
  readonly leader: ElectionLeader | null;
  readonly candidates: readonly { readonly candidate: string; readonly value: JsonValue }[];
  /** Increases on every change of leader or value; 0 for a group never used. */
  readonly revision: number;
}

export interface KvView {
  readonly key: string;
  readonly value: JsonValue;
  readonly revision: Revision;
}

/** Configurable limits (docs/api.md, docs/architecture.md habit 7). */
export interface CoordLimits {
  readonly ttlMsMin: number; // default 100
  readonly ttlMsMax: number; // default 3_600_000
  readonly waitMsMax: number; // default 60_000
  readonly leasesMax: number;
  readonly waitersPerLeaseMax: number;
  readonly candidatesPerGroupMax: number;
  readonly electionsMax: number;
  readonly keysMax: number;
  readonly valueBytesMax: number; // default 65_536
  readonly idempotencyWindowMs: number; // default 600_000
  readonly idempotencyRecordsMax: number;
}

/**
 * The replicated coordination state machine (implemented by `CoordStateMachine`).
 * Every mutation goes through `apply(index, clusterTimeMs, envelope)`; queries never mutate.
 */
export interface CoordState {
  /** Apply one committed entry. `envelope` null = leader no-op (advances time only). Never throws on bad input. */
  apply(index: number, clusterTimeMs: number, envelope: CommandEnvelope | null): ApplyOutput;
  /** Earliest cluster time at which something is due (expiry, waiter deadline, lock-delay end), or null. */
  nextDueMs(): number | null;
  /** Cluster time of the last applied entry. */
  lastAppliedTimeMs(): number;
  /** Log index of the last applied entry (0 before any; after `restore`, the snapshot's). */
  lastAppliedIndex(): number;
  getLease(name: string, nowMs: number): LeaseView | null;
  /**
   * Live leases with names starting with `prefix` and after `after` (a cursor: the last name of
   * the previous page; null = from the first), sorted by name, at most `limit`.
   */
  listLeases(prefix: string, limit: number, nowMs: number, after?: string | null): LeaseView[];
  /** Election groups with candidates, as `getElection` shows them, paged like `listLeases`. */
  listElections(prefix: string, limit: number, after?: string | null): ElectionView[];
  /** KV entries, paged like `listLeases`. */
  listKv(prefix: string, limit: number, after?: string | null): KvView[];
  /** Lock-delay left for `name` at `nowMs` (0 if none). */
  lockDelayRemainingMs(name: string, nowMs: number): number;
  waiterOutcome(name: string, waiterId: number): WaiterOutcome;
  getElection(group: string): ElectionView;
  getKv(key: string): KvView | null;
  /** docs/api.md fence check: valid iff the resource's current live grant carries exactly `fencingToken`. */
  fenceCheck(ref: FenceRef): { valid: boolean; current: FencingToken | null };
  /** Result recorded for an idempotency key (null if unknown or outside the window). */
  idempotentResult(key: string): { fingerprint: string; result: CommandResult } | null;
  counts(): {
    leases: number;
    waiters: number;
    elections: number;
    candidates: number;
    keys: number;
    idempotencyRecords: number;
  };
  /** Deterministic encoding of the whole state (same state ⇒ same bytes), in one step. */
  snapshot(): Uint8Array;
  /**
   * The same bytes as `snapshot()`, in bounded steps (snapshot-slices.ts): each `next()` does at
   * most about `sliceEntries` (default SNAPSHOT_SLICE_ENTRIES) rows of work and yields its bytes.
   * Nothing may be applied between steps (a step that finds an entry applied throws); a `restore`
   * meanwhile leaves the slices describing the state before it.
   */
  snapshotSlices(sliceEntries?: number): Iterator<Uint8Array, void, undefined>;
  restore(bytes: Uint8Array): void;
  /** Throws if an internal invariant is broken (tests call it after every step). */
  checkInvariants(): void;
  /** Exclusive view, shared view, or null when nobody holds `name` at `nowMs`. */
  leaseState(name: string, nowMs: number): LeaseView | SessionLeaseView | SharedLeaseView | null;
  /** The semaphore, or null when nobody holds or waits (404). */
  getSemaphore(name: string, nowMs: number): SemaphoreView | null;
  /** The live session, or null when ended, expired at `nowMs` or unknown (404). */
  getSession(sessionId: SessionId, nowMs: number): SessionView | null;
  /** Newest first, live grants included, at most `limit` entries; [] for a name never granted. */
  history(kind: GrantResourceKind, name: string, limit: number): HistoryEntry[];
  /** The stored token `name` with its salted hash (docs/security.md), or null. */
  authToken(name: string): TokenRecord | null;
  /** Every token without hash or salt, sorted by name. */
  authTokens(): TokenView[];
  /** Every stored role, sorted by name (the built-in `admin` is not stored). */
  authRoles(): RoleView[];
  /** The auth state for `isAllowed` (read-only by contract). */
  authState(): AuthState;
}

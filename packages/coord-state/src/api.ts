/**
 * The coordination state machine's public contract: commands, results, queries.
 * The server and client build against these shapes; coord-state implements them.
 *
 * Conventions: all durations are integer ms; all times are SPEC §2 cluster time in ms.
 * `FencingToken` values are JSON-safe integers.
 */
import type { StateError } from './errors.js';

/** Per-resource fencing token (SPEC §1.4): strictly increases with every new grant, never reused. */
export type FencingToken = number;
/** Global KV revision: the log index of a key's last write (SPEC §3). */
export type Revision = number;
/** A JSON value (KV values and election values). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

/** Names a fencing resource: a lease or an election group (exactly one). */
export type FenceRef =
  | { readonly lease: string; readonly fencingToken: FencingToken }
  | { readonly election: string; readonly fencingToken: FencingToken };

export type LeaseCommand =
  | {
      readonly type: 'lease.acquire';
      readonly name: string;
      readonly holder: string;
      readonly ttlMs: number;
      readonly waitMs: number;
      readonly lockDelayMs: number;
      readonly maxHoldMs: number | null;
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
    };

export type ElectionCommand =
  | {
      readonly type: 'election.campaign';
      readonly group: string;
      readonly candidate: string;
      readonly ttlMs: number;
      readonly value: JsonValue;
    }
  | { readonly type: 'election.renew'; readonly group: string; readonly candidate: string }
  | { readonly type: 'election.resign'; readonly group: string; readonly candidate: string }
  | {
      readonly type: 'election.proclaim';
      readonly group: string;
      readonly candidate: string;
      readonly fencingToken: FencingToken;
      readonly value: JsonValue;
    };

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

export type Command = LeaseCommand | ElectionCommand | KvCommand | TimeCommand;

/**
 * What goes into a log entry. `idempotency` (SPEC §1.6): a repeat of `key` with the same
 * `fingerprint` (server: hash of route + canonical body) within the window returns the first
 * result; a different fingerprint gives `idempotency_key_reused`.
 */
export interface CommandEnvelope {
  readonly v: 1;
  readonly command: Command;
  readonly idempotency: { readonly key: string; readonly fingerprint: string } | null;
}

export interface LeaseGrant {
  readonly name: string;
  readonly holder: string;
  readonly fencingToken: FencingToken;
  /** Effective ttl of this grant (shorter than asked when capped by maxHoldMs). */
  readonly ttlMs: number;
}

export type LeaseAcquireValue =
  | ({ readonly kind: 'granted' } & LeaseGrant)
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
}

/** Result of applying one envelope. `replayed` is true when answered from the idempotency record. */
export type CommandResult<V = unknown> =
  | { readonly ok: true; readonly value: V; readonly replayed?: boolean }
  | { readonly ok: false; readonly error: StateError; readonly replayed?: boolean };

/** Output of `apply`: the result plus which resources changed (for watch/observe wake-ups). */
export interface ApplyOutput {
  readonly result: CommandResult;
  /** Resource keys changed by this entry, including expiries it triggered: `lease:NAME`, `election:GROUP`, `kv:KEY`. */
  readonly changed: readonly string[];
}

/** Final fate of a queued waiter, kept for the idempotency window. */
export type WaiterOutcome =
  | { readonly kind: 'pending'; readonly deadlineMs: number }
  | ({ readonly kind: 'granted' } & LeaseGrant)
  /** `holder`: who held the name at the deadline (null: lock-delay; absent in older snapshots). */
  | { readonly kind: 'timed_out'; readonly holder?: string | null }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'unknown' };

export interface LeaseView extends LeaseGrant {
  /** expiresAt − nowMs, floored at 0. */
  readonly remainingMs: number;
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

/** Configurable limits (SPEC §3, STYLE habit 7). */
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
  getLease(name: string, nowMs: number): LeaseView | null;
  /** Live leases with names starting with `prefix`, sorted by name, at most `limit`. */
  listLeases(prefix: string, limit: number, nowMs: number): LeaseView[];
  /** Lock-delay left for `name` at `nowMs` (0 if none). */
  lockDelayRemainingMs(name: string, nowMs: number): number;
  waiterOutcome(name: string, waiterId: number): WaiterOutcome;
  getElection(group: string): ElectionView;
  getKv(key: string): KvView | null;
  /** SPEC §3 fence check: valid iff the resource's current live grant carries exactly `fencingToken`. */
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
  snapshot(): Uint8Array;
  restore(bytes: Uint8Array): void;
  /** Throws if an internal invariant is broken (tests call it after every step). */
  checkInvariants(): void;
}

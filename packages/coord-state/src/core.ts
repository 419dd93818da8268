/**
 * All replicated state of the coordination state machine in one place, with the scheduling
 * helpers the handlers share. Owned by `CoordStateMachine`; mutated only inside `apply`.
 */
import type { CommandResult, WaiterOutcome } from './api.js';
import { AuthState } from './auth.js';
import { DueQueue } from './due-queue.js';
import { FifoMap } from './fifo-map.js';
import { GrantHistory } from './history.js';
import type { CoordLimitsFull } from './limits.js';
import { OwnerCounts } from './ownership.js';
import type {
  Candidacy,
  ElectionRecord,
  Grant,
  KvRecord,
  LeaseRecord,
  Permit,
  SemaphoreRecord,
  SemWaiter,
  SessionRecord,
  Waiter,
} from './model.js';
import { WindowedMap } from './windowed-map.js';

/** Anything that can fall due and wake the leader (docs/concepts.md: it proposes an entry at `nextDueMs`). */
export type WakeEntry =
  Grant | Waiter | Candidacy | LeaseRecord | SessionRecord | Permit | SemWaiter;

/** An idempotency record (docs/concepts.md): the fingerprint of the first request and its result. */
export interface IdempotencyRecord {
  readonly fingerprint: string;
  result: CommandResult;
}

/** The final (or pending) fate of a waiter, with the lease name it queued on. */
export interface WaiterOutcomeRecord {
  readonly name: string;
  readonly outcome: WaiterOutcome;
}

export class Core {
  readonly limits: CoordLimitsFull;
  /** Lease records by name (granted, waited on, or in lock-delay). Size ≤ leasesMax. */
  readonly leases = new Map<string, LeaseRecord>();
  /** Election groups with candidates. Size ≤ electionsMax. */
  readonly elections = new Map<string, ElectionRecord>();
  /** Emptied groups → their last revision (bounded, oldest evicted). */
  readonly retiredElections = new FifoMap<string, number>();
  readonly kv = new Map<string, KvRecord>();
  /** Live sessions by id. Size ≤ sessionsMax. */
  readonly sessions = new Map<string, SessionRecord>();
  /** Semaphores with permits or waiters. Size ≤ semaphoresMax. */
  readonly semaphores = new Map<string, SemaphoreRecord>();
  /** Queued semaphore waiters by waiterId (ids shared with lease waiters: log indexes). */
  readonly pendingSemWaiters = new Map<number, SemWaiter>();
  /** Grants, waiters, candidacies and waited-on lock-delays: what `nextDueMs` reports. */
  readonly wake = new DueQueue<WakeEntry>();
  /** Lock-delays nobody waits for: cleaned when due, but never a reason to propose an entry. */
  readonly sweep = new DueQueue<LeaseRecord>();
  /** Queued waiters by waiterId. Size ≤ waitersMax. */
  readonly pendingWaiters = new Map<number, Waiter>();
  readonly waiterOutcomes: WindowedMap<number, WaiterOutcomeRecord>;
  readonly idempotency: WindowedMap<string, IdempotencyRecord>;
  readonly history: GrantHistory;
  /** Tokens and roles (docs/security.md); changed only by auth commands. */
  auth = new AuthState();
  /**
   * Live lease grants, sessions and queued waiters (leases and semaphores) per owner token.
   * Derived state: rebuilt on restore, checked against the records by the invariants.
   */
  owners = new OwnerCounts();
  /** Last tie-break number handed out to a due entry (strictly increasing). */
  dueSeq = 0;
  /** Number of live lease grants (exclusive and shared). */
  grantsLive = 0;
  /** Number of live semaphore permits. */
  permitsLive = 0;
  /** Number of candidacies over all groups. */
  candidatesCount = 0;
  /** Log index and cluster time of the last applied entry (0 before any). */
  lastIndex = 0;
  lastTimeMs = 0;

  constructor(limits: CoordLimitsFull) {
    this.limits = limits;
    this.waiterOutcomes = new WindowedMap(limits.idempotencyWindowMs, limits.idempotencyRecordsMax);
    this.idempotency = new WindowedMap(limits.idempotencyWindowMs, limits.idempotencyRecordsMax);
    this.history = new GrantHistory(
      limits.historyPerNameMax,
      limits.historyNamesMax,
      limits.historyEntriesMax,
    );
  }

  /** (Re)schedules a wake entry at `dueMs` with a fresh tie-break. */
  scheduleWake(entry: WakeEntry, dueMs: number): void {
    entry.dueMs = dueMs;
    entry.seq = ++this.dueSeq;
    this.wake.update(entry);
  }

  /** Queued waiters of leases and semaphores together (bounded by waitersMax). */
  get waitersCount(): number {
    return this.pendingWaiters.size + this.pendingSemWaiters.size;
  }

  /** Schedules a lease record's lock-delay end in the sweep queue. */
  scheduleSweep(record: LeaseRecord, dueMs: number): void {
    record.dueMs = dueMs;
    record.seq = ++this.dueSeq;
    this.sweep.update(record);
  }
}

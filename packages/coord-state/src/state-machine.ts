/**
 * `CoordStateMachine`: the deterministic coordination state machine Raft replicates (docs/concepts.md–§3).
 *
 * `apply(index, clusterTimeMs, envelope)` is the only mutator. Each entry runs in three steps:
 *  1. expiry — every grant, waiter deadline, candidacy and lock-delay due at or before the
 *     entry's cluster time is ended, in due-queue order (dueMs, seq);
 *  2. settle — each touched lease / group, in name order, is brought to rest: a free name goes to
 *     its head waiter (all dead waiters are gone by then, BC-01), a leaderless group to its oldest
 *     candidacy, each with a new fencing token (fencing.ts);
 *  3. the command, answered as a value (never thrown), remembered under its idempotency key.
 * Queries never mutate. No clock, timer or randomness: time is the entry's cluster time (docs/concepts.md).
 */
import assert from 'node:assert';
import type {
  ApplyOutput,
  ChangeEvent,
  Command,
  CommandEnvelope,
  CommandResult,
  CoordState,
  ElectionView,
  FenceRef,
  GrantResourceKind,
  HistoryEntry,
  KvView,
  LeaseView,
  SemaphoreView,
  SessionLeaseView,
  SessionView,
  SharedLeaseView,
  WaiterOutcome,
} from './api.js';
import { scopedIdempotency } from './idempotency-scope.js';
import {
  AUTH_CHANGE_KEY,
  applyAuth,
  authRows,
  tokenView,
  type AuthState,
  type RoleView,
  type TokenRecord,
  type TokenView,
} from './auth.js';
import { Core } from './core.js';
import {
  electionCampaign,
  electionProclaim,
  electionRenew,
  electionResign,
  electionRevoke,
  electionView,
  expireCandidacy,
  settleElection,
} from './elections.js';
import type { EndedGrant } from './history.js';
import { checkCoreInvariants } from './invariants.js';
import { fenceState, kvDelete, kvPut } from './kv.js';
import {
  endLockDelay,
  expireGrant,
  leaseAcquire,
  leaseCancelWait,
  leaseRelease,
  leaseRenew,
  leaseRevoke,
  settleLease,
  timeoutWaiter,
} from './leases.js';
import { resolveLimits, type CoordLimitsFull } from './limits.js';
import { pageOfNames } from './listing.js';
import { leaseKey, type ApplyContext, type ElectionRecord } from './model.js';
import type { WakeEntry } from './core.js';
import { historyOf, leaseStateView, semaphoreView, sessionView } from './queries.js';
import {
  expirePermit,
  semaphoreAcquire,
  semaphoreCancelWait,
  semaphoreRelease,
  semaphoreRenew,
  semaphoreRevoke,
  settleSemaphore,
  timeoutSemWaiter,
} from './semaphores.js';
import {
  expireSession,
  newTouched,
  sessionCreate,
  sessionEnd,
  sessionKeepalive,
  type Touched,
} from './sessions.js';
import { readSnapshot, writeSnapshot } from './snapshot.js';
import { snapshotSlices } from './snapshot-slices.js';
import { checkCommandRanges, checkEnvelopeShape } from './validate.js';

const OK_NULL: CommandResult = Object.freeze({ ok: true, value: null });

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
function byGroup(a: { group: string }, b: { group: string }): number {
  return a.group < b.group ? -1 : a.group > b.group ? 1 : 0;
}
const NO_EVENTS: readonly ChangeEvent[] = Object.freeze([]);

/** The replicated coordination state (see module doc). Construct with limit overrides. */
export class CoordStateMachine implements CoordState {
  readonly limits: CoordLimitsFull;
  #core: Core;

  /** `limits`: overrides of DEFAULT_LIMITS; must be equal on every replica (they shape results). */
  constructor(limits: Partial<CoordLimitsFull> = {}) {
    this.limits = resolveLimits(limits);
    this.#core = new Core(this.limits);
  }

  /**
   * Applies one committed entry. `index` strictly increases, `clusterTimeMs` never decreases
   * (asserted: a violation is a Raft bug). `envelope` null = leader no-op (time only). Never throws
   * on bad input: a malformed command yields an `invalid_argument` result.
   */
  apply(index: number, clusterTimeMs: number, envelope: CommandEnvelope | null): ApplyOutput {
    const core = this.#core;
    assert(
      Number.isSafeInteger(index) && index > core.lastIndex,
      `apply: index ${index} not after ${core.lastIndex}`,
    );
    assert(
      Number.isSafeInteger(clusterTimeMs) && clusterTimeMs >= core.lastTimeMs,
      `apply: cluster time ${clusterTimeMs} before ${core.lastTimeMs}`,
    );
    core.lastIndex = index;
    core.lastTimeMs = clusterTimeMs;
    const ctx: ApplyContext = {
      index,
      nowMs: clusterTimeMs,
      changed: new Set(),
      events: [],
      principal: envelope?.principal ?? null,
    };
    this.#expireDue(ctx);
    core.idempotency.expire(clusterTimeMs);
    core.waiterOutcomes.expire(clusterTimeMs);
    const result = envelope === null ? OK_NULL : this.#applyEnvelope(ctx, envelope);
    const changed =
      ctx.changed.size === 0
        ? []
        : ctx.changed.size === 1
          ? [...ctx.changed]
          : [...ctx.changed].sort();
    return { result, changed, events: ctx.events.length === 0 ? NO_EVENTS : ctx.events };
  }

  /**
   * Expiry and settle phases. Lease events are replayed at their own due times, in order: at each
   * due time `d` (≤ the entry's time) the waiters due at `d` time out first, then the grants and
   * lock-delays due at `d` end, then each touched lease is settled as of `d` — so a waiter still
   * live when its name fell free is granted even when the next entry comes after its deadline
   * (cluster time may jump by more than a waiter's remaining wait, e.g. after a leaderless spell).
   * The grant itself starts at the entry's time (ttl counts from the granting entry). Candidacies
   * end in the same order and their groups settle once, at the entry's time.
   */
  #expireDue(ctx: ApplyContext): void {
    let touchedGroups: Set<ElectionRecord> | null = null;
    for (let d = this.#nextDueMs(ctx.nowMs); d !== null; d = this.#nextDueMs(ctx.nowMs)) {
      const groups = this.#expireAt(ctx, d);
      if (groups.size > 0) for (const g of groups) (touchedGroups ??= new Set()).add(g);
    }
    if (touchedGroups !== null)
      for (const rec of [...touchedGroups].sort(byGroup)) settleElection(this.#core, ctx, rec);
  }

  /** The earliest due time in the wake or sweep queue that is ≤ `nowMs`, or null. */
  #nextDueMs(nowMs: number): number | null {
    const a = this.#core.wake.peek()?.dueMs ?? Infinity;
    const b = this.#core.sweep.peek()?.dueMs ?? Infinity;
    const d = Math.min(a, b);
    return d <= nowMs ? d : null;
  }

  /**
   * Ends everything due exactly at `dueMs` and settles the touched leases and semaphores as of
   * then; returns the touched election groups (settled once, at the entry's time, by the caller).
   */
  #expireAt(ctx: ApplyContext, dueMs: number): Set<ElectionRecord> {
    const core = this.#core;
    const at: ApplyContext = { ...ctx, nowMs: dueMs };
    const due: WakeEntry[] = [];
    for (let e = core.wake.peek(); e !== undefined && e.dueMs === dueMs; e = core.wake.peek())
      due.push(core.wake.pop()!);
    // A waiter due at the instant its name falls free is not granted (never at its deadline),
    // and it times out while the grant still stands: its answer names that holder.
    const isWaiter = (e: WakeEntry): number =>
      Number(e.kind === 'waiter' || e.kind === 'semWaiter');
    due.sort((x, y) => isWaiter(y) - isWaiter(x));
    const touched: Touched = newTouched();
    for (const e of due) this.#expireOne(at, e, touched);
    for (let r = core.sweep.peek(); r !== undefined && r.dueMs === dueMs; r = core.sweep.peek()) {
      core.sweep.pop();
      endLockDelay(core, at, r);
      touched.leases.add(r);
    }
    for (const rec of [...touched.leases].sort(byName)) settleLease(core, ctx, rec, dueMs);
    for (const rec of [...touched.semaphores].sort(byName)) settleSemaphore(core, ctx, rec, dueMs);
    return touched.groups;
  }

  /** Ends one due item at `at` (its due time) and records the record it touched. */
  #expireOne(at: ApplyContext, e: WakeEntry, touched: Touched): void {
    const core = this.#core;
    switch (e.kind) {
      case 'grant':
        expireGrant(core, at, e);
        touched.leases.add(e.lease);
        break;
      case 'waiter':
        timeoutWaiter(core, at, e);
        touched.leases.add(e.lease);
        break;
      case 'lease':
        endLockDelay(core, at, e);
        touched.leases.add(e);
        break;
      case 'candidacy':
        expireCandidacy(core, at, e);
        touched.groups.add(e.election);
        break;
      case 'permit':
        expirePermit(core, at, e);
        touched.semaphores.add(e.semaphore);
        break;
      case 'semWaiter':
        timeoutSemWaiter(core, at, e);
        touched.semaphores.add(e.semaphore);
        break;
      case 'session':
        expireSession(core, at, e, touched);
        break;
    }
  }

  /** Settle step: every touched record, leases then semaphores then groups, each in name order. */
  #settle(ctx: ApplyContext, touched: Touched): void {
    const core = this.#core;
    for (const rec of [...touched.leases].sort(byName)) settleLease(core, ctx, rec);
    for (const rec of [...touched.semaphores].sort(byName)) settleSemaphore(core, ctx, rec);
    for (const rec of [...touched.groups].sort(byGroup)) settleElection(core, ctx, rec);
  }

  #applyEnvelope(ctx: ApplyContext, envelope: CommandEnvelope): CommandResult {
    const shapeError = checkEnvelopeShape(envelope);
    if (shapeError !== null) return { ok: false, error: shapeError };
    const idem = scopedIdempotency(envelope);
    if (idem !== null) {
      const prior = this.#core.idempotency.get(idem.key, ctx.nowMs);
      if (prior !== undefined) {
        if (prior.value.fingerprint === idem.fingerprint)
          return { ...prior.value.result, replayed: true };
        return {
          ok: false,
          error: {
            code: 'idempotency_key_reused',
            message: `Idempotency-Key ${idem.shown} was used for a different request`,
          },
        };
      }
    }
    const rangeError = checkCommandRanges(envelope.command, this.limits);
    const result =
      rangeError !== null
        ? { ok: false as const, error: rangeError }
        : this.#dispatch(ctx, envelope.command, idem?.key ?? null);
    if (idem !== null)
      this.#core.idempotency.set(idem.key, { fingerprint: idem.fingerprint, result }, ctx.nowMs);
    return result;
  }

  #dispatch(ctx: ApplyContext, cmd: Command, idempotencyKey: string | null): CommandResult {
    const core = this.#core;
    switch (cmd.type) {
      case 'lease.acquire':
        return leaseAcquire(core, ctx, cmd, idempotencyKey);
      case 'lease.renew':
        return leaseRenew(core, ctx, cmd);
      case 'lease.release':
        return leaseRelease(core, ctx, cmd);
      case 'lease.cancelWait':
        return leaseCancelWait(core, ctx, cmd);
      case 'lease.revoke':
        return leaseRevoke(core, ctx, cmd);
      case 'semaphore.acquire':
        return semaphoreAcquire(core, ctx, cmd, idempotencyKey);
      case 'semaphore.renew':
        return semaphoreRenew(core, ctx, cmd);
      case 'semaphore.release':
        return semaphoreRelease(core, ctx, cmd);
      case 'semaphore.cancelWait':
        return semaphoreCancelWait(core, ctx, cmd);
      case 'semaphore.revoke':
        return semaphoreRevoke(core, ctx, cmd);
      case 'session.create':
        return sessionCreate(core, ctx, cmd);
      case 'session.keepalive':
        return sessionKeepalive(core, ctx, cmd);
      case 'session.end':
        return sessionEnd(core, ctx, cmd, (t) => this.#settle(ctx, t));
      case 'election.revoke':
        return electionRevoke(core, ctx, cmd);
      case 'election.campaign':
        return electionCampaign(core, ctx, cmd);
      case 'election.renew':
        return electionRenew(core, ctx, cmd);
      case 'election.resign':
        return electionResign(core, ctx, cmd);
      case 'election.proclaim':
        return electionProclaim(core, ctx, cmd);
      case 'kv.put':
        return kvPut(core, ctx, cmd);
      case 'kv.delete':
        return kvDelete(core, ctx, cmd);
      case 'time.advance':
        return OK_NULL;
      case 'auth.createToken':
      case 'auth.revokeToken':
      case 'auth.putRole':
      case 'auth.deleteRole': {
        const result = applyAuth(core.auth, cmd);
        if (result.ok) ctx.changed.add(AUTH_CHANGE_KEY);
        return result;
      }
    }
  }

  /** Earliest cluster time at which a grant, candidacy, waiter deadline or waited-on lock-delay falls due; O(1). */
  nextDueMs(): number | null {
    return this.#core.wake.peek()?.dueMs ?? null;
  }

  lastAppliedTimeMs(): number {
    return this.#core.lastTimeMs;
  }

  /** Log index of the last applied entry (0 before any). Addition to CoordState. */
  lastAppliedIndex(): number {
    return this.#core.lastIndex;
  }

  /**
   * The live exclusive grant with its own ttl of `name` at `nowMs`; null if none, already due at
   * `nowMs`, shared or session-bound (`leaseState` shows every shape).
   */
  getLease(name: string, nowMs: number): LeaseView | null {
    const v = leaseStateView(this.#core, name, nowMs);
    return v === null || 'mode' in v || v.ttlMs === null ? null : v;
  }

  /** Exclusive view (own ttl or session-bound), shared view, or null when nobody holds `name`. */
  leaseState(name: string, nowMs: number): LeaseView | SessionLeaseView | SharedLeaseView | null {
    return leaseStateView(this.#core, name, nowMs);
  }

  /** Live exclusive leases whose name starts with `prefix`, sorted by name, at most `limit`. O(leases). */
  listLeases(
    prefix: string,
    limit: number,
    nowMs: number,
    after: string | null = null,
  ): LeaseView[] {
    const held = (function* (leases: Core['leases']) {
      for (const [name, rec] of leases) if (rec.grant !== null) yield name;
    })(this.#core.leases);
    const names = pageOfNames(held, prefix, after, Number.POSITIVE_INFINITY);
    const out: LeaseView[] = [];
    for (const name of names) {
      if (out.length >= limit) break;
      const v = this.getLease(name, nowMs);
      if (v !== null) out.push(v);
    }
    return out;
  }

  /** Election groups with candidates, in group order, after `after`, at most `limit`. */
  listElections(prefix: string, limit: number, after: string | null = null): ElectionView[] {
    const groups = pageOfNames(this.#core.elections.keys(), prefix, after, limit);
    return groups.map((g) => this.getElection(g));
  }

  /** KV entries in key order, after `after`, at most `limit`. */
  listKv(prefix: string, limit: number, after: string | null = null): KvView[] {
    const keys = pageOfNames(this.#core.kv.keys(), prefix, after, limit);
    return keys.map((k) => this.getKv(k)!);
  }

  lockDelayRemainingMs(name: string, nowMs: number): number {
    const rec = this.#core.leases.get(name);
    if (rec === undefined || rec.grant !== null) return 0;
    return Math.max(0, rec.lockDelayUntilMs - nowMs);
  }

  /**
   * Fate of waiter `waiterId` on lease or semaphore `name`: pending, or its final outcome for the
   * idempotency window, else unknown. Waiter ids are log indexes, unique over both kinds.
   */
  waiterOutcome(name: string, waiterId: number): WaiterOutcome {
    const core = this.#core;
    const pending = core.pendingWaiters.get(waiterId);
    if (pending !== undefined && pending.lease.name === name)
      return { kind: 'pending', deadlineMs: pending.dueMs };
    const semPending = core.pendingSemWaiters.get(waiterId);
    if (semPending !== undefined && semPending.semaphore.name === name)
      return { kind: 'pending', deadlineMs: semPending.dueMs };
    const done = core.waiterOutcomes.get(waiterId, core.lastTimeMs);
    if (done !== undefined && done.value.name === name) return done.value.outcome;
    return { kind: 'unknown' };
  }

  /** Election view; a never-used group is `{leader: null, candidates: [], revision: 0}`. */
  getElection(group: string): ElectionView {
    const rec = this.#core.elections.get(group);
    if (rec !== undefined) return electionView(rec);
    return {
      group,
      leader: null,
      candidates: [],
      revision: this.#core.retiredElections.get(group) ?? 0,
    };
  }

  /** The semaphore at `nowMs`, or null when nobody holds or waits. */
  getSemaphore(name: string, nowMs: number): SemaphoreView | null {
    return semaphoreView(this.#core, name, nowMs);
  }

  /** The live session at `nowMs`, or null when ended, expired or unknown. */
  getSession(sessionId: string, nowMs: number): SessionView | null {
    return sessionView(this.#core, sessionId, nowMs);
  }

  /** Holder history, newest first, live grants included, at most `limit` (docs/api.md). */
  history(kind: GrantResourceKind, name: string, limit: number): HistoryEntry[] {
    return historyOf(this.#core, kind, name, limit);
  }

  getKv(key: string): KvView | null {
    const rec = this.#core.kv.get(key);
    return rec === undefined ? null : { key, value: rec.value, revision: rec.revision };
  }

  /** Fence check against the state after the last applied entry (kv.ts `fenceState`). */
  fenceCheck(ref: FenceRef): { valid: boolean; current: number | null } {
    return fenceState(this.#core, ref);
  }

  idempotentResult(key: string): { fingerprint: string; result: CommandResult } | null {
    const e = this.#core.idempotency.get(key, this.#core.lastTimeMs);
    return e === undefined ? null : { fingerprint: e.value.fingerprint, result: e.value.result };
  }

  /** Ended grants of lease `name` remembered, oldest first (raw form of `history`). */
  leaseHistory(name: string): readonly EndedGrant[] {
    return this.#core.history.of(leaseKey(name));
  }

  /** leases = live lease grants (exclusive and shared); waiters = queued lease waiters; elections = groups with candidates. */
  counts(): {
    leases: number;
    waiters: number;
    elections: number;
    candidates: number;
    keys: number;
    idempotencyRecords: number;
  } {
    const c = this.#core;
    return {
      leases: c.grantsLive,
      waiters: c.pendingWaiters.size,
      elections: c.elections.size,
      candidates: c.candidatesCount,
      keys: c.kv.size,
      idempotencyRecords: c.idempotency.size,
    };
  }

  /**
   * Counts of the session/semaphore state (for metrics): live sessions, semaphore names with
   * permits or waiters, live permits, queued semaphore waiters, holder-history entries.
   */
  primitiveCounts(): {
    sessions: number;
    semaphores: number;
    permits: number;
    semaphoreWaiters: number;
    historyEntries: number;
  } {
    const c = this.#core;
    return {
      sessions: c.sessions.size,
      semaphores: c.semaphores.size,
      permits: c.permitsLive,
      semaphoreWaiters: c.pendingSemWaiters.size,
      historyEntries: c.history.entriesCount,
    };
  }

  /** The stored token `name` (with its salted hash, for the server's check), or null. */
  authToken(name: string): TokenRecord | null {
    return this.#core.auth.tokens.get(name) ?? null;
  }

  /** Every token without hash or salt, sorted by name (`GET /v1/auth/tokens`). */
  authTokens(): TokenView[] {
    return authRows(this.#core.auth).tokens.map(tokenView);
  }

  /** Every role (the built-in `admin` is not stored), sorted by name. */
  authRoles(): RoleView[] {
    return authRows(this.#core.auth).roles;
  }

  /** The auth state, read-only, for `isAllowed` (docs/security.md). */
  authState(): AuthState {
    return this.#core.auth;
  }

  /** Deterministic msgpackr encoding of the whole state (same state ⇒ same bytes). */
  snapshot(): Uint8Array {
    return writeSnapshot(this.#core);
  }

  /** `snapshot()` in bounded steps (snapshot-slices.ts); nothing may be applied meanwhile. */
  snapshotSlices(sliceEntries?: number): Iterator<Uint8Array, void, undefined> {
    return snapshotSlices(this.#core, sliceEntries);
  }

  /** Replaces the state with a snapshot's (taken with the same limits). Throws SnapshotFormatError on foreign bytes. */
  restore(bytes: Uint8Array): void {
    const core = readSnapshot(bytes, this.limits);
    this.#core = core;
    this.checkInvariants();
  }

  /** Throws (AssertionError) if an invariant is broken. O(state): for tests and the simulator. */
  checkInvariants(): void {
    checkCoreInvariants(this.#core);
  }
}

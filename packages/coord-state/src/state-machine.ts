/**
 * `CoordStateMachine`: the deterministic coordination state machine Raft replicates (SPEC §1–§3).
 *
 * `apply(index, clusterTimeMs, envelope)` is the only mutator. Each entry runs in three steps:
 *  1. expiry — every grant, waiter deadline, candidacy and lock-delay due at or before the
 *     entry's cluster time is ended, in due-queue order (dueMs, seq);
 *  2. settle — each touched lease / group, in name order, is brought to rest: a free name goes to
 *     its head waiter (all dead waiters are gone by then, BC-01), a leaderless group to its oldest
 *     candidacy, each with a new fencing token (fencing.ts);
 *  3. the command, answered as a value (never thrown), remembered under its idempotency key.
 * Queries never mutate. No clock, timer or randomness: time is the entry's cluster time (SPEC §2).
 */
import assert from 'node:assert';
import type {
  ApplyOutput,
  Command,
  CommandEnvelope,
  CommandResult,
  CoordState,
  ElectionView,
  FenceRef,
  KvView,
  LeaseView,
  WaiterOutcome,
} from './api.js';
import { Core } from './core.js';
import {
  electionCampaign,
  electionProclaim,
  electionRenew,
  electionResign,
  electionView,
  expireCandidacy,
  settleElection,
} from './elections.js';
import { tokenIndex } from './fencing.js';
import type { EndedGrant } from './history.js';
import { currentToken, kvDelete, kvPut } from './kv.js';
import {
  endLockDelay,
  expireGrant,
  leaseAcquire,
  leaseCancelWait,
  leaseRelease,
  leaseRenew,
  settleLease,
  timeoutWaiter,
} from './leases.js';
import { resolveLimits, type CoordLimitsFull } from './limits.js';
import type { ApplyContext, ElectionRecord, LeaseRecord } from './model.js';
import type { WakeEntry } from './core.js';
import { readSnapshot, writeSnapshot } from './snapshot.js';
import { checkCommandRanges, checkEnvelopeShape } from './validate.js';

const OK_NULL: CommandResult = Object.freeze({ ok: true, value: null });

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
function byGroup(a: ElectionRecord, b: ElectionRecord): number {
  return a.group < b.group ? -1 : a.group > b.group ? 1 : 0;
}

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
    const ctx: ApplyContext = { index, nowMs: clusterTimeMs, changed: new Set() };
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
    return { result, changed };
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
      if (groups !== null) for (const g of groups) (touchedGroups ??= new Set()).add(g);
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

  /** Ends everything due exactly at `dueMs` and settles the touched leases as of then. */
  #expireAt(ctx: ApplyContext, dueMs: number): Set<ElectionRecord> | null {
    const core = this.#core;
    const at: ApplyContext = { ...ctx, nowMs: dueMs };
    const due: WakeEntry[] = [];
    for (let e = core.wake.peek(); e !== undefined && e.dueMs === dueMs; e = core.wake.peek())
      due.push(core.wake.pop()!);
    // A waiter due at the instant its name falls free is not granted (never at its deadline),
    // and it times out while the grant still stands: its answer names that holder.
    due.sort((x, y) => Number(y.kind === 'waiter') - Number(x.kind === 'waiter'));
    const touchedLeases = new Set<LeaseRecord>();
    let touchedGroups: Set<ElectionRecord> | null = null;
    for (const e of due) {
      switch (e.kind) {
        case 'grant':
          expireGrant(core, at, e);
          touchedLeases.add(e.lease);
          break;
        case 'waiter':
          timeoutWaiter(core, at, e);
          touchedLeases.add(e.lease);
          break;
        case 'lease':
          endLockDelay(core, at, e);
          touchedLeases.add(e);
          break;
        case 'candidacy':
          expireCandidacy(core, ctx, e);
          (touchedGroups ??= new Set()).add(e.election);
          break;
      }
    }
    for (let r = core.sweep.peek(); r !== undefined && r.dueMs === dueMs; r = core.sweep.peek()) {
      core.sweep.pop();
      endLockDelay(core, at, r);
      touchedLeases.add(r);
    }
    for (const rec of [...touchedLeases].sort(byName)) settleLease(core, ctx, rec, dueMs);
    return touchedGroups;
  }

  #applyEnvelope(ctx: ApplyContext, envelope: CommandEnvelope): CommandResult {
    const shapeError = checkEnvelopeShape(envelope);
    if (shapeError !== null) return { ok: false, error: shapeError };
    const idem = envelope.idempotency ?? null; // a missing field counts as null
    if (idem !== null) {
      const prior = this.#core.idempotency.get(idem.key, ctx.nowMs);
      if (prior !== undefined) {
        if (prior.value.fingerprint === idem.fingerprint)
          return { ...prior.value.result, replayed: true };
        return {
          ok: false,
          error: {
            code: 'idempotency_key_reused',
            message: `Idempotency-Key ${idem.key} was used for a different request`,
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

  /** The live grant of `name` at cluster time `nowMs` (null if none or already due at `nowMs`). */
  getLease(name: string, nowMs: number): LeaseView | null {
    const g = this.#core.leases.get(name)?.grant;
    if (g == null || g.dueMs <= nowMs) return null;
    return {
      name,
      holder: g.holder,
      fencingToken: g.fencingToken,
      ttlMs: g.ttlMs,
      remainingMs: g.dueMs - nowMs,
    };
  }

  /** Live leases whose name starts with `prefix`, sorted by name, at most `limit`. O(leases). */
  listLeases(prefix: string, limit: number, nowMs: number): LeaseView[] {
    const names: string[] = [];
    for (const [name, rec] of this.#core.leases) {
      if (rec.grant !== null && rec.grant.dueMs > nowMs && name.startsWith(prefix))
        names.push(name);
    }
    names.sort();
    const out: LeaseView[] = [];
    for (const name of names) {
      if (out.length >= limit) break;
      out.push(this.getLease(name, nowMs)!);
    }
    return out;
  }

  lockDelayRemainingMs(name: string, nowMs: number): number {
    const rec = this.#core.leases.get(name);
    if (rec === undefined || rec.grant !== null) return 0;
    return Math.max(0, rec.lockDelayUntilMs - nowMs);
  }

  /** Fate of waiter `waiterId` on `name`: pending, or its final outcome for the idempotency window, else unknown. */
  waiterOutcome(name: string, waiterId: number): WaiterOutcome {
    const pending = this.#core.pendingWaiters.get(waiterId);
    if (pending !== undefined && pending.lease.name === name)
      return { kind: 'pending', deadlineMs: pending.dueMs };
    const done = this.#core.waiterOutcomes.get(waiterId, this.#core.lastTimeMs);
    if (done !== undefined && done.value.name === name) return done.value.outcome;
    return { kind: 'unknown' };
  }

  /** SPEC §3 election view; a never-used group is `{leader: null, candidates: [], revision: 0}`. */
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

  getKv(key: string): KvView | null {
    const rec = this.#core.kv.get(key);
    return rec === undefined ? null : { key, value: rec.value, revision: rec.revision };
  }

  /** SPEC §3 fence check against the state after the last applied entry. */
  fenceCheck(ref: FenceRef): { valid: boolean; current: number | null } {
    const current = currentToken(this.#core, ref);
    return { valid: current !== null && current === ref.fencingToken, current };
  }

  idempotentResult(key: string): { fingerprint: string; result: CommandResult } | null {
    const e = this.#core.idempotency.get(key, this.#core.lastTimeMs);
    return e === undefined ? null : { fingerprint: e.value.fingerprint, result: e.value.result };
  }

  /** Ended grants of `name` remembered (oldest first; SPEC §6 holder history seed). Addition. */
  leaseHistory(name: string): readonly EndedGrant[] {
    return this.#core.history.of(name);
  }

  /** leases = live grants; waiters = queued waiters; elections = groups with candidates. */
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

  /** Deterministic msgpackr encoding of the whole state (same state ⇒ same bytes). */
  snapshot(): Uint8Array {
    return writeSnapshot(this.#core);
  }

  /** Replaces the state with a snapshot's (taken with the same limits). Throws SnapshotFormatError on foreign bytes. */
  restore(bytes: Uint8Array): void {
    const core = readSnapshot(bytes, this.limits);
    this.#core = core;
    this.checkInvariants();
  }

  /** Throws (AssertionError) if an invariant is broken. O(state): for tests and the simulator. */
  checkInvariants(): void {
    const c = this.#core;
    const now = c.lastTimeMs;
    c.wake.checkInvariants();
    c.sweep.checkInvariants();
    let grants = 0;
    let waiters = 0;
    let wakeRecords = 0;
    for (const [name, rec] of c.leases) {
      assert.equal(rec.name, name);
      assert(
        rec.grant !== null || rec.waiters !== null || rec.lockDelayUntilMs !== 0,
        `invariant: empty lease record ${name}`,
      );
      if (rec.grant !== null) {
        const g = rec.grant;
        grants++;
        assert(g.lease === rec && g.heapIndex !== -1, `invariant: grant of ${name} not queued`);
        assert(g.dueMs > now, `invariant: grant of ${name} past expiry`);
        assert(
          g.fencingToken <= rec.lastFencingToken && tokenIndex(g.fencingToken) <= c.lastIndex,
          `invariant: token of ${name}`,
        );
        assert(
          g.maxHoldUntilMs === null || g.dueMs <= g.maxHoldUntilMs,
          `invariant: ${name} past maxHold`,
        );
        assert.equal(rec.lockDelayUntilMs, 0, `invariant: ${name} held during lock-delay`);
      } else if (rec.waiters !== null) {
        assert(rec.lockDelayUntilMs > now, `invariant: ${name} free with waiters`);
      }
      if (rec.lockDelayUntilMs !== 0) {
        assert(
          rec.lockDelayUntilMs > now && rec.dueMs === rec.lockDelayUntilMs && rec.heapIndex !== -1,
          `invariant: lock-delay of ${name}`,
        );
        assert.equal(
          rec.lockDelayQueue,
          rec.waiters !== null ? 'wake' : 'sweep',
          `invariant: lock-delay queue of ${name}`,
        );
        if (rec.lockDelayQueue === 'wake') wakeRecords++;
      } else {
        assert(
          rec.lockDelayQueue === 'none' && rec.heapIndex === -1,
          `invariant: stray lock-delay of ${name}`,
        );
      }
      if (rec.waiters !== null) {
        assert(rec.waiters.size > 0 && rec.waiters.size <= this.limits.waitersPerLeaseMax);
        let prev = 0;
        for (const [id, w] of rec.waiters) {
          waiters++;
          assert(
            w.waiterId === id && id > prev && w.lease === rec && c.pendingWaiters.get(id) === w,
            `invariant: waiter ${id} of ${name}`,
          );
          assert(w.dueMs > now && w.heapIndex !== -1, `invariant: waiter ${id} past deadline`);
          prev = id;
        }
      }
    }
    assert.equal(grants, c.grantsLive, 'invariant: grant count');
    assert.equal(waiters, c.pendingWaiters.size, 'invariant: waiter count');
    let candidates = 0;
    for (const [group, rec] of c.elections) {
      assert(rec.group === group && rec.candidates.size > 0, `invariant: empty group ${group}`);
      const first = rec.candidates.values().next().value!;
      assert(rec.leader === first, `invariant: leader of ${group} is not the oldest candidacy`);
      assert(
        rec.leaderToken > 0 && rec.leaderToken <= rec.lastFencingToken,
        `invariant: token of ${group}`,
      );
      for (const cand of rec.candidates.values()) {
        candidates++;
        assert(
          cand.election === rec && cand.dueMs > now && cand.heapIndex !== -1,
          `invariant: candidacy ${cand.candidate} of ${group}`,
        );
      }
      assert(rec.candidates.size <= this.limits.candidatesPerGroupMax);
    }
    assert.equal(candidates, c.candidatesCount, 'invariant: candidate count');
    assert.equal(
      c.wake.size,
      grants + waiters + candidates + wakeRecords,
      'invariant: wake queue size',
    );
    assert(
      c.leases.size <= this.limits.leasesMax &&
        c.kv.size <= this.limits.keysMax &&
        c.elections.size <= this.limits.electionsMax,
      'invariant: limits',
    );
    c.idempotency.checkInvariants();
    c.waiterOutcomes.checkInvariants();
    for (const e of c.wake.entries())
      assert(e.dueMs > now, 'invariant: due entry left in the wake queue');
    for (const e of c.sweep.entries())
      assert(e.dueMs > now && e.lockDelayQueue === 'sweep', 'invariant: sweep queue entry');
  }
}

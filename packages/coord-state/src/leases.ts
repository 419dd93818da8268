/**
 * Lease (lock) commands and lease expiry (SPEC §3 Leases, §1.3 exclusivity, §1.4 fencing,
 * §1.5 no early expiry). Handlers run inside `apply` after every due entry was expired, so
 * "live at the entry's cluster time" simply means "present".
 */
import assert from 'node:assert';
import type {
  CommandResult,
  FencingToken,
  LeaseAcquireValue,
  LeaseCommand,
  LeaseGrant,
  WaiterOutcome,
} from './api.js';
import type { Core } from './core.js';
import type { StateError } from './errors.js';
import { nextFencingToken } from './fencing.js';
import type { GrantEndReason } from './history.js';
import { leaseKey, type ApplyContext, type Grant, type LeaseRecord, type Waiter } from './model.js';
import type { CancelWaitValue, LeaseReleaseValue } from './results.js';

type Acquire = Extract<LeaseCommand, { type: 'lease.acquire' }>;
type Renew = Extract<LeaseCommand, { type: 'lease.renew' }>;
type Release = Extract<LeaseCommand, { type: 'lease.release' }>;
type CancelWait = Extract<LeaseCommand, { type: 'lease.cancelWait' }>;

function fail(
  code: StateError['code'],
  message: string,
  details?: Record<string, unknown>,
): CommandResult<never> {
  return {
    ok: false,
    error: details === undefined ? { code, message } : { code, message, details },
  };
}

/** The LeaseGrant answer for a grant at cluster time `nowMs`. */
export function grantValue(g: Grant): LeaseGrant {
  return { name: g.lease.name, holder: g.holder, fencingToken: g.fencingToken, ttlMs: g.ttlMs };
}

function newRecord(name: string): LeaseRecord {
  return {
    kind: 'lease',
    name,
    grant: null,
    lockDelayUntilMs: 0,
    lockDelayQueue: 'none',
    waiters: null,
    lastFencingToken: 0,
    dueMs: 0,
    seq: 0,
    heapIndex: -1,
  };
}

/** Grants `rec` (free, not in lock-delay) to `holder` at ctx time with a new fencing token. */
function grantTo(
  core: Core,
  ctx: ApplyContext,
  rec: LeaseRecord,
  holder: string,
  ttlMs: number,
  lockDelayMs: number,
  maxHoldMs: number | null,
): Grant {
  assert(
    rec.grant === null && rec.lockDelayUntilMs === 0,
    'lease: grant of a name that is not free',
  );
  const fencingToken = nextFencingToken(ctx.index, rec.lastFencingToken);
  rec.lastFencingToken = fencingToken;
  const maxHoldUntilMs = maxHoldMs === null ? null : ctx.nowMs + maxHoldMs;
  const expiresAtMs =
    maxHoldUntilMs === null ? ctx.nowMs + ttlMs : Math.min(ctx.nowMs + ttlMs, maxHoldUntilMs);
  assert(expiresAtMs > ctx.nowMs, 'lease: grant already expired');
  const grant: Grant = {
    kind: 'grant',
    lease: rec,
    holder,
    fencingToken,
    grantedAtMs: ctx.nowMs,
    ttlMsRequested: ttlMs,
    ttlMs: expiresAtMs - ctx.nowMs,
    renewedAtMs: ctx.nowMs,
    maxHoldUntilMs,
    lockDelayMs,
    dueMs: 0,
    seq: 0,
    heapIndex: -1,
  };
  rec.grant = grant;
  core.grantsLive++;
  core.scheduleWake(grant, expiresAtMs);
  ctx.changed.add(leaseKey(rec.name));
  return grant;
}

/** Extends a live grant by its requested ttl from now, capped at maxHoldUntilMs (SPEC §3 maxHoldMs). */
function extend(core: Core, ctx: ApplyContext, g: Grant): void {
  const wanted = ctx.nowMs + g.ttlMsRequested;
  const expiresAtMs = g.maxHoldUntilMs === null ? wanted : Math.min(wanted, g.maxHoldUntilMs);
  assert(expiresAtMs > ctx.nowMs, 'lease: extending an expired grant');
  g.ttlMs = expiresAtMs - ctx.nowMs;
  g.renewedAtMs = ctx.nowMs;
  core.scheduleWake(g, expiresAtMs);
}

function endGrant(
  core: Core,
  ctx: ApplyContext,
  g: Grant,
  reason: GrantEndReason,
  endedAtMs: number,
): void {
  const rec = g.lease;
  assert(rec.grant === g, 'lease: ending a grant that is not current');
  core.wake.remove(g);
  rec.grant = null;
  core.grantsLive--;
  core.history.add(rec.name, {
    holder: g.holder,
    fencingToken: g.fencingToken,
    grantedAtMs: g.grantedAtMs,
    endedAtMs,
    reason,
  });
  ctx.changed.add(leaseKey(rec.name));
}

function clearLockDelay(core: Core, rec: LeaseRecord): void {
  if (rec.lockDelayQueue === 'wake') core.wake.remove(rec);
  else if (rec.lockDelayQueue === 'sweep') core.sweep.remove(rec);
  rec.lockDelayQueue = 'none';
  rec.lockDelayUntilMs = 0;
}

/** Records the waiter's fate and rewrites its acquire's idempotency record to the final answer. */
function finishWaiter(
  core: Core,
  ctx: ApplyContext,
  w: Waiter,
  outcome: WaiterOutcome,
  finalResult: CommandResult,
): void {
  const rec = w.lease;
  assert(
    rec.waiters !== null && rec.waiters.get(w.waiterId) === w,
    'lease: finishing an unknown waiter',
  );
  rec.waiters.delete(w.waiterId);
  if (rec.waiters.size === 0) {
    rec.waiters = null;
    // Nobody waits for the lock-delay any more: its end is no reason to wake the leader.
    if (rec.lockDelayQueue === 'wake') {
      core.wake.remove(rec);
      rec.lockDelayQueue = 'sweep';
      core.scheduleSweep(rec, rec.lockDelayUntilMs);
    }
  }
  core.wake.remove(w);
  core.pendingWaiters.delete(w.waiterId);
  core.waiterOutcomes.set(w.waiterId, { name: rec.name, outcome }, ctx.nowMs);
  ctx.changed.add(leaseKey(rec.name));
  if (w.idempotencyKey === null) return;
  const idem = core.idempotency.get(w.idempotencyKey, ctx.nowMs);
  if (idem === undefined || !idem.value.result.ok) return;
  const v = idem.value.result.value as LeaseAcquireValue;
  if (v.kind === 'queued' && v.waiterId === w.waiterId) idem.value.result = finalResult;
}

function heldError(
  rec: LeaseRecord,
  nowMs: number,
  extra?: Record<string, unknown>,
): CommandResult<never> {
  if (rec.grant !== null)
    return fail('held', `lease ${rec.name} is held by another holder`, {
      holder: rec.grant.holder,
      ...extra,
    });
  return fail('held', `lease ${rec.name} is in lock-delay`, {
    holder: null,
    lockDelayRemainingMs: Math.max(0, rec.lockDelayUntilMs - nowMs),
    ...extra,
  });
}

/** not_holder, or lease_expired when the history knows this very grant (holder, token) expired (SPEC §3). */
function notHolder(
  core: Core,
  name: string,
  holder: string,
  fencingToken: FencingToken,
  rec: LeaseRecord | undefined,
): CommandResult<never> {
  const ended = core.history.find(name, holder, fencingToken);
  if (ended !== undefined && ended.reason === 'expired')
    return fail('lease_expired', `lease ${name} grant ${fencingToken} of ${holder} expired`, {
      endedAtMs: ended.endedAtMs,
    });
  return fail('not_holder', `${holder} does not hold lease ${name} with token ${fencingToken}`, {
    holder: rec?.grant?.holder ?? null,
  });
}

function enqueue(
  core: Core,
  ctx: ApplyContext,
  rec: LeaseRecord,
  cmd: Acquire,
  idempotencyKey: string | null,
): CommandResult<LeaseAcquireValue> {
  const deadlineMs = ctx.nowMs + cmd.waitMs;
  if (rec.waiters !== null) {
    // One waiter per holder and name: a repeat extends the deadline (never shortens it).
    for (const w of rec.waiters.values()) {
      if (w.holder !== cmd.holder) continue;
      if (deadlineMs > w.dueMs) core.scheduleWake(w, deadlineMs);
      return {
        ok: true,
        value: {
          kind: 'queued',
          name: rec.name,
          holder: w.holder,
          waiterId: w.waiterId,
          deadlineMs: w.dueMs,
        },
      };
    }
    if (rec.waiters.size >= core.limits.waitersPerLeaseMax)
      return fail(
        'resource_exhausted',
        `waitersPerLeaseMax (${core.limits.waitersPerLeaseMax}) reached for lease ${rec.name}`,
        { limit: 'waitersPerLeaseMax' },
      );
  }
  if (core.pendingWaiters.size >= core.limits.waitersMax)
    return fail('resource_exhausted', `waitersMax (${core.limits.waitersMax}) reached`, {
      limit: 'waitersMax',
    });
  const w: Waiter = {
    kind: 'waiter',
    lease: rec,
    waiterId: ctx.index,
    holder: cmd.holder,
    ttlMs: cmd.ttlMs,
    lockDelayMs: cmd.lockDelayMs,
    maxHoldMs: cmd.maxHoldMs,
    idempotencyKey,
    dueMs: 0,
    seq: 0,
    heapIndex: -1,
  };
  assert(!core.pendingWaiters.has(w.waiterId), 'lease: waiterId reused');
  rec.waiters ??= new Map();
  rec.waiters.set(w.waiterId, w);
  core.pendingWaiters.set(w.waiterId, w);
  core.scheduleWake(w, deadlineMs);
  // A waited-on lock-delay must wake the leader when it ends.
  if (rec.lockDelayQueue === 'sweep') {
    core.sweep.remove(rec);
    rec.lockDelayQueue = 'wake';
    core.scheduleWake(rec, rec.lockDelayUntilMs);
  }
  ctx.changed.add(leaseKey(rec.name));
  return {
    ok: true,
    value: { kind: 'queued', name: rec.name, holder: w.holder, waiterId: w.waiterId, deadlineMs },
  };
}

/** SPEC §3 acquire: grant, renew-by-acquire (same token), queue (waitMs > 0), or `held`. */
export function leaseAcquire(
  core: Core,
  ctx: ApplyContext,
  cmd: Acquire,
  idempotencyKey: string | null,
): CommandResult<LeaseAcquireValue> {
  let rec = core.leases.get(cmd.name);
  if (rec !== undefined && rec.grant !== null && rec.grant.holder === cmd.holder) {
    // Acquire by the holder renews with the new ttl; lockDelayMs and maxHoldMs of the grant stay.
    rec.grant.ttlMsRequested = cmd.ttlMs;
    extend(core, ctx, rec.grant);
    ctx.changed.add(leaseKey(rec.name));
    return { ok: true, value: { kind: 'granted', ...grantValue(rec.grant) } };
  }
  if (rec !== undefined && (rec.grant !== null || rec.lockDelayUntilMs > ctx.nowMs)) {
    return cmd.waitMs > 0
      ? enqueue(core, ctx, rec, cmd, idempotencyKey)
      : heldError(rec, ctx.nowMs);
  }
  if (rec === undefined) {
    if (core.leases.size >= core.limits.leasesMax)
      return fail('resource_exhausted', `leasesMax (${core.limits.leasesMax}) reached`, {
        limit: 'leasesMax',
      });
    rec = newRecord(cmd.name);
    core.leases.set(cmd.name, rec);
  }
  assert(rec.waiters === null, 'lease: free name with waiters (not settled)');
  const g = grantTo(core, ctx, rec, cmd.holder, cmd.ttlMs, cmd.lockDelayMs, cmd.maxHoldMs);
  return { ok: true, value: { kind: 'granted', ...grantValue(g) } };
}

/** SPEC §3 renew of the live grant (holder, fencingToken); capped by maxHoldMs. */
export function leaseRenew(core: Core, ctx: ApplyContext, cmd: Renew): CommandResult<LeaseGrant> {
  const rec = core.leases.get(cmd.name);
  const g = rec?.grant;
  if (g == null || g.holder !== cmd.holder || g.fencingToken !== cmd.fencingToken)
    return notHolder(core, cmd.name, cmd.holder, cmd.fencingToken, rec);
  extend(core, ctx, g);
  ctx.changed.add(leaseKey(cmd.name));
  return { ok: true, value: grantValue(g) };
}

/** SPEC §3 release of the live grant; no lock-delay; the next waiter is granted in the same entry. */
export function leaseRelease(
  core: Core,
  ctx: ApplyContext,
  cmd: Release,
): CommandResult<LeaseReleaseValue> {
  const rec = core.leases.get(cmd.name);
  const g = rec?.grant;
  if (
    rec === undefined ||
    g == null ||
    g.holder !== cmd.holder ||
    g.fencingToken !== cmd.fencingToken
  )
    return notHolder(core, cmd.name, cmd.holder, cmd.fencingToken, rec);
  endGrant(core, ctx, g, 'released', ctx.nowMs);
  settleLease(core, ctx, rec);
  return { ok: true, value: { name: cmd.name, released: true } };
}

/** Withdraws a queued waiter (BC-27). Another holder's waiter → not_holder; gone → cancelled: false. */
export function leaseCancelWait(
  core: Core,
  ctx: ApplyContext,
  cmd: CancelWait,
): CommandResult<CancelWaitValue> {
  const w = core.pendingWaiters.get(cmd.waiterId);
  if (w === undefined || w.lease.name !== cmd.name)
    return { ok: true, value: { name: cmd.name, waiterId: cmd.waiterId, cancelled: false } };
  if (w.holder !== cmd.holder)
    return fail(
      'not_holder',
      `waiter ${cmd.waiterId} on lease ${cmd.name} belongs to another holder`,
      { holder: null },
    );
  const rec = w.lease;
  finishWaiter(core, ctx, w, { kind: 'cancelled' }, heldError(rec, ctx.nowMs, { cancelled: true }));
  settleLease(core, ctx, rec);
  return { ok: true, value: { name: cmd.name, waiterId: cmd.waiterId, cancelled: true } };
}

/** Expiry phase: the grant's time is up (dueMs ≤ now). Frees the name, subject to lock-delay. */
export function expireGrant(core: Core, ctx: ApplyContext, g: Grant): void {
  const rec = g.lease;
  endGrant(core, ctx, g, 'expired', g.dueMs);
  const lockDelayUntilMs = g.dueMs + g.lockDelayMs;
  if (lockDelayUntilMs > ctx.nowMs) {
    rec.lockDelayUntilMs = lockDelayUntilMs;
    if (rec.waiters !== null) {
      rec.lockDelayQueue = 'wake';
      core.scheduleWake(rec, lockDelayUntilMs);
    } else {
      rec.lockDelayQueue = 'sweep';
      core.scheduleSweep(rec, lockDelayUntilMs);
    }
  }
}

/**
 * Expiry phase: a waiter's deadline passed; it is never granted (BC-01). Its answer becomes `held`,
 * naming the holder at the deadline (null: the name was in lock-delay).
 */
export function timeoutWaiter(core: Core, ctx: ApplyContext, w: Waiter): void {
  finishWaiter(
    core,
    ctx,
    w,
    { kind: 'timed_out', holder: w.lease.grant?.holder ?? null },
    heldError(w.lease, ctx.nowMs, { timedOut: true }),
  );
}

/** Expiry phase: a lock-delay ended (the record was popped from its queue). */
export function endLockDelay(_core: Core, ctx: ApplyContext, rec: LeaseRecord): void {
  assert(
    rec.lockDelayUntilMs <= ctx.nowMs && rec.heapIndex === -1,
    'lease: lock-delay ended early',
  );
  rec.lockDelayQueue = 'none';
  rec.lockDelayUntilMs = 0;
}

/**
 * Brings a record to rest as of cluster time `atMs` (≤ ctx time; default ctx time): a name free
 * and past its lock-delay at `atMs` goes to the head waiter (all waiters due by `atMs` were removed
 * before, so the head was live then — BC-01), with a grant that starts at ctx time; an empty
 * record is deleted.
 */
export function settleLease(
  core: Core,
  ctx: ApplyContext,
  rec: LeaseRecord,
  atMs: number = ctx.nowMs,
): void {
  assert(atMs <= ctx.nowMs, 'lease: settling in the future');
  if (rec.grant === null && rec.lockDelayUntilMs !== 0 && rec.lockDelayUntilMs <= atMs)
    clearLockDelay(core, rec);
  if (rec.grant === null && rec.lockDelayUntilMs === 0 && rec.waiters !== null) {
    const head = rec.waiters.values().next().value!;
    assert(head.dueMs > atMs, 'lease: granting a waiter past its deadline');
    // Grant first (needs the name free), then record the outcome with the fresh grant.
    const g = grantTo(core, ctx, rec, head.holder, head.ttlMs, head.lockDelayMs, head.maxHoldMs);
    const value = grantValue(g);
    finishWaiter(
      core,
      ctx,
      head,
      { kind: 'granted', ...value },
      { ok: true, value: { kind: 'granted', ...value } },
    );
  }
  if (rec.grant === null && rec.waiters === null && rec.lockDelayUntilMs === 0)
    core.leases.delete(rec.name);
}

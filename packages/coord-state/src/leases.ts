/**
 * Lease (lock) commands and lease expiry (docs/api.md leases; docs/concepts.md exclusivity,
 * fencing and no early expiry; docs/primitives.md shared locks, sessions and revoke). Handlers
 * run inside `apply` after every due entry was expired, so "live at the entry's cluster time"
 * simply means "present".
 *
 * A name holds either one exclusive grant (`rec.grant`) or any number of shared grants
 * (`rec.shared`), never both. Waiters are FIFO: an exclusive waiter at the head blocks every later
 * acquire; consecutive shared waiters at the head are granted together.
 */
import assert from 'node:assert';
import type {
  AnyLeaseGrant,
  ChangeEvent,
  ChangeType,
  CommandResult,
  FencingToken,
  GrantEndReason,
  LeaseAcquireValue,
  LeaseCommand,
  SessionLeaseGrant,
  WaiterOutcome,
} from './api.js';
import type { Core } from './core.js';
import { exhausted, fail } from './fail.js';
import { nextFencingToken } from './fencing.js';
import { leaseKey, type ApplyContext, type Grant, type LeaseRecord, type Waiter } from './model.js';
import { overCap, ownerFor, refuseOther } from './ownership.js';
import type { CancelWaitValue, LeaseReleaseValue, RevokeValue } from './results.js';
import { isSession, keepSessionAlive, sessionForGrant } from './session-members.js';
import { endEventType } from './events.js';

type Acquire = Extract<LeaseCommand, { type: 'lease.acquire' }>;
type Renew = Extract<LeaseCommand, { type: 'lease.renew' }>;
type Release = Extract<LeaseCommand, { type: 'lease.release' }>;
type CancelWait = Extract<LeaseCommand, { type: 'lease.cancelWait' }>;
type Revoke = Extract<LeaseCommand, { type: 'lease.revoke' }>;

/** What a new grant is made of (from an acquire or a waiter). */
interface GrantSpec {
  readonly holder: string;
  readonly owner: string | null;
  readonly ttlMs: number | null;
  readonly shared: boolean;
  readonly session: Grant['session'];
  readonly lockDelayMs: number;
  readonly maxHoldMs: number | null;
}

/** Cluster time at which `g` stops being live: its own expiry, or its session's. */
export function grantExpiresAtMs(g: Grant): number {
  return g.session === null ? g.dueMs : g.session.dueMs;
}

/** The answer for a grant (`ttlMs` null and `session` set when session-bound). Hot path: no spreads. */
export function grantValue(g: Grant): AnyLeaseGrant {
  const v: { -readonly [k in keyof SessionLeaseGrant]?: unknown } = {
    name: g.lease.name,
    holder: g.holder,
    fencingToken: g.fencingToken,
    ttlMs: g.session === null ? g.ttlMs : null,
  };
  if (g.session !== null) v.session = g.session.sessionId;
  if (g.shared) v.mode = 'shared';
  return v as AnyLeaseGrant;
}

function newRecord(name: string): LeaseRecord {
  return {
    kind: 'lease',
    name,
    grant: null,
    shared: null,
    lockDelayUntilMs: 0,
    lockDelayQueue: 'none',
    waiters: null,
    lastFencingToken: 0,
    dueMs: 0,
    seq: 0,
    heapIndex: -1,
  };
}

/** Live grants of `rec`, oldest first (exclusive, or the shared ones). */
export function liveGrants(rec: LeaseRecord): Grant[] {
  if (rec.grant !== null) return [rec.grant];
  return rec.shared === null ? [] : [...rec.shared.values()];
}

/** The live grant of `holder` on `rec`, if any. */
function grantOf(rec: LeaseRecord | undefined, holder: string): Grant | undefined {
  if (rec === undefined) return undefined;
  if (rec.grant !== null) return rec.grant.holder === holder ? rec.grant : undefined;
  return rec.shared?.get(holder);
}

/** Builds a lease change event for `g` (hot path: one object, no spreads). */
function leaseEvent(g: Grant, type: ChangeType, endReason: GrantEndReason | null): ChangeEvent {
  const e: { -readonly [k in keyof ChangeEvent]?: ChangeEvent[k] } = {
    kind: 'lease',
    name: g.lease.name,
    type,
    holder: g.holder,
    fencingToken: g.fencingToken,
    mode: g.shared ? 'shared' : 'exclusive',
  };
  if (endReason === null) e.ttlMs = g.session === null ? g.ttlMs : null;
  else e.endReason = endReason;
  if (g.session !== null) e.session = g.session.sessionId;
  return e as ChangeEvent;
}

function grantEvent(ctx: ApplyContext, g: Grant, type: 'granted' | 'renewed'): void {
  ctx.events.push(leaseEvent(g, type, null));
}

/** Grants `rec` to `spec.holder` at ctx time with a new fencing token (the mode must be free). */
function grantTo(core: Core, ctx: ApplyContext, rec: LeaseRecord, spec: GrantSpec): Grant {
  assert(
    rec.grant === null && rec.lockDelayUntilMs === 0 && (spec.shared || rec.shared === null),
    'lease: grant of a name that is not free',
  );
  const fencingToken = nextFencingToken(ctx.index, rec.lastFencingToken);
  rec.lastFencingToken = fencingToken;
  const maxHoldUntilMs = spec.maxHoldMs === null ? null : ctx.nowMs + spec.maxHoldMs;
  const ttlMs = spec.ttlMs ?? 0;
  const expiresAtMs =
    maxHoldUntilMs === null ? ctx.nowMs + ttlMs : Math.min(ctx.nowMs + ttlMs, maxHoldUntilMs);
  assert(spec.session !== null || expiresAtMs > ctx.nowMs, 'lease: grant already expired');
  const grant: Grant = {
    kind: 'grant',
    owner: spec.owner,
    lease: rec,
    shared: spec.shared,
    session: spec.session,
    holder: spec.holder,
    fencingToken,
    grantedAtMs: ctx.nowMs,
    ttlMsRequested: ttlMs,
    ttlMs: spec.session === null ? expiresAtMs - ctx.nowMs : 0,
    renewedAtMs: ctx.nowMs,
    maxHoldUntilMs,
    lockDelayMs: spec.lockDelayMs,
    dueMs: 0,
    seq: 0,
    heapIndex: -1,
  };
  if (spec.shared) (rec.shared ??= new Map()).set(spec.holder, grant);
  else rec.grant = grant;
  core.grantsLive++;
  core.owners.add(grant.owner, 'leases', 1);
  if (spec.session === null) core.scheduleWake(grant, expiresAtMs);
  else spec.session.members.add(grant);
  ctx.changed.add(leaseKey(rec.name));
  grantEvent(ctx, grant, 'granted');
  return grant;
}

/**
 * Refreshes a live grant: a ttl grant by its requested ttl from now (capped at maxHoldUntilMs,
 * docs/api.md maxHoldMs); a session-bound grant keeps its session alive instead.
 */
function extend(core: Core, ctx: ApplyContext, g: Grant): void {
  if (g.session !== null) {
    keepSessionAlive(core, ctx, g.session);
  } else {
    const wanted = ctx.nowMs + g.ttlMsRequested;
    const expiresAtMs = g.maxHoldUntilMs === null ? wanted : Math.min(wanted, g.maxHoldUntilMs);
    assert(expiresAtMs > ctx.nowMs, 'lease: extending an expired grant');
    g.ttlMs = expiresAtMs - ctx.nowMs;
    g.renewedAtMs = ctx.nowMs;
    core.scheduleWake(g, expiresAtMs);
  }
  ctx.changed.add(leaseKey(g.lease.name));
  grantEvent(ctx, g, 'renewed');
}

/** Ends a live grant: unlinks it, records history and the change event. Does not settle. */
function endGrant(
  core: Core,
  ctx: ApplyContext,
  g: Grant,
  reason: GrantEndReason,
  endedAtMs: number,
): void {
  const rec = g.lease;
  assert(endedAtMs >= g.grantedAtMs, 'lease: a grant ending before it began');
  if (g.shared) {
    assert(rec.shared?.get(g.holder) === g, 'lease: ending a shared grant that is not live');
    rec.shared.delete(g.holder);
    if (rec.shared.size === 0) rec.shared = null;
  } else {
    assert(rec.grant === g, 'lease: ending a grant that is not current');
    rec.grant = null;
  }
  core.wake.remove(g);
  g.session?.members.delete(g);
  core.grantsLive--;
  core.owners.add(g.owner, 'leases', -1);
  core.history.add(leaseKey(rec.name), {
    holder: g.holder,
    fencingToken: g.fencingToken,
    grantedAtMs: g.grantedAtMs,
    endedAtMs,
    reason,
    mode: g.shared ? 'shared' : 'exclusive',
    session: g.session?.sessionId ?? null,
  });
  ctx.changed.add(leaseKey(rec.name));
  ctx.events.push(leaseEvent(g, endEventType(reason), reason));
}

/**
 * Starts (or lengthens) the name's lock-delay until `untilMs` (Chubby): nobody is granted the
 * name before it ends. Queued to wake the leader only when somebody waits for it.
 */
function startLockDelay(core: Core, ctx: ApplyContext, rec: LeaseRecord, untilMs: number): void {
  if (untilMs <= ctx.nowMs || untilMs <= rec.lockDelayUntilMs) return;
  clearLockDelay(core, rec);
  rec.lockDelayUntilMs = untilMs;
  if (rec.waiters !== null) {
    rec.lockDelayQueue = 'wake';
    core.scheduleWake(rec, untilMs);
  } else {
    rec.lockDelayQueue = 'sweep';
    core.scheduleSweep(rec, untilMs);
  }
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
  w.session?.members.delete(w);
  core.pendingWaiters.delete(w.waiterId);
  core.owners.add(w.owner, 'waiters', -1);
  // Remembered from the entry's time, not `ctx.nowMs`: the expiry phase finishes waiters as of
  // their due time, which may lie more than the window before the entry that decides them.
  core.waiterOutcomes.set(w.waiterId, { name: rec.name, outcome }, core.lastTimeMs);
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
  if (rec.lockDelayUntilMs > nowMs || rec.shared === null)
    return fail('held', `lease ${rec.name} is in lock-delay`, {
      holder: null,
      lockDelayRemainingMs: Math.max(0, rec.lockDelayUntilMs - nowMs),
      ...extra,
    });
  // Shared holders, and maybe an exclusive waiter queued ahead (FIFO: no writer starvation).
  const writerQueued = rec.waiters !== null && [...rec.waiters.values()].some((w) => !w.shared);
  return fail(
    'held',
    writerQueued
      ? `lease ${rec.name} is held in shared mode and an exclusive acquire is queued ahead`
      : `lease ${rec.name} is held in shared mode`,
    {
      holder: rec.shared.values().next().value!.holder,
      mode: 'shared',
      ...(writerQueued ? { exclusiveQueued: true } : {}),
      ...extra,
    },
  );
}

/** not_holder, or lease_expired when the history knows this very grant ended without its holder. */
function notHolder(
  core: Core,
  name: string,
  holder: string,
  fencingToken: FencingToken,
  rec: LeaseRecord | undefined,
): CommandResult<never> {
  const ended = core.history.find(leaseKey(name), holder, fencingToken);
  if (ended !== undefined && ended.reason !== 'released')
    return fail('lease_expired', `lease ${name} grant ${fencingToken} of ${holder} ended`, {
      endedAtMs: ended.endedAtMs,
      endReason: ended.reason,
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
  spec: GrantSpec,
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
      return exhausted(
        'waitersPerLeaseMax',
        core.limits.waitersPerLeaseMax,
        ` for lease ${rec.name}`,
      );
  }
  if (core.waitersCount >= core.limits.waitersMax)
    return exhausted('waitersMax', core.limits.waitersMax);
  const capped = overCap(ctx.principal, core.owners, 'waiters');
  if (capped !== null) return capped;
  const w: Waiter = {
    kind: 'waiter',
    owner: spec.owner,
    lease: rec,
    waiterId: ctx.index,
    holder: cmd.holder,
    ttlMs: spec.ttlMs,
    shared: spec.shared,
    session: spec.session,
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
  core.owners.add(w.owner, 'waiters', 1);
  core.scheduleWake(w, deadlineMs);
  w.session?.members.add(w);
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

/** True when a new grant in this mode must wait: exclusive needs the name idle, shared no exclusive and no queue. */
function blocked(rec: LeaseRecord, shared: boolean, nowMs: number): boolean {
  if (rec.grant !== null || rec.lockDelayUntilMs > nowMs) return true;
  return shared ? rec.waiters !== null : rec.shared !== null;
}

/**
 * `grant_mismatch` when an acquire by the holder of `g` asks for another mode or another binding
 * (another session, a session for a ttl grant, a ttl for a session-bound grant), else null
 * (docs/primitives.md, acquiring again). Details name what the grant is, so the caller can
 * release it first: `{holder, fencingToken, mode, session}` (session null for a ttl grant).
 */
function grantMismatch(g: Grant, cmd: Acquire): CommandResult<never> | null {
  const mode = g.shared ? 'shared' : 'exclusive';
  const session = g.session?.sessionId ?? null;
  if ((cmd.mode ?? 'exclusive') === mode && (cmd.session ?? null) === session) return null;
  const binding = session === null ? 'a ttl' : `session ${session}`;
  return fail(
    'grant_mismatch',
    `${g.holder} holds lease ${g.lease.name} in ${mode} mode bound to ${binding}: release it first`,
    { holder: g.holder, fencingToken: g.fencingToken, mode, session },
  );
}

/**
 * Acquire (docs/api.md): grant, renew-by-acquire when the holder already holds the name in the
 * same mode and binding (same token; a ttl grant takes the new ttlMs; the grant keeps its
 * lockDelayMs and maxHoldMs), `grant_mismatch` when it holds it otherwise, queue (waitMs > 0), or
 * `held`. `session`: not_found when unknown, resource_exhausted when the session is full.
 */
export function leaseAcquire(
  core: Core,
  ctx: ApplyContext,
  cmd: Acquire,
  idempotencyKey: string | null,
): CommandResult<LeaseAcquireValue> {
  let rec = core.leases.get(cmd.name);
  const mine = grantOf(rec, cmd.holder);
  if (mine !== undefined) {
    const refused = refuseOther(ctx, mine.owner, `lease ${cmd.name} of ${cmd.holder}`);
    if (refused !== null) return refused;
    const mismatch = grantMismatch(mine, cmd);
    if (mismatch !== null) return mismatch;
    if (mine.session === null && cmd.ttlMs !== null) mine.ttlMsRequested = cmd.ttlMs;
    extend(core, ctx, mine);
    return { ok: true, value: { kind: 'granted', ...grantValue(mine) } };
  }
  const sessionId = cmd.session ?? null;
  let session: Grant['session'] = null;
  if (sessionId !== null) {
    const s = sessionForGrant(core, sessionId);
    if (!isSession(s)) return s;
    const refused = refuseOther(ctx, s.owner, `session ${sessionId}`);
    if (refused !== null) return refused;
    session = s;
  }
  const spec: GrantSpec = {
    holder: cmd.holder,
    owner: ownerFor(ctx),
    ttlMs: cmd.ttlMs,
    shared: cmd.mode === 'shared',
    session,
    lockDelayMs: cmd.lockDelayMs,
    maxHoldMs: cmd.maxHoldMs,
  };
  if (rec !== undefined && blocked(rec, spec.shared, ctx.nowMs)) {
    return cmd.waitMs > 0
      ? enqueue(core, ctx, rec, cmd, spec, idempotencyKey)
      : heldError(rec, ctx.nowMs);
  }
  const capped = overCap(ctx.principal, core.owners, 'leases');
  if (capped !== null) return capped;
  if (rec === undefined) {
    if (core.leases.size >= core.limits.leasesMax)
      return exhausted('leasesMax', core.limits.leasesMax);
    rec = newRecord(cmd.name);
    core.leases.set(cmd.name, rec);
  }
  assert(rec.waiters === null, 'lease: free name with waiters (not settled)');
  const g = grantTo(core, ctx, rec, spec);
  return { ok: true, value: { kind: 'granted', ...grantValue(g) } };
}

/** The live grant named by (holder, fencingToken), if any. */
function namedGrant(
  rec: LeaseRecord | undefined,
  holder: string,
  fencingToken: FencingToken,
): Grant | undefined {
  const g = grantOf(rec, holder);
  return g !== undefined && g.fencingToken === fencingToken ? g : undefined;
}

/** Renew of the live grant (holder, fencingToken); capped by maxHoldMs; session-bound: keepalive. */
export function leaseRenew(
  core: Core,
  ctx: ApplyContext,
  cmd: Renew,
): CommandResult<AnyLeaseGrant> {
  const rec = core.leases.get(cmd.name);
  const g = namedGrant(rec, cmd.holder, cmd.fencingToken);
  if (g === undefined) return notHolder(core, cmd.name, cmd.holder, cmd.fencingToken, rec);
  const refused = refuseOther(ctx, g.owner, `lease ${cmd.name} grant ${cmd.fencingToken}`);
  if (refused !== null) return refused;
  extend(core, ctx, g);
  return { ok: true, value: grantValue(g) };
}

/** Release of the live grant; no lock-delay; waiters are granted in the same entry. */
export function leaseRelease(
  core: Core,
  ctx: ApplyContext,
  cmd: Release,
): CommandResult<LeaseReleaseValue> {
  const rec = core.leases.get(cmd.name);
  const g = namedGrant(rec, cmd.holder, cmd.fencingToken);
  if (rec === undefined || g === undefined)
    return notHolder(core, cmd.name, cmd.holder, cmd.fencingToken, rec);
  const refused = refuseOther(ctx, g.owner, `lease ${cmd.name} grant ${cmd.fencingToken}`);
  if (refused !== null) return refused;
  endGrant(core, ctx, g, 'released', ctx.nowMs);
  settleLease(core, ctx, rec);
  return { ok: true, value: { name: cmd.name, released: true } };
}

/**
 * Operator revoke (docs/primitives.md): ends every live grant of the name (or the one with
 * `fencingToken`; not_holder when that token is not live) as if it had expired now: history
 * reason `revoked`, its lock-delay starts, waiters are granted once it is over.
 */
export function leaseRevoke(
  core: Core,
  ctx: ApplyContext,
  cmd: Revoke,
): CommandResult<RevokeValue> {
  const rec = core.leases.get(cmd.name);
  const live = rec === undefined ? [] : liveGrants(rec);
  const targets =
    cmd.fencingToken === null ? live : live.filter((g) => g.fencingToken === cmd.fencingToken);
  if (cmd.fencingToken !== null && targets.length === 0)
    return fail(
      'not_holder',
      `lease ${cmd.name} has no live grant with token ${cmd.fencingToken}`,
      {
        holder: rec?.grant?.holder ?? null,
      },
    );
  for (const g of targets) {
    endGrant(core, ctx, g, 'revoked', ctx.nowMs);
    startLockDelay(core, ctx, g.lease, ctx.nowMs + g.lockDelayMs);
  }
  if (rec !== undefined) settleLease(core, ctx, rec);
  return { ok: true, value: { name: cmd.name, revoked: targets.map((g) => g.fencingToken) } };
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
  const refused = refuseOther(ctx, w.owner, `waiter ${cmd.waiterId} on lease ${cmd.name}`);
  if (refused !== null) return refused;
  const rec = w.lease;
  finishWaiter(
    core,
    ctx,
    w,
    { kind: 'cancelled', holder: rec.grant?.holder ?? null },
    heldError(rec, ctx.nowMs, { cancelled: true }),
  );
  settleLease(core, ctx, rec);
  return { ok: true, value: { name: cmd.name, waiterId: cmd.waiterId, cancelled: true } };
}

/** Expiry phase: the grant's time is up (dueMs ≤ now). Frees it, subject to lock-delay. */
export function expireGrant(core: Core, ctx: ApplyContext, g: Grant): void {
  const reason = g.maxHoldUntilMs !== null && g.dueMs >= g.maxHoldUntilMs ? 'max_hold' : 'expired';
  endGrant(core, ctx, g, reason, g.dueMs);
  startLockDelay(core, ctx, g.lease, g.dueMs + g.lockDelayMs);
}

/**
 * Its session ended (docs/primitives.md): the grant ends with reason `session_ended`. When the
 * session expired (`expiredAtMs` non-null) the lease's lock-delay starts from that time; an
 * explicit end (DELETE) is like a release. Does not settle (the caller does, in name order).
 */
export function endGrantBySession(
  core: Core,
  ctx: ApplyContext,
  g: Grant,
  expiredAtMs: number | null,
): void {
  // A grant made by this entry to a waiter live when the name fell free (settled as of then, granted
  // at the entry's time) may lose its session at a later due time of the same entry: it ends when
  // it began, never before.
  endGrant(core, ctx, g, 'session_ended', Math.max(expiredAtMs ?? ctx.nowMs, g.grantedAtMs));
  if (expiredAtMs !== null) startLockDelay(core, ctx, g.lease, expiredAtMs + g.lockDelayMs);
}

/** Its session ended: the waiter is withdrawn (never granted); its answer becomes `held`. */
export function withdrawWaiterBySession(core: Core, ctx: ApplyContext, w: Waiter): void {
  finishWaiter(
    core,
    ctx,
    w,
    { kind: 'cancelled', holder: w.lease.grant?.holder ?? null },
    heldError(w.lease, ctx.nowMs, { cancelled: true, sessionEnded: true }),
  );
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

/** Grants the head waiter of a record that is not blocked for it; returns false when blocked. */
function grantHead(
  core: Core,
  ctx: ApplyContext,
  rec: LeaseRecord,
  head: Waiter,
  atMs: number,
): boolean {
  if (!head.shared && rec.shared !== null) return false;
  assert(head.dueMs > atMs, 'lease: granting a waiter past its deadline');
  // Grant first (needs the name free), then record the outcome with the fresh grant.
  const g = grantTo(core, ctx, rec, {
    holder: head.holder,
    owner: head.owner,
    ttlMs: head.ttlMs,
    shared: head.shared,
    session: head.session,
    lockDelayMs: head.lockDelayMs,
    maxHoldMs: head.maxHoldMs,
  });
  const value = grantValue(g);
  finishWaiter(
    core,
    ctx,
    head,
    { kind: 'granted', ...value },
    { ok: true, value: { kind: 'granted', ...value } },
  );
  return true;
}

/**
 * Brings a record to rest as of cluster time `atMs` (≤ ctx time; default ctx time): once no
 * exclusive grant and no lock-delay stand in the way at `atMs`, the head waiter is granted — an
 * exclusive one when no shared grant is live, or every consecutive shared waiter at the head (all
 * waiters due by `atMs` were removed before, so the head was live then — BC-01), with grants that
 * start at ctx time. An empty
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
  while (rec.grant === null && rec.lockDelayUntilMs === 0 && rec.waiters !== null) {
    const head = rec.waiters.values().next().value!;
    if (!grantHead(core, ctx, rec, head, atMs) || !head.shared) break;
  }
  if (
    rec.grant === null &&
    rec.shared === null &&
    rec.waiters === null &&
    rec.lockDelayUntilMs === 0
  )
    core.leases.delete(rec.name);
}

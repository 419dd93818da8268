/**
 * Semaphore commands and permit expiry (docs/primitives.md, semaphores): at most `limit` live
 * permits per name, a holder holds at most one (a second acquire renews it), FIFO waiters with a
 * deadline in cluster time, and a new fencing token per permit from the same scheme as leases
 * (fencing.ts), so every permit's token is higher than every earlier token of that semaphore.
 */
import assert from 'node:assert';
import type { CommandResult, FencingToken, SemaphoreCommand, WaiterOutcome } from './api.js';
import type { Core } from './core.js';
import { endEventType } from './events.js';
import { exhausted, fail } from './fail.js';
import { nextFencingToken } from './fencing.js';
import type { GrantEndReason } from './history.js';
import {
  semaphoreKey,
  type ApplyContext,
  type Permit,
  type SemaphoreRecord,
  type SemWaiter,
  type SessionRecord,
} from './model.js';
import type {
  CancelWaitValue,
  RevokeValue,
  SemaphoreAcquireValue,
  SemaphoreGrant,
  SemaphoreReleaseValue,
} from './results.js';
import { overCap, ownerFor, refuseOther } from './ownership.js';
import { isSession, keepSessionAlive, sessionForGrant } from './session-members.js';

type Acquire = Extract<SemaphoreCommand, { type: 'semaphore.acquire' }>;
type Renew = Extract<SemaphoreCommand, { type: 'semaphore.renew' }>;
type Release = Extract<SemaphoreCommand, { type: 'semaphore.release' }>;
type CancelWait = Extract<SemaphoreCommand, { type: 'semaphore.cancelWait' }>;
type Revoke = Extract<SemaphoreCommand, { type: 'semaphore.revoke' }>;

/** Cluster time at which a permit stops being live: its own expiry, or its session's. */
export function permitExpiresAtMs(p: Permit): number {
  return p.session === null ? p.dueMs : p.session.dueMs;
}

/** The answer for a live permit. */
export function permitValue(p: Permit): SemaphoreGrant {
  const base = {
    name: p.semaphore.name,
    holder: p.holder,
    fencingToken: p.fencingToken,
    limit: p.semaphore.limit,
  };
  return p.session === null
    ? { ...base, ttlMs: p.ttlMs }
    : { ...base, ttlMs: null, session: p.session.sessionId };
}

function permitEvent(ctx: ApplyContext, p: Permit, type: 'granted' | 'renewed'): void {
  ctx.events.push({
    kind: 'semaphore',
    name: p.semaphore.name,
    type,
    holder: p.holder,
    fencingToken: p.fencingToken,
    ...(p.session === null ? { ttlMs: p.ttlMs } : { ttlMs: null, session: p.session.sessionId }),
  });
}

function grantPermit(
  core: Core,
  ctx: ApplyContext,
  rec: SemaphoreRecord,
  holder: string,
  ttlMs: number | null,
  session: SessionRecord | null,
  owner: string | null,
): Permit {
  assert(rec.permits.size < rec.limit && !rec.permits.has(holder), 'semaphore: no free permit');
  const fencingToken = nextFencingToken(ctx.index, rec.lastFencingToken);
  rec.lastFencingToken = fencingToken;
  const p: Permit = {
    kind: 'permit',
    owner,
    semaphore: rec,
    holder,
    fencingToken,
    grantedAtMs: ctx.nowMs,
    ttlMs: session === null ? ttlMs : null,
    session,
    dueMs: 0,
    seq: 0,
    heapIndex: -1,
  };
  rec.permits.set(holder, p);
  core.permitsLive++;
  if (session === null) {
    assert(ttlMs !== null && ttlMs > 0, 'semaphore: permit without ttl or session');
    core.scheduleWake(p, ctx.nowMs + ttlMs);
  } else session.members.add(p);
  ctx.changed.add(semaphoreKey(rec.name));
  permitEvent(ctx, p, 'granted');
  return p;
}

/** Refreshes a permit: by its ttl from now, or (session-bound) a keepalive of its session. */
function extendPermit(core: Core, ctx: ApplyContext, p: Permit): void {
  if (p.session !== null) keepSessionAlive(core, ctx, p.session);
  else core.scheduleWake(p, ctx.nowMs + p.ttlMs!);
  ctx.changed.add(semaphoreKey(p.semaphore.name));
  permitEvent(ctx, p, 'renewed');
}

function endPermit(
  core: Core,
  ctx: ApplyContext,
  p: Permit,
  reason: GrantEndReason,
  endedAtMs: number,
): void {
  const rec = p.semaphore;
  assert(rec.permits.get(p.holder) === p, 'semaphore: ending a permit that is not live');
  assert(endedAtMs >= p.grantedAtMs, 'semaphore: a permit ending before it began');
  rec.permits.delete(p.holder);
  core.wake.remove(p);
  p.session?.members.delete(p);
  core.permitsLive--;
  core.history.add(semaphoreKey(rec.name), {
    holder: p.holder,
    fencingToken: p.fencingToken,
    grantedAtMs: p.grantedAtMs,
    endedAtMs,
    reason,
    mode: null,
    session: p.session?.sessionId ?? null,
  });
  ctx.changed.add(semaphoreKey(rec.name));
  ctx.events.push({
    kind: 'semaphore',
    name: rec.name,
    type: endEventType(reason),
    holder: p.holder,
    fencingToken: p.fencingToken,
    endReason: reason,
    ...(p.session === null ? {} : { session: p.session.sessionId }),
  });
}

function heldError(rec: SemaphoreRecord, extra?: Record<string, unknown>): CommandResult<never> {
  return fail('held', `semaphore ${rec.name} has no free permit`, {
    holder: null,
    limit: rec.limit,
    live: rec.permits.size,
    ...extra,
  });
}

function finishWaiter(
  core: Core,
  ctx: ApplyContext,
  w: SemWaiter,
  outcome: WaiterOutcome,
  finalResult: CommandResult,
): void {
  const rec = w.semaphore;
  assert(rec.waiters?.get(w.waiterId) === w, 'semaphore: finishing an unknown waiter');
  rec.waiters.delete(w.waiterId);
  if (rec.waiters.size === 0) rec.waiters = null;
  core.wake.remove(w);
  w.session?.members.delete(w);
  core.pendingSemWaiters.delete(w.waiterId);
  core.owners.add(w.owner, 'waiters', -1);
  // Remembered from the entry's time, not `ctx.nowMs`: the expiry phase finishes waiters as of
  // their due time, which may lie more than the window before the entry that decides them.
  core.waiterOutcomes.set(w.waiterId, { name: rec.name, outcome }, core.lastTimeMs);
  ctx.changed.add(semaphoreKey(rec.name));
  if (w.idempotencyKey === null) return;
  const idem = core.idempotency.get(w.idempotencyKey, ctx.nowMs);
  if (idem === undefined || !idem.value.result.ok) return;
  const v = idem.value.result.value as SemaphoreAcquireValue;
  if (v.kind === 'queued' && v.waiterId === w.waiterId) idem.value.result = finalResult;
}

function enqueue(
  core: Core,
  ctx: ApplyContext,
  rec: SemaphoreRecord,
  cmd: Acquire,
  session: SessionRecord | null,
  idempotencyKey: string | null,
): CommandResult<SemaphoreAcquireValue> {
  const deadlineMs = ctx.nowMs + cmd.waitMs;
  const queued = (w: SemWaiter): CommandResult<SemaphoreAcquireValue> => ({
    ok: true,
    value: {
      kind: 'queued',
      name: rec.name,
      holder: w.holder,
      waiterId: w.waiterId,
      deadlineMs: w.dueMs,
    },
  });
  if (rec.waiters !== null) {
    // One waiter per holder and name (BC-44): a repeat extends the deadline, never a second place.
    for (const w of rec.waiters.values()) {
      if (w.holder !== cmd.holder) continue;
      if (deadlineMs > w.dueMs) core.scheduleWake(w, deadlineMs);
      return queued(w);
    }
    if (rec.waiters.size >= core.limits.waitersPerLeaseMax)
      return exhausted(
        'waitersPerLeaseMax',
        core.limits.waitersPerLeaseMax,
        ` for semaphore ${rec.name}`,
      );
  }
  if (core.waitersCount >= core.limits.waitersMax)
    return exhausted('waitersMax', core.limits.waitersMax);
  const capped = overCap(ctx.principal, core.owners, 'waiters');
  if (capped !== null) return capped;
  const w: SemWaiter = {
    kind: 'semWaiter',
    owner: ownerFor(ctx),
    semaphore: rec,
    waiterId: ctx.index,
    holder: cmd.holder,
    ttlMs: cmd.ttlMs,
    session,
    idempotencyKey,
    dueMs: 0,
    seq: 0,
    heapIndex: -1,
  };
  assert(!core.pendingSemWaiters.has(w.waiterId), 'semaphore: waiterId reused');
  rec.waiters ??= new Map();
  rec.waiters.set(w.waiterId, w);
  core.pendingSemWaiters.set(w.waiterId, w);
  core.owners.add(w.owner, 'waiters', 1);
  core.scheduleWake(w, deadlineMs);
  session?.members.add(w);
  ctx.changed.add(semaphoreKey(rec.name));
  return queued(w);
}

/**
 * `grant_mismatch` when an acquire by the holder of `p` asks for another binding (another session,
 * a session for a ttl permit, a ttl for a session-bound one), else null (docs/primitives.md,
 * acquiring again). Details: `{holder, fencingToken, session}` (session null for a ttl permit).
 */
function permitMismatch(p: Permit, cmd: Acquire): CommandResult<never> | null {
  const session = p.session?.sessionId ?? null;
  if ((cmd.session ?? null) === session) return null;
  const binding = session === null ? 'a ttl' : `session ${session}`;
  return fail(
    'grant_mismatch',
    `${p.holder} holds a permit of semaphore ${p.semaphore.name} bound to ${binding}: release it first`,
    { holder: p.holder, fencingToken: p.fencingToken, session },
  );
}

/**
 * Acquire (docs/api.md semaphores): a permit, a renewal of the holder's own permit when the
 * binding matches (same token; `grant_mismatch` when it does not),
 * a FIFO place (waitMs > 0), `held` when full, `limit_mismatch` {limit} when the name has holders
 * or waiters under another limit, `not_found` for an unknown session, or `resource_exhausted`.
 */
export function semaphoreAcquire(
  core: Core,
  ctx: ApplyContext,
  cmd: Acquire,
  idempotencyKey: string | null,
): CommandResult<SemaphoreAcquireValue> {
  let rec = core.semaphores.get(cmd.name);
  if (rec !== undefined && rec.limit !== cmd.limit)
    return fail('limit_mismatch', `semaphore ${cmd.name} has limit ${rec.limit}`, {
      limit: rec.limit,
    });
  const mine = rec?.permits.get(cmd.holder);
  if (mine !== undefined) {
    const refused = refuseOther(ctx, mine.owner, `semaphore ${cmd.name} permit of ${cmd.holder}`);
    if (refused !== null) return refused;
    const mismatch = permitMismatch(mine, cmd);
    if (mismatch !== null) return mismatch;
    extendPermit(core, ctx, mine);
    return { ok: true, value: { kind: 'granted', ...permitValue(mine) } };
  }
  let session: SessionRecord | null = null;
  if (cmd.session !== null) {
    const s = sessionForGrant(core, cmd.session);
    if (!isSession(s)) return s;
    const refused = refuseOther(ctx, s.owner, `session ${cmd.session}`);
    if (refused !== null) return refused;
    session = s;
  }
  if (rec !== undefined && (rec.permits.size >= rec.limit || rec.waiters !== null))
    return cmd.waitMs > 0 ? enqueue(core, ctx, rec, cmd, session, idempotencyKey) : heldError(rec);
  if (rec === undefined) {
    if (core.semaphores.size >= core.limits.semaphoresMax)
      return exhausted('semaphoresMax', core.limits.semaphoresMax);
    rec = {
      name: cmd.name,
      limit: cmd.limit,
      permits: new Map(),
      waiters: null,
      lastFencingToken: 0,
    };
    core.semaphores.set(cmd.name, rec);
  }
  const p = grantPermit(core, ctx, rec, cmd.holder, cmd.ttlMs, session, ownerFor(ctx));
  return { ok: true, value: { kind: 'granted', ...permitValue(p) } };
}

function namedPermit(
  rec: SemaphoreRecord | undefined,
  holder: string,
  fencingToken: FencingToken,
): Permit | undefined {
  const p = rec?.permits.get(holder);
  return p !== undefined && p.fencingToken === fencingToken ? p : undefined;
}

function notHolder(
  core: Core,
  name: string,
  holder: string,
  fencingToken: FencingToken,
): CommandResult<never> {
  const ended = core.history.find(semaphoreKey(name), holder, fencingToken);
  if (ended !== undefined && ended.reason !== 'released')
    return fail('lease_expired', `semaphore ${name} permit ${fencingToken} of ${holder} ended`, {
      endedAtMs: ended.endedAtMs,
      endReason: ended.reason,
    });
  return fail(
    'not_holder',
    `${holder} holds no permit of semaphore ${name} with token ${fencingToken}`,
    { holder: null },
  );
}

/** Renew of a live permit (holder, fencingToken); session-bound: a keepalive of its session. */
export function semaphoreRenew(
  core: Core,
  ctx: ApplyContext,
  cmd: Renew,
): CommandResult<SemaphoreGrant> {
  const p = namedPermit(core.semaphores.get(cmd.name), cmd.holder, cmd.fencingToken);
  if (p === undefined) return notHolder(core, cmd.name, cmd.holder, cmd.fencingToken);
  const refused = refuseOther(ctx, p.owner, `semaphore ${cmd.name} permit ${cmd.fencingToken}`);
  if (refused !== null) return refused;
  extendPermit(core, ctx, p);
  return { ok: true, value: permitValue(p) };
}

/** Release of a live permit; the head waiter gets it in the same entry. */
export function semaphoreRelease(
  core: Core,
  ctx: ApplyContext,
  cmd: Release,
): CommandResult<SemaphoreReleaseValue> {
  const rec = core.semaphores.get(cmd.name);
  const p = namedPermit(rec, cmd.holder, cmd.fencingToken);
  if (rec === undefined || p === undefined)
    return notHolder(core, cmd.name, cmd.holder, cmd.fencingToken);
  const refused = refuseOther(ctx, p.owner, `semaphore ${cmd.name} permit ${cmd.fencingToken}`);
  if (refused !== null) return refused;
  endPermit(core, ctx, p, 'released', ctx.nowMs);
  settleSemaphore(core, ctx, rec);
  return { ok: true, value: { name: cmd.name, released: true } };
}

/** Operator revoke: every live permit (or the one with `fencingToken`; not_holder when not live). */
export function semaphoreRevoke(
  core: Core,
  ctx: ApplyContext,
  cmd: Revoke,
): CommandResult<RevokeValue> {
  const rec = core.semaphores.get(cmd.name);
  const live = rec === undefined ? [] : [...rec.permits.values()];
  const targets =
    cmd.fencingToken === null ? live : live.filter((p) => p.fencingToken === cmd.fencingToken);
  if (cmd.fencingToken !== null && targets.length === 0)
    return fail(
      'not_holder',
      `semaphore ${cmd.name} has no live permit with token ${cmd.fencingToken}`,
      { holder: null },
    );
  targets.sort((a, b) => a.fencingToken - b.fencingToken);
  for (const p of targets) endPermit(core, ctx, p, 'revoked', ctx.nowMs);
  if (rec !== undefined) settleSemaphore(core, ctx, rec);
  return { ok: true, value: { name: cmd.name, revoked: targets.map((p) => p.fencingToken) } };
}

/** Withdraws a queued semaphore waiter; another holder's → not_holder; gone → cancelled: false. */
export function semaphoreCancelWait(
  core: Core,
  ctx: ApplyContext,
  cmd: CancelWait,
): CommandResult<CancelWaitValue> {
  const w = core.pendingSemWaiters.get(cmd.waiterId);
  if (w === undefined || w.semaphore.name !== cmd.name)
    return { ok: true, value: { name: cmd.name, waiterId: cmd.waiterId, cancelled: false } };
  if (w.holder !== cmd.holder)
    return fail(
      'not_holder',
      `waiter ${cmd.waiterId} on semaphore ${cmd.name} belongs to another holder`,
      { holder: null },
    );
  const refused = refuseOther(ctx, w.owner, `waiter ${cmd.waiterId} on semaphore ${cmd.name}`);
  if (refused !== null) return refused;
  const rec = w.semaphore;
  finishWaiter(core, ctx, w, { kind: 'cancelled' }, heldError(rec, { cancelled: true }));
  settleSemaphore(core, ctx, rec);
  return { ok: true, value: { name: cmd.name, waiterId: cmd.waiterId, cancelled: true } };
}

/** Expiry phase: the permit's ttl ran out. */
export function expirePermit(core: Core, ctx: ApplyContext, p: Permit): void {
  endPermit(core, ctx, p, 'expired', p.dueMs);
}

/** Expiry phase: a waiter's deadline passed; never granted; its answer becomes `held`. */
export function timeoutSemWaiter(core: Core, ctx: ApplyContext, w: SemWaiter): void {
  finishWaiter(core, ctx, w, { kind: 'timed_out' }, heldError(w.semaphore, { timedOut: true }));
}

/** Its session ended: the permit ends (`session_ended`) at `endedAtMs`. Does not settle. */
export function endPermitBySession(
  core: Core,
  ctx: ApplyContext,
  p: Permit,
  endedAtMs: number,
): void {
  // Never before it began (a permit granted by this entry as of an earlier due time, see leases.ts).
  endPermit(core, ctx, p, 'session_ended', Math.max(endedAtMs, p.grantedAtMs));
}

/** Its session ended: the waiter is withdrawn; its answer becomes `held`. Does not settle. */
export function withdrawSemWaiterBySession(core: Core, ctx: ApplyContext, w: SemWaiter): void {
  finishWaiter(
    core,
    ctx,
    w,
    { kind: 'cancelled' },
    heldError(w.semaphore, { cancelled: true, sessionEnded: true }),
  );
}

/** Grants free permits to head waiters in FIFO order; deletes a record with no permit and no waiter. */
export function settleSemaphore(
  core: Core,
  ctx: ApplyContext,
  rec: SemaphoreRecord,
  atMs: number = ctx.nowMs,
): void {
  assert(atMs <= ctx.nowMs, 'semaphore: settling in the future');
  while (rec.waiters !== null && rec.permits.size < rec.limit) {
    const head = rec.waiters.values().next().value!;
    assert(head.dueMs > atMs, 'semaphore: granting a waiter past its deadline');
    const p = grantPermit(core, ctx, rec, head.holder, head.ttlMs, head.session, head.owner);
    const value = permitValue(p);
    finishWaiter(
      core,
      ctx,
      head,
      { kind: 'granted', ...value },
      { ok: true, value: { kind: 'granted', ...value } },
    );
  }
  if (rec.permits.size === 0 && rec.waiters === null) core.semaphores.delete(rec.name);
}

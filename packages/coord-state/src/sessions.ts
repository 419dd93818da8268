/**
 * Session commands and session expiry (docs/primitives.md, sessions): one ttl that keeps many
 * grants alive. The id is `s` + the log index of the creating entry, so it is unique forever and
 * identical on every replica. When a session ends — `session.end`, or expiry in cluster time —
 * every lease grant, permit, waiter and candidacy bound to it ends in that same entry (history
 * reason `session_ended`); lock-delays start only when the session expired.
 */
import type { CommandResult, SessionCommand } from './api.js';
import type { Core } from './core.js';
import { withdrawCandidacyBySession } from './elections.js';
import { exhausted, fail } from './fail.js';
import { endGrantBySession, withdrawWaiterBySession } from './leases.js';
import {
  sessionKey,
  type ApplyContext,
  type ElectionRecord,
  type LeaseRecord,
  type SemaphoreRecord,
  type SessionRecord,
} from './model.js';
import { overCap, ownerFor, refuseOther } from './ownership.js';
import type { SessionEndValue, SessionValue } from './results.js';
import { endPermitBySession, withdrawSemWaiterBySession } from './semaphores.js';
import { keepSessionAlive, sortedMembers } from './session-members.js';

type Create = Extract<SessionCommand, { type: 'session.create' }>;
type Keepalive = Extract<SessionCommand, { type: 'session.keepalive' }>;
type End = Extract<SessionCommand, { type: 'session.end' }>;

/** Records whose grants or waiters a session's end touched: the caller settles them, in name order. */
export interface Touched {
  readonly leases: Set<LeaseRecord>;
  readonly semaphores: Set<SemaphoreRecord>;
  readonly groups: Set<ElectionRecord>;
}

/** A fresh, empty set of touched records. */
export function newTouched(): Touched {
  return { leases: new Set(), semaphores: new Set(), groups: new Set() };
}

/** The id of the session created by the entry at `index`. */
export function sessionIdAt(index: number): string {
  return `s${index}`;
}

/** Creates a session live for `ttlMs` from now; resource_exhausted {limit: 'sessionsMax'} when full. */
export function sessionCreate(
  core: Core,
  ctx: ApplyContext,
  cmd: Create,
): CommandResult<SessionValue> {
  if (core.sessions.size >= core.limits.sessionsMax)
    return exhausted('sessionsMax', core.limits.sessionsMax);
  const capped = overCap(ctx.principal, core.owners, 'sessions');
  if (capped !== null) return capped;
  const s: SessionRecord = {
    kind: 'session',
    owner: ownerFor(ctx),
    sessionId: sessionIdAt(ctx.index),
    name: cmd.name,
    ttlMs: cmd.ttlMs,
    members: new Set(),
    dueMs: 0,
    seq: 0,
    heapIndex: -1,
  };
  core.sessions.set(s.sessionId, s);
  core.owners.add(s.owner, 'sessions', 1);
  core.scheduleWake(s, ctx.nowMs + s.ttlMs);
  ctx.changed.add(sessionKey(s.sessionId));
  ctx.events.push({ kind: 'session', name: s.sessionId, type: 'granted', ttlMs: s.ttlMs });
  return { ok: true, value: { sessionId: s.sessionId, ttlMs: s.ttlMs } };
}

function notFound(sessionId: string): CommandResult<never> {
  return fail('not_found', `session ${sessionId} not found`);
}

/** Extends a live session by its ttl from now; not_found once it ended (or never existed). */
export function sessionKeepalive(
  core: Core,
  ctx: ApplyContext,
  cmd: Keepalive,
): CommandResult<SessionValue> {
  const s = core.sessions.get(cmd.sessionId);
  if (s === undefined) return notFound(cmd.sessionId);
  const refused = refuseOther(ctx, s.owner, `session ${cmd.sessionId}`);
  if (refused !== null) return refused;
  keepSessionAlive(core, ctx, s);
  return { ok: true, value: { sessionId: s.sessionId, ttlMs: s.ttlMs } };
}

/** Ends a live session now (like a release: no lock-delay) and settles what it held. */
export function sessionEnd(
  core: Core,
  ctx: ApplyContext,
  cmd: End,
  settle: (t: Touched) => void,
): CommandResult<SessionEndValue> {
  const s = core.sessions.get(cmd.sessionId);
  if (s === undefined) return notFound(cmd.sessionId);
  const refused = refuseOther(ctx, s.owner, `session ${cmd.sessionId}`);
  if (refused !== null) return refused;
  const touched = newTouched();
  endSession(core, ctx, s, null, touched);
  settle(touched);
  return { ok: true, value: { sessionId: s.sessionId, ended: true } };
}

/** Expiry phase: the session was not kept alive; everything bound to it ends at its expiry time. */
export function expireSession(
  core: Core,
  ctx: ApplyContext,
  s: SessionRecord,
  touched: Touched,
): void {
  endSession(core, ctx, s, s.dueMs, touched);
}

/**
 * Ends `s` and everything bound to it, in canonical member order. `expiredAtMs`: the expiry time
 * when it expired (lock-delays start from it), null for an explicit end. Adds every touched
 * record to `touched`; does not settle.
 */
function endSession(
  core: Core,
  ctx: ApplyContext,
  s: SessionRecord,
  expiredAtMs: number | null,
  touched: Touched,
): void {
  core.wake.remove(s);
  core.sessions.delete(s.sessionId);
  core.owners.add(s.owner, 'sessions', -1);
  const endedAtMs = expiredAtMs ?? ctx.nowMs;
  for (const m of sortedMembers(s)) {
    switch (m.kind) {
      case 'grant':
        endGrantBySession(core, ctx, m, expiredAtMs);
        touched.leases.add(m.lease);
        break;
      case 'waiter':
        withdrawWaiterBySession(core, ctx, m);
        touched.leases.add(m.lease);
        break;
      case 'permit':
        endPermitBySession(core, ctx, m, endedAtMs);
        touched.semaphores.add(m.semaphore);
        break;
      case 'semWaiter':
        withdrawSemWaiterBySession(core, ctx, m);
        touched.semaphores.add(m.semaphore);
        break;
      case 'candidacy':
        withdrawCandidacyBySession(core, ctx, m, endedAtMs);
        touched.groups.add(m.election);
        break;
    }
  }
  ctx.changed.add(sessionKey(s.sessionId));
  ctx.events.push({
    kind: 'session',
    name: s.sessionId,
    type: 'session_ended',
    endReason: expiredAtMs === null ? 'released' : 'expired',
  });
}

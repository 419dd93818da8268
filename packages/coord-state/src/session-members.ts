/**
 * What grants need from their session (docs/primitives.md, sessions): resolve a session id for a
 * new grant (404 when unknown, 429 when the session is full), keep the session alive through a
 * grant refresh, and the canonical order in which a session's members end.
 */
import type { CommandResult } from './api.js';
import type { Core } from './core.js';
import { exhausted, fail } from './fail.js';
import { sessionKey, type ApplyContext, type SessionMember, type SessionRecord } from './model.js';

/**
 * The live session `sessionId` with room for one more member, or an error result: `not_found`
 * (ended, expired or never created) or `resource_exhausted` {limit: 'grantsPerSessionMax'}.
 */
export function sessionForGrant(
  core: Core,
  sessionId: string,
): SessionRecord | CommandResult<never> {
  const s = core.sessions.get(sessionId);
  if (s === undefined) return fail('not_found', `session ${sessionId} not found`);
  if (s.members.size >= core.limits.grantsPerSessionMax)
    return exhausted(
      'grantsPerSessionMax',
      core.limits.grantsPerSessionMax,
      ` for session ${sessionId}`,
    );
  return s;
}

/** True when `x` is a session record (not an error result). */
export function isSession(x: SessionRecord | CommandResult<never>): x is SessionRecord {
  return (x as SessionRecord).kind === 'session';
}

/** Extends `s` by its ttl from now (keepalive, or a refresh through one of its grants). */
export function keepSessionAlive(core: Core, ctx: ApplyContext, s: SessionRecord): void {
  core.scheduleWake(s, ctx.nowMs + s.ttlMs);
  ctx.changed.add(sessionKey(s.sessionId));
  ctx.events.push({ kind: 'session', name: s.sessionId, type: 'renewed', ttlMs: s.ttlMs });
}

const KIND_ORDER: Readonly<Record<SessionMember['kind'], number>> = {
  grant: 0,
  waiter: 1,
  permit: 2,
  semWaiter: 3,
  candidacy: 4,
};

function memberName(m: SessionMember): string {
  switch (m.kind) {
    case 'grant':
    case 'waiter':
      return m.lease.name;
    case 'permit':
    case 'semWaiter':
      return m.semaphore.name;
    case 'candidacy':
      return m.election.group;
  }
}

function memberNumber(m: SessionMember): number {
  switch (m.kind) {
    case 'grant':
    case 'permit':
      return m.fencingToken;
    case 'waiter':
    case 'semWaiter':
      return m.waiterId;
    case 'candidacy':
      return 0; // candidacies of one group tie-break by candidate below
  }
}

/**
 * Members of `s` in canonical order (kind, resource name, token / waiterId, candidate): the
 * order never depends on insertion, so replicas and restored twins end them identically.
 */
export function sortedMembers(s: SessionRecord): SessionMember[] {
  return [...s.members].sort((a, b) => {
    const k = KIND_ORDER[a.kind] - KIND_ORDER[b.kind];
    if (k !== 0) return k;
    const na = memberName(a);
    const nb = memberName(b);
    if (na !== nb) return na < nb ? -1 : 1;
    const d = memberNumber(a) - memberNumber(b);
    if (d !== 0) return d;
    const ca = a.kind === 'candidacy' ? a.candidate : '';
    const cb = b.kind === 'candidacy' ? b.candidate : '';
    return ca < cb ? -1 : ca > cb ? 1 : 0;
  });
}

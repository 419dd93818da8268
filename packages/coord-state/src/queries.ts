/**
 * Read-only views of the state for the routes of docs/api.md: lease state (exclusive or shared),
 * semaphores, sessions and holder history. A grant whose expiry (its own, or its session's) is at
 * or before `nowMs` reads as gone, even before an entry has expired it.
 */
import type {
  GrantResourceKind,
  HistoryEntry,
  HolderView,
  LeaseView,
  SemaphoreView,
  SessionLeaseView,
  SessionView,
  SharedLeaseView,
} from './api.js';
import type { Core } from './core.js';
import type { EndedGrant } from './history.js';
import { grantExpiresAtMs, grantValue, liveGrants } from './leases.js';
import { electionKey, leaseKey, semaphoreKey, type Grant, type Permit } from './model.js';
import { permitExpiresAtMs } from './semaphores.js';

function holderView(g: Grant | Permit, expiresAtMs: number, nowMs: number): HolderView {
  const base = { holder: g.holder, fencingToken: g.fencingToken, remainingMs: expiresAtMs - nowMs };
  return g.session === null ? base : { ...base, session: g.session.sessionId };
}

/** `GET /v1/leases/{name}`: the exclusive shape, the shared shape, or null when nobody holds it. */
export function leaseStateView(
  core: Core,
  name: string,
  nowMs: number,
): LeaseView | SessionLeaseView | SharedLeaseView | null {
  const rec = core.leases.get(name);
  if (rec === undefined) return null;
  if (rec.grant !== null) {
    const g = rec.grant;
    const expiresAtMs = grantExpiresAtMs(g);
    if (expiresAtMs <= nowMs) return null;
    return { ...grantValue(g), remainingMs: expiresAtMs - nowMs };
  }
  if (rec.shared === null) return null;
  const holders: HolderView[] = [];
  for (const g of rec.shared.values()) {
    const expiresAtMs = grantExpiresAtMs(g);
    if (expiresAtMs > nowMs) holders.push(holderView(g, expiresAtMs, nowMs));
  }
  return holders.length === 0 ? null : { name, mode: 'shared', holders };
}

/** `GET /v1/semaphores/{name}`: null when nobody holds or waits. Holders oldest permit first. */
export function semaphoreView(core: Core, name: string, nowMs: number): SemaphoreView | null {
  const rec = core.semaphores.get(name);
  if (rec === undefined) return null;
  const holders: HolderView[] = [];
  for (const p of rec.permits.values()) {
    const expiresAtMs = permitExpiresAtMs(p);
    if (expiresAtMs > nowMs) holders.push(holderView(p, expiresAtMs, nowMs));
  }
  holders.sort((a, b) => a.fencingToken - b.fencingToken);
  const waiters = rec.waiters?.size ?? 0;
  if (holders.length === 0 && waiters === 0) return null;
  return { name, limit: rec.limit, holders, waiters };
}

function byKey<T>(key: (x: T) => string): (a: T, b: T) => number {
  return (a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
}

/** `GET /v1/sessions/{id}`: null once ended or expired at `nowMs`. Lists sorted by name. */
export function sessionView(core: Core, sessionId: string, nowMs: number): SessionView | null {
  const s = core.sessions.get(sessionId);
  if (s === undefined || s.dueMs <= nowMs) return null;
  const leases: { name: string; fencingToken: number }[] = [];
  const semaphores: { name: string; fencingToken: number }[] = [];
  const candidacies: { group: string }[] = [];
  for (const m of s.members) {
    if (m.kind === 'grant') leases.push({ name: m.lease.name, fencingToken: m.fencingToken });
    else if (m.kind === 'permit')
      semaphores.push({ name: m.semaphore.name, fencingToken: m.fencingToken });
    else if (m.kind === 'candidacy') candidacies.push({ group: m.election.group });
  }
  leases.sort(byKey((x) => x.name));
  semaphores.sort(byKey((x) => x.name));
  candidacies.sort(byKey((x) => x.group));
  return {
    sessionId,
    name: s.name,
    ttlMs: s.ttlMs,
    remainingMs: s.dueMs - nowMs,
    leases,
    semaphores,
    candidacies,
  };
}

function endedEntry(kind: GrantResourceKind, e: EndedGrant): HistoryEntry {
  return {
    holder: e.holder,
    fencingToken: e.fencingToken,
    ...(kind === 'lease' && e.mode !== null ? { mode: e.mode } : {}),
    ...(e.session === null ? {} : { session: e.session }),
    grantedAtMs: e.grantedAtMs,
    endedAtMs: e.endedAtMs,
    endReason: e.reason,
  };
}

function liveEntries(core: Core, kind: GrantResourceKind, name: string): HistoryEntry[] {
  const live = (
    holder: string,
    fencingToken: number,
    grantedAtMs: number,
    session: string | null,
    mode?: 'exclusive' | 'shared',
  ): HistoryEntry => ({
    holder,
    fencingToken,
    ...(mode === undefined ? {} : { mode }),
    ...(session === null ? {} : { session }),
    grantedAtMs,
    endedAtMs: null,
    endReason: null,
  });
  switch (kind) {
    case 'lease': {
      const rec = core.leases.get(name);
      if (rec === undefined) return [];
      return liveGrants(rec).map((g) =>
        live(
          g.holder,
          g.fencingToken,
          g.grantedAtMs,
          g.session?.sessionId ?? null,
          g.shared ? 'shared' : 'exclusive',
        ),
      );
    }
    case 'semaphore': {
      const rec = core.semaphores.get(name);
      if (rec === undefined) return [];
      return [...rec.permits.values()].map((p) =>
        live(p.holder, p.fencingToken, p.grantedAtMs, p.session?.sessionId ?? null),
      );
    }
    case 'election': {
      const rec = core.elections.get(name);
      const c = rec?.leader ?? null;
      if (rec === undefined || c === null) return [];
      return [live(c.candidate, rec.leaderToken, rec.leaderSinceMs, c.session?.sessionId ?? null)];
    }
  }
}

const KEY_OF: Readonly<Record<GrantResourceKind, (name: string) => string>> = {
  lease: leaseKey,
  semaphore: semaphoreKey,
  election: electionKey,
};

/**
 * Holder history of a resource (docs/api.md): live grants and remembered ended ones, newest first
 * (by fencingToken, which orders grants), at most `limit`; [] for a name never granted.
 */
export function historyOf(
  core: Core,
  kind: GrantResourceKind,
  name: string,
  limit: number,
): HistoryEntry[] {
  const ended = core.history.of(KEY_OF[kind](name)).map((e) => endedEntry(kind, e));
  const all = [...liveEntries(core, kind, name), ...ended];
  all.sort((a, b) => b.fencingToken - a.fencingToken);
  return all.slice(0, Math.max(0, limit));
}

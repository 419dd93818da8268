/**
 * Workers of the chaos workload for the primitives of docs/primitives.md: semaphores, shared
 * (read/write) locks, sessions and the streaming watch. They run next to the lease / election / KV
 * workers of tenure-workload.ts, on their own run-unique names (all starting with `namePrefix`), and
 * record their requests under their own op kinds (`sem.*`, `rw.*`, `session.*`, `prim.write`,
 * `watch.*`) so the older checkers, whose models know only plain leases, never see them:
 *
 * - semaphore workers: acquire a permit (`limit` fixed per name, sometimes waiting) → fenced KV
 *   writes with the permit's token (`prim.write`), renews → release, or abandon it;
 * - shared-lock workers: acquire a lease in `shared` or `exclusive` mode → renews, fenced writes while
 *   exclusive → release (or abandon);
 * - session workers: create a session → bind 1–3 grants (permits, shared or exclusive grants) to
 *   it → keepalives, renews and fenced writes → end it (DELETE), release first, or abandon it to
 *   expiry; after the end they probe a bound grant (renew, fenced write) that must be refused;
 * - watchers: `client.watch()` of @tenure/client over `namePrefix`, from the revision of a marker
 *   put they make first, recording each change as a `watch.event` op (`watch.open` / `watch.end`
 *   around each iterator). A `compacted` end starts a new stream from a fresh marker.
 *
 * History conventions (read by check/semaphore.ts, shared-lock.ts, sessions.ts, watch.ts): args are
 * route parameters (`name`, `sessionId`, `key`) + body + idempotency key, as for the other workers.
 */
import { setMaxListeners } from 'node:events';
import type { ClusterHandle, HistorySink, JsonObject, Random } from '../types.js';
import {
  bodyOf,
  isDefinite,
  type Requester,
  type RequestResult,
  type RequestSpec,
} from './request.js';
import type { TenureWorkloadOptions } from './tenure-workload.js';
import { sleepUnlessAborted } from '../util/sleep.js';

/** What the primitive workers share with the rest of the workload. */
export interface PrimitivesContext {
  readonly cluster: ClusterHandle;
  readonly history: HistorySink;
  readonly o: TenureWorkloadOptions;
  readonly signal: AbortSignal;
  /** Every name and key the workers use starts with it (the watchers' prefix). */
  readonly namePrefix: string;
  /** Sends a mutation (retried with its idempotency key through other nodes while the run lasts). */
  readonly mutate: (req: Requester, spec: RequestSpec) => Promise<RequestResult>;
  readonly log: (line: string) => void;
}

/** Semaphore names and their fixed limits (a name's limit never changes in a run). */
export function semaphoreNames(namePrefix: string): { name: string; limit: number }[] {
  return [
    { name: `${namePrefix}sem0`, limit: 2 },
    { name: `${namePrefix}sem1`, limit: 3 },
  ];
}

/** Names used in shared and exclusive mode. */
export function sharedLockNames(namePrefix: string): string[] {
  return [`${namePrefix}rw0`, `${namePrefix}rw1`];
}

const enc = encodeURIComponent;

const sleep = sleepUnlessAborted;

function think(c: PrimitivesContext, r: Random): Promise<void> {
  return sleep(r.int(c.o.thinkMs[0], c.o.thinkMs[1]), c.signal);
}

/** Belief deadline (docs/concepts.md) of a grant or session armed by a request sent at `sendMs`. */
function beliefUntil(c: PrimitivesContext, sendMs: number, ttlMs: number): number {
  return sendMs + ttlMs * (1 - c.o.maxDriftRatio) - c.o.safetyMarginMs;
}

/** A grant the worker holds: a semaphore permit or a (shared or exclusive) lease grant. */
interface Held {
  readonly family: 'sem' | 'rw';
  readonly name: string;
  readonly holder: string;
  readonly token: number;
  readonly mode: 'shared' | 'exclusive' | null;
}

/** How a grant is bound: a ttl of its own, or a session. */
type Binding = { readonly ttlMs: number } | { readonly session: string };

function acquireSpec(
  family: 'sem' | 'rw',
  name: string,
  holder: string,
  binding: Binding,
  extra: { limit?: number; mode?: 'shared' | 'exclusive'; waitMs?: number },
): RequestSpec {
  const base = family === 'sem' ? 'semaphores' : 'leases';
  const waitMs = extra.waitMs ?? 0;
  return {
    kind: family === 'sem' ? 'sem.acquire' : 'rw.acquire',
    method: 'POST',
    path: `/v1/${base}/${enc(name)}/acquire`,
    body: {
      holder,
      ...binding,
      ...(extra.limit === undefined ? {} : { limit: extra.limit }),
      ...(extra.mode === undefined || extra.mode === 'exclusive' ? {} : { mode: extra.mode }),
      ...(waitMs > 0 ? { waitMs } : {}),
    },
    argsExtra: { name, ...(extra.mode === undefined ? {} : { mode: extra.mode }) },
    ...(waitMs > 0 ? { waitMs } : {}),
  };
}

function grantSpec(g: Held, action: 'renew' | 'release'): RequestSpec {
  const base = g.family === 'sem' ? 'semaphores' : 'leases';
  return {
    kind: `${g.family}.${action}`,
    method: 'POST',
    path: `/v1/${base}/${enc(g.name)}/${action}`,
    body: { holder: g.holder, fencingToken: g.token },
    argsExtra: { name: g.name, ...(g.mode === null ? {} : { mode: g.mode }) },
  };
}

/** A KV put fenced by grant `g` (`prim.write`; ok = accepted, 409 stale_token = refused). */
function fencedWrite(
  c: PrimitivesContext,
  req: Requester,
  g: Held,
  payload: JsonObject,
): Promise<RequestResult> {
  const key = `${g.name}-data`;
  const fence =
    g.family === 'sem'
      ? { semaphore: g.name, fencingToken: g.token }
      : { lease: g.name, fencingToken: g.token };
  return c.mutate(req, {
    kind: 'prim.write',
    method: 'PUT',
    path: `/v1/kv/${enc(key)}`,
    body: { value: { holder: g.holder, ...payload }, fence },
    argsExtra: { key },
  });
}

/** The granted token of an ok acquire, else null. */
function tokenOf(res: RequestResult): number | null {
  const v = bodyOf(res.outcome);
  return typeof v?.['fencingToken'] === 'number' ? v['fencingToken'] : null;
}

/** Semaphore worker: acquire a permit → writes + renews → release (or abandon). */
export async function semaphoreWorker(
  c: PrimitivesContext,
  req: Requester,
  r: Random,
  proc: string,
): Promise<void> {
  const names = semaphoreNames(c.namePrefix);
  let n = 0;
  while (!c.signal.aborted) {
    const { name, limit } = r.pick(names);
    const holder = `${proc}.${++n}`;
    const waitMs = r.next() < c.o.waitProbability ? r.int(100, 2 * c.o.ttlMs) : 0;
    const acq = await c.mutate(
      req,
      acquireSpec('sem', name, holder, { ttlMs: c.o.ttlMs }, { limit, waitMs }),
    );
    const token = tokenOf(acq);
    if (token === null) {
      await think(c, r);
      continue;
    }
    const g: Held = { family: 'sem', name, holder, token, mode: null };
    await holdAndEnd(c, req, r, g, beliefUntil(c, acq.firstSendMs, c.o.ttlMs));
  }
}

/** Shared-lock worker: a shared (60 %) or exclusive grant → renews (+ writes when exclusive) → release. */
export async function sharedLockWorker(
  c: PrimitivesContext,
  req: Requester,
  r: Random,
  proc: string,
): Promise<void> {
  const names = sharedLockNames(c.namePrefix);
  let n = 0;
  while (!c.signal.aborted) {
    const name = r.pick(names);
    const holder = `${proc}.${++n}`;
    const mode = r.next() < 0.6 ? 'shared' : 'exclusive';
    const waitMs = r.next() < c.o.waitProbability ? r.int(100, 2 * c.o.ttlMs) : 0;
    const acq = await c.mutate(
      req,
      acquireSpec('rw', name, holder, { ttlMs: c.o.ttlMs }, { mode, waitMs }),
    );
    const token = tokenOf(acq);
    if (token === null) {
      await think(c, r);
      continue;
    }
    const g: Held = { family: 'rw', name, holder, token, mode };
    await holdAndEnd(c, req, r, g, beliefUntil(c, acq.firstSendMs, c.o.ttlMs));
  }
}

/** Holds ttl-bound grant `g` for a few steps (writes while believed held, renews), then ends it. */
async function holdAndEnd(
  c: PrimitivesContext,
  req: Requester,
  r: Random,
  g: Held,
  firstUntil: number,
): Promise<void> {
  let until = firstUntil;
  let held = true;
  const steps = r.int(1, 4);
  for (let s = 0; s < steps && held && !c.signal.aborted; s++) {
    if (g.mode !== 'shared' && c.cluster.clock.now() < until)
      await fencedWrite(c, req, g, { step: s });
    await think(c, r);
    const ren = await c.mutate(req, grantSpec(g, 'renew'));
    if (bodyOf(ren.outcome) !== null) until = beliefUntil(c, ren.firstSendMs, c.o.ttlMs);
    else if (isDefinite(ren.outcome)) held = false;
  }
  if (c.signal.aborted) return;
  if (held && r.next() < c.o.abandonProbability) {
    await sleep(c.o.ttlMs, c.signal); // let it expire; a stale write afterwards must be refused
    if (g.mode !== 'shared') await fencedWrite(c, req, g, { zombie: true });
    return;
  }
  if (held) await c.mutate(req, grantSpec(g, 'release'));
  await think(c, r);
}

/** Session worker: a session with 1–3 bound grants, kept alive for a while, then ended or abandoned. */
export async function sessionWorker(
  c: PrimitivesContext,
  req: Requester,
  r: Random,
  proc: string,
): Promise<void> {
  const sems = semaphoreNames(c.namePrefix);
  const rws = sharedLockNames(c.namePrefix);
  let n = 0;
  while (!c.signal.aborted) {
    const label = `${proc}.${++n}`;
    const created = await c.mutate(req, {
      kind: 'session.create',
      method: 'POST',
      path: '/v1/sessions',
      body: { ttlMs: c.o.ttlMs, name: label },
      argsExtra: {},
    });
    const sv = bodyOf(created.outcome);
    const sessionId = typeof sv?.['sessionId'] === 'string' ? sv['sessionId'] : null;
    if (sessionId === null) {
      await think(c, r);
      continue;
    }
    let until = beliefUntil(c, created.firstSendMs, c.o.ttlMs);
    const grants: Held[] = [];
    const count = r.int(1, 3);
    for (let i = 0; i < count && !c.signal.aborted && c.cluster.clock.now() < until; i++) {
      const holder = `${label}.${i}`;
      const binding = { session: sessionId };
      if (r.next() < 0.5) {
        const { name, limit } = r.pick(sems);
        const acq = await c.mutate(req, acquireSpec('sem', name, holder, binding, { limit }));
        const token = tokenOf(acq);
        if (token !== null) grants.push({ family: 'sem', name, holder, token, mode: null });
      } else {
        const name = r.pick(rws);
        const mode = r.next() < 0.5 ? 'shared' : 'exclusive';
        const acq = await c.mutate(req, acquireSpec('rw', name, holder, binding, { mode }));
        const token = tokenOf(acq);
        if (token !== null) grants.push({ family: 'rw', name, holder, token, mode });
      }
    }
    const alive = await keepSessionAlive(c, req, r, sessionId, grants, until);
    until = alive.until;
    if (c.signal.aborted) break;
    await endSession(c, req, r, sessionId, grants, alive.ended);
  }
}

function sessionSpec(
  kind: 'session.keepalive' | 'session.get' | 'session.end',
  sessionId: string,
): RequestSpec {
  const path = `/v1/sessions/${enc(sessionId)}`;
  if (kind === 'session.keepalive')
    return { kind, method: 'POST', path: `${path}/keepalive`, argsExtra: { sessionId } };
  if (kind === 'session.get') return { kind, method: 'GET', path, argsExtra: { sessionId } };
  return { kind, method: 'DELETE', path, argsExtra: { sessionId } };
}

/** A few keepalive rounds (≈ ttl/3 apart) with fenced writes and renews of bound grants. */
async function keepSessionAlive(
  c: PrimitivesContext,
  req: Requester,
  r: Random,
  sessionId: string,
  grants: readonly Held[],
  firstUntil: number,
): Promise<{ until: number; ended: boolean }> {
  let until = firstUntil;
  const rounds = r.int(2, 6);
  for (let i = 0; i < rounds && !c.signal.aborted; i++) {
    const g = grants.length > 0 ? r.pick(grants) : null;
    if (g !== null && g.mode !== 'shared' && c.cluster.clock.now() < until)
      await fencedWrite(c, req, g, { round: i });
    await sleep(r.int(50, Math.max(60, Math.floor(c.o.ttlMs / 3))), c.signal);
    const renewGrant = g !== null && r.next() < 0.3;
    const ka = renewGrant
      ? await c.mutate(req, grantSpec(g, 'renew'))
      : await c.mutate(req, sessionSpec('session.keepalive', sessionId));
    if (bodyOf(ka.outcome) !== null) until = beliefUntil(c, ka.firstSendMs, c.o.ttlMs);
    else if (!renewGrant && isDefinite(ka.outcome)) return { until, ended: true };
    if (r.next() < 0.2) await req.send(sessionSpec('session.get', sessionId));
  }
  return { until, ended: false };
}

/** Ends the session: DELETE (sometimes after releasing its grants) or abandonment to expiry; then probes. */
async function endSession(
  c: PrimitivesContext,
  req: Requester,
  r: Random,
  sessionId: string,
  grants: readonly Held[],
  alreadyEnded: boolean,
): Promise<void> {
  const pick = r.next();
  if (!alreadyEnded && pick < c.o.abandonProbability) {
    // Abandoned: poll until the session is gone (expired), bounded.
    const deadline = c.cluster.clock.now() + c.o.ttlMs * 3 + 10_000;
    while (!c.signal.aborted && c.cluster.clock.now() < deadline) {
      const g = await req.send(sessionSpec('session.get', sessionId));
      if (g.outcome.status === 'fail' && g.outcome.code === 'not_found') break;
      await sleep(200, c.signal);
    }
  } else if (!alreadyEnded) {
    if (pick < 0.4) for (const g of grants) await c.mutate(req, grantSpec(g, 'release'));
    await c.mutate(req, sessionSpec('session.end', sessionId));
  }
  if (c.signal.aborted || grants.length === 0) return;
  // Probes: a grant of an ended session must be refused.
  const g = r.pick(grants);
  if (r.next() < 0.5) await c.mutate(req, grantSpec(g, 'renew'));
  else if (g.mode !== 'shared') await fencedWrite(c, req, g, { afterSession: true });
  await think(c, r);
}

/**
 * Watcher: `client.watch({prefix, fromRevision})` from the revision of its own marker put, recording
 * `watch.open {watcher, stream, fromRevision, prefix}`, one `watch.event {watcher, stream, seq}` per
 * change (ok value = the event) and `watch.end {watcher, stream, reason}`.
 */
export async function watchWorker(
  c: PrimitivesContext,
  req: Requester,
  r: Random,
  proc: string,
): Promise<void> {
  let mod: typeof import('@tenure/client');
  try {
    mod = await import('@tenure/client');
  } catch (err) {
    c.log(`workload ${proc}: client library unavailable (${String(err)}); skipped`);
    return;
  }
  const client = new mod.TenureClient({
    endpoints: c.cluster.endpoints().map((e) => e.httpUrl),
    clientId: proc,
    requestTimeoutMs: c.o.requestTimeoutMs,
  });
  setMaxListeners(1_000, c.signal);
  let stream = 0;
  while (!c.signal.aborted) {
    const key = `${c.namePrefix}watch-${proc}`;
    const marker = await c.mutate(req, {
      kind: 'kv.put',
      method: 'PUT',
      path: `/v1/kv/${enc(key)}`,
      body: { value: { watcher: proc, stream: stream + 1 } },
      argsExtra: { key },
    });
    const mv = bodyOf(marker.outcome);
    const fromRevision = typeof mv?.['revision'] === 'number' ? mv['revision'] : null;
    if (fromRevision === null) {
      await sleep(r.int(200, 1_000), c.signal);
      continue;
    }
    const reason = await watchStream(c, client, proc, ++stream, fromRevision);
    if (reason === 'refused') return;
    await sleep(r.int(100, 500), c.signal);
  }
}

/** One iterator of `client.watch` recorded op by op; returns how it ended. */
async function watchStream(
  c: PrimitivesContext,
  client: import('@tenure/client').TenureClient,
  proc: string,
  stream: number,
  fromRevision: number,
): Promise<'stopped' | 'compacted' | 'refused'> {
  const base: JsonObject = { watcher: proc, stream, fromRevision, prefix: c.namePrefix };
  const open = c.history.invoke(proc, 'watch.open', base, null);
  c.history.complete(open, { status: 'ok', httpStatus: 200, value: null }, null);
  let seq = 0;
  let reason: 'stopped' | 'compacted' | 'refused' = 'stopped';
  let detail = '';
  try {
    for await (const ev of client.watch({
      prefix: c.namePrefix,
      fromRevision,
      signal: c.signal,
    })) {
      const id = c.history.invoke(proc, 'watch.event', { watcher: proc, stream, seq: ++seq }, null);
      c.history.complete(
        id,
        { status: 'ok', httpStatus: 200, value: JSON.parse(JSON.stringify(ev)) as JsonObject },
        null,
      );
    }
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    reason = code === 'compacted' ? 'compacted' : 'refused';
    detail = String(err);
  }
  const end = c.history.invoke(proc, 'watch.end', { ...base, reason, events: seq }, null);
  c.history.complete(end, { status: 'ok', httpStatus: 200, value: detail }, null);
  if (reason === 'refused') c.log(`workload ${proc}: watch ended: ${detail}`);
  return reason;
}

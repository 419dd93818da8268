/**
 * Shared facts of the primitives' checkers (semaphore.ts, shared-lock.ts, sessions.ts): when a
 * semaphore permit, a shared-lock grant or a session was CERTAINLY live, and from when it was
 * certainly over, in run-clock time, with the time model of the lease-timing checker
 * (docs/concepts.md: cluster time never runs faster than real time × (1 + drift), so a grant armed
 * by a request sent at S with ttl T cannot lapse before S + T × (1 − drift)).
 *
 * - A grant (name, holder, token) is certainly live on [first ack of an ok acquire/renew showing it,
 *   max over those ops of their send time + ttlMs × (1 − drift)] — a grant never comes back once
 *   ended, so every ok answer proves it live since it was granted. A session-bound grant lives as long
 *   as its session (below) instead of a ttl. The span is cut at the send time of any release of it
 *   that may have taken effect (ok or unknown).
 * - A session is certainly live until max over ok create/keepalive of send + ttlMs × (1 − drift),
 *   cut at the send of any DELETE that may have taken effect; it is certainly over by the ack of an
 *   ok DELETE or of a 404 to its keepalive/GET/DELETE.
 * Ops are merged by idempotency key first (merge.ts); 503 and other 5xx count as unknown (history.ts).
 */
import type { HistoryOp, JsonObject } from '../types.js';
import { effectOf, failCode, num, obj, okValue, str } from './history.js';
import { mergeAttempts } from './merge.js';

/** One grant and the run-clock span in which it was certainly live (`fromMs ≥ toMs`: no such moment). */
export interface GrantSpan {
  readonly family: 'sem' | 'rw';
  readonly name: string;
  readonly holder: string;
  readonly token: number;
  readonly mode: 'shared' | 'exclusive';
  readonly session: string | null;
  /** The semaphore limit its acquire answered (null for shared-lock grants). */
  readonly limit: number | null;
  readonly fromMs: number;
  readonly toMs: number;
  /** Earliest ack of an op that showed it live. */
  readonly firstSeenMs: number;
  /** Earliest send of an acquire by its holder on its name: it was not granted before this. */
  readonly issuedNotBeforeMs: number;
  /** Earliest ack of an op proving it ended (release ok, renew refused, its session over), else null. */
  readonly endedByMs: number | null;
  /** The ops that showed it live. */
  readonly opIds: readonly number[];
}

/** A session's certain life and end. */
export interface SessionFacts {
  readonly sessionId: string;
  readonly ttlMs: number;
  /** Certainly live up to this time (run clock). */
  readonly liveUntilMs: number;
  /** Certainly over by this time (ack of an op proving it ended), else null. */
  readonly endedByMs: number | null;
  readonly evidenceOpId: number | null;
}

/** Ops of one family ('sem' or 'rw') and the session ops, merged by idempotency key. */
export function primitiveOps(raw: readonly HistoryOp[]): HistoryOp[] {
  return mergeAttempts(
    raw.filter(
      (o) =>
        o.kind.startsWith('sem.') ||
        o.kind.startsWith('rw.') ||
        o.kind.startsWith('session.') ||
        o.kind === 'prim.write',
    ),
  );
}

/** Session facts from merged ops (see the module comment). */
export function sessionFacts(ops: readonly HistoryOp[], drift: number): Map<string, SessionFacts> {
  const out = new Map<
    string,
    { ttlMs: number; live: number; cut: number; ended: number | null; ev: number | null }
  >();
  const get = (
    id: string,
  ): { ttlMs: number; live: number; cut: number; ended: number | null; ev: number | null } => {
    let f = out.get(id);
    if (f === undefined) {
      f = { ttlMs: 0, live: -Infinity, cut: Infinity, ended: null, ev: null };
      out.set(id, f);
    }
    return f;
  };
  for (const op of ops) {
    if (op.kind !== 'session.create') continue;
    const v = okValue(op.outcome);
    const id = str(v, 'sessionId');
    const ttl = num(v, 'ttlMs') ?? num(op.args, 'ttlMs');
    if (id === null || ttl === null) continue;
    const f = get(id);
    f.ttlMs = ttl;
    f.live = Math.max(f.live, op.invokeMs + ttl * (1 - drift));
  }
  for (const op of ops) {
    const id = str(op.args, 'sessionId');
    if (id === null || !op.kind.startsWith('session.')) continue;
    const f = out.get(id);
    if (f === undefined) continue;
    const effect = effectOf(op.outcome);
    if (op.kind === 'session.keepalive' && effect === 'ok')
      f.live = Math.max(
        f.live,
        op.invokeMs + (num(okValue(op.outcome), 'ttlMs') ?? f.ttlMs) * (1 - drift),
      );
    if (op.kind === 'session.end' && effect !== 'fail') f.cut = Math.min(f.cut, op.invokeMs);
    const proves =
      (op.kind === 'session.end' && effect === 'ok') || failCode(op.outcome) === 'not_found';
    if (
      proves &&
      effect !== 'maybe' &&
      op.completeMs !== null &&
      (f.ended === null || op.completeMs < f.ended)
    ) {
      f.ended = op.completeMs;
      f.ev = op.opId;
    }
  }
  const facts = new Map<string, SessionFacts>();
  for (const [id, f] of out)
    facts.set(id, {
      sessionId: id,
      ttlMs: f.ttlMs,
      liveUntilMs: Math.min(f.live, f.cut),
      endedByMs: f.ended,
      evidenceOpId: f.ev,
    });
  return facts;
}

const ENDED_CODES = new Set(['not_holder', 'lease_expired', 'not_found']);

/** The grants of `family` with their certain spans (see the module comment). */
export function grantSpans(
  ops: readonly HistoryOp[],
  family: 'sem' | 'rw',
  sessions: ReadonlyMap<string, SessionFacts>,
  drift: number,
): GrantSpan[] {
  const acquireKind = `${family}.acquire`;
  const renewKind = `${family}.renew`;
  const releaseKind = `${family}.release`;
  const firstSend = new Map<string, number>();
  for (const op of ops) {
    if (op.kind !== acquireKind) continue;
    const k = `${str(op.args, 'name')}\u0000${str(op.args, 'holder')}`;
    firstSend.set(k, Math.min(firstSend.get(k) ?? Infinity, op.invokeMs));
  }
  interface Acc {
    name: string;
    holder: string;
    token: number;
    mode: 'shared' | 'exclusive';
    session: string | null;
    ttlMs: number | null;
    limit: number | null;
    from: number;
    to: number;
    cut: number;
    ended: number | null;
    ids: number[];
  }
  const grants = new Map<string, Acc>();
  const keyOf = (name: string, holder: string, token: number): string =>
    `${name}\u0000${holder}\u0000${token}`;
  for (const op of ops) {
    if (op.kind !== acquireKind) continue;
    const v = okValue(op.outcome);
    const name = str(op.args, 'name');
    const holder = str(v, 'holder');
    const token = num(v, 'fencingToken');
    if (v === null || name === null || holder === null || token === null || op.completeMs === null)
      continue;
    const k = keyOf(name, holder, token);
    let g = grants.get(k);
    if (g === undefined) {
      const session = str(v, 'session') ?? str(op.args, 'session');
      g = {
        name,
        holder,
        token,
        // The answer is the truth: an exclusive grant's answer carries no mode.
        mode: str(v, 'mode') === 'shared' ? 'shared' : 'exclusive',
        session,
        ttlMs: session === null ? (num(v, 'ttlMs') ?? num(op.args, 'ttlMs')) : null,
        limit: num(v, 'limit'),
        from: Infinity,
        to: -Infinity,
        cut: Infinity,
        ended: null,
        ids: [],
      };
      grants.set(k, g);
    }
    live(g, op);
  }
  function live(g: Acc, op: HistoryOp): void {
    g.from = Math.min(g.from, op.completeMs!);
    g.to = Math.max(g.to, g.ttlMs === null ? op.invokeMs : op.invokeMs + g.ttlMs * (1 - drift));
    g.ids.push(op.opId);
  }
  for (const op of ops) {
    if (op.kind !== renewKind && op.kind !== releaseKind) continue;
    const name = str(op.args, 'name');
    const holder = str(op.args, 'holder');
    const token = num(op.args, 'fencingToken');
    if (name === null || holder === null || token === null) continue;
    const g = grants.get(keyOf(name, holder, token));
    if (g === undefined) continue;
    const effect = effectOf(op.outcome);
    if (op.kind === renewKind && effect === 'ok' && op.completeMs !== null) live(g, op);
    if (op.kind === releaseKind && effect !== 'fail') g.cut = Math.min(g.cut, op.invokeMs);
    const code = failCode(op.outcome);
    const proves =
      op.completeMs !== null &&
      ((op.kind === releaseKind && effect === 'ok') ||
        (effect === 'fail' && code !== null && ENDED_CODES.has(code)));
    if (proves) g.ended = Math.min(g.ended ?? Infinity, op.completeMs);
  }
  const out: GrantSpan[] = [];
  for (const g of grants.values()) {
    let to = g.to;
    let ended = g.ended;
    if (g.session !== null) {
      const s = sessions.get(g.session);
      to = Math.max(to, s?.liveUntilMs ?? -Infinity);
      if (s?.endedByMs !== null && s?.endedByMs !== undefined)
        ended = Math.min(ended ?? Infinity, s.endedByMs);
    }
    out.push({
      family,
      name: g.name,
      holder: g.holder,
      token: g.token,
      mode: g.mode,
      session: g.session,
      limit: g.limit,
      fromMs: g.from,
      toMs: Math.min(to, g.cut),
      firstSeenMs: g.from,
      issuedNotBeforeMs: firstSend.get(`${g.name}\u0000${g.holder}`) ?? -Infinity,
      endedByMs: ended,
      opIds: g.ids,
    });
  }
  return out;
}

/** The fence `{semaphore|lease, fencingToken}` of a `prim.write`, as `{family, name, token}`. */
export function writeFence(
  op: HistoryOp,
): { family: 'sem' | 'rw'; name: string; token: number } | null {
  const f = obj(op.args, 'fence');
  const token = num(f, 'fencingToken');
  if (token === null) return null;
  const sem = str(f, 'semaphore');
  if (sem !== null) return { family: 'sem', name: sem, token };
  const lease = str(f, 'lease');
  return lease === null ? null : { family: 'rw', name: lease, token };
}

/** Ok `prim.write`s sent after their grant was certainly over (a fenced write accepted too late). */
export function lateFencedWrites(
  ops: readonly HistoryOp[],
  spans: readonly GrantSpan[],
  family: 'sem' | 'rw',
): { op: HistoryOp; span: GrantSpan }[] {
  const byToken = new Map<string, GrantSpan[]>();
  for (const s of spans) {
    const k = `${s.name}\u0000${s.token}`;
    byToken.set(k, [...(byToken.get(k) ?? []), s]);
  }
  const out: { op: HistoryOp; span: GrantSpan }[] = [];
  for (const op of ops) {
    if (op.kind !== 'prim.write' || effectOf(op.outcome) !== 'ok') continue;
    const f = writeFence(op);
    if (f === null || f.family !== family) continue;
    // Late only when every grant known with that token was over (a shared token is its own violation).
    const list = byToken.get(`${f.name}\u0000${f.token}`) ?? [];
    const over = (s: GrantSpan): boolean => s.endedByMs !== null && op.invokeMs > s.endedByMs;
    if (list.length > 0 && list.every(over)) out.push({ op, span: list[0]! });
  }
  return out;
}

/** Grants of one name holding the same token under two holders. */
export function sharedTokens(spans: readonly GrantSpan[]): [GrantSpan, GrantSpan][] {
  const seen = new Map<string, GrantSpan>();
  const out: [GrantSpan, GrantSpan][] = [];
  for (const s of spans) {
    const k = `${s.name}\u0000${s.token}`;
    const other = seen.get(k);
    if (other === undefined) seen.set(k, s);
    else if (other.holder !== s.holder) out.push([other, s]);
  }
  return out;
}

/**
 * Ok acquires whose answer differs from the request in mode (absent = exclusive) or binding (the
 * session, absent = a ttl): an acquire by the current holder renews only a matching grant; any
 * other answer is 409 `grant_mismatch` (docs/primitives.md), never a grant of another kind.
 */
export function mismatchedGrants(ops: readonly HistoryOp[], family: 'sem' | 'rw'): HistoryOp[] {
  return ops.filter((op) => {
    if (op.kind !== `${family}.acquire`) return false;
    const v = okValue(op.outcome);
    if (v === null || num(v, 'fencingToken') === null) return false;
    const modeOf = (o: JsonObject | null): string => str(o, 'mode') ?? 'exclusive';
    const modeDiffers = family === 'rw' && modeOf(v) !== modeOf(op.args);
    return modeDiffers || str(v, 'session') !== str(op.args, 'session');
  });
}

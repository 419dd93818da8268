/**
 * A seeded reference simulation of a CORRECT Tenure server (leases, elections, KV, fencing) driven
 * by concurrent logical clients, producing histories with real-time intervals, lost responses and
 * late-applied requests. The checkers' tests use it to show the model is sound (every such history
 * passes) and that mutated histories are caught. Expiry happens at accept time + ttlMs plus a random
 * extra delay (a frozen, leaderless period), never earlier (docs/concepts.md). Leases also answer
 * operator revoke and holder history (docs/api.md): the sim's run time stands in for cluster time,
 * and an expired grant's `endedAtMs` is its (late) due time.
 */
import type { HistoryOp, JsonObject, OpKind, OpOutcome, Random } from '../types.js';

interface SimGrant {
  holder: string;
  token: number;
  ttlMs: number;
  expiresAt: number;
  grantedAt: number;
}
/** An ended lease grant as holder history shows it (docs/api.md Holder history). */
interface SimEnded {
  holder: string;
  fencingToken: number;
  grantedAtMs: number;
  endedAtMs: number;
  endReason: 'released' | 'expired' | 'revoked';
}

/** Ended grants kept per lease (docs/api.md: at least the last 16). */
const HISTORY_KEPT = 16;
interface SimCand {
  c: string;
  value: string | null;
  expiresAt: number;
  ttlMs: number;
}

/** Options of `simulateHistory`. */
export interface SimOptions {
  readonly random: Random;
  readonly processes: number;
  readonly opsPerProcess: number;
  /** Probability that a response is lost (outcome unknown; the request may apply late or never). */
  readonly lostProbability: number;
  /** Max extra expiry delay beyond ttl, ms (leaderless freeze). */
  readonly freezeMsMax: number;
}

interface Pending {
  at: number;
  seq: number;
  run: () => void;
}

/** A correct in-memory Tenure (one node, real-time expiry): `serve` answers one request at `now`. */
export interface ReferenceTenure {
  /** The answer to `kind` with recorded-style args (route params + body) at run time `nowMs`. */
  serve(kind: OpKind, args: JsonObject, nowMs: number): OpOutcome;
}

/**
 * Makes a reference server. Tokens and revisions grow by random steps (only increase is promised);
 * expiry happens at accept time + ttlMs + a random extra of up to `freezeMsMax` (never earlier).
 */
export function createReferenceTenure(random: Random, freezeMsMax: number): ReferenceTenure {
  const r = random;
  const leases = new Map<string, SimGrant>();
  const leaseNext = new Map<string, number>();
  const elections = new Map<string, { q: SimCand[]; token: number; next: number; rev: number }>();
  const kv = new Map<string, { value: number; revision: number }>();
  const ended = new Map<string, SimEnded[]>();
  let logIndex = 0;

  const endLease = (name: string, g: SimGrant, reason: SimEnded['endReason'], at: number): void => {
    leases.delete(name);
    const list = ended.get(name) ?? [];
    list.push({
      holder: g.holder,
      fencingToken: g.token,
      grantedAtMs: g.grantedAt,
      endedAtMs: at,
      endReason: reason,
    });
    if (list.length > HISTORY_KEPT) list.shift();
    ended.set(name, list);
  };
  const historyOf = (name: string, limit: number): JsonObject[] => {
    const g = leases.get(name);
    const live: JsonObject[] =
      g === undefined
        ? []
        : [
            {
              holder: g.holder,
              fencingToken: g.token,
              mode: 'exclusive',
              grantedAtMs: g.grantedAt,
              endedAtMs: null,
              endReason: null,
            },
          ];
    const done: JsonObject[] = (ended.get(name) ?? []).map((e) => ({ ...e, mode: 'exclusive' }));
    return [...live, ...done.reverse()].slice(0, limit);
  };

  const expire = (now: number): void => {
    for (const [name, g] of leases)
      if (g.expiresAt <= now) endLease(name, g, 'expired', g.expiresAt);
    for (const e of elections.values()) {
      const headBefore = e.q[0]?.c;
      e.q = e.q.filter((c) => c.expiresAt > now);
      if (e.q.length > 0 && e.q[0]!.c !== headBefore) {
        e.next += r.int(1, 2);
        e.token = e.next;
        e.rev++;
      }
    }
  };
  const newToken = (name: string): number => {
    const t = (leaseNext.get(name) ?? 0) + r.int(1, 3);
    leaseNext.set(name, t);
    return t;
  };
  const ttlExtra = (): number => r.int(0, freezeMsMax);
  const group = (g: string) => {
    let e = elections.get(g);
    if (e === undefined) {
      e = { q: [], token: 0, next: 0, rev: 0 };
      elections.set(g, e);
    }
    return e;
  };
  const leaderOf = (e: { q: SimCand[]; token: number }): JsonObject | null =>
    e.q[0] === undefined
      ? null
      : { candidate: e.q[0].c, value: e.q[0].value, fencingToken: e.token };
  const okv = (v: JsonObject): OpOutcome => ({ status: 'ok', httpStatus: 200, value: v });
  const err = (code: string, status = 409, value?: JsonObject): OpOutcome =>
    value === undefined
      ? { status: 'fail', httpStatus: status, code }
      : { status: 'fail', httpStatus: status, code, value };

  /** The server's deterministic answer to one request at time `now` (mutates state). */
  const serve = (kind: OpKind, a: JsonObject, now: number): OpOutcome => {
    expire(now);
    const name = a['name'] as string;
    switch (kind) {
      case 'lease.acquire': {
        const g = leases.get(name);
        const ttl = a['ttlMs'] as number;
        if (g === undefined) {
          const t = newToken(name);
          leases.set(name, {
            holder: a['holder'] as string,
            token: t,
            ttlMs: ttl,
            expiresAt: now + ttl + ttlExtra(),
            grantedAt: now,
          });
          return okv({ name, holder: a['holder'] as string, fencingToken: t, ttlMs: ttl });
        }
        if (g.holder === a['holder']) {
          g.ttlMs = ttl;
          g.expiresAt = now + ttl + ttlExtra();
          return okv({ name, holder: g.holder, fencingToken: g.token, ttlMs: ttl });
        }
        return err('held', 409, { error: { code: 'held', holder: g.holder } });
      }
      case 'lease.renew':
      case 'lease.release': {
        const g = leases.get(name);
        if (g === undefined || g.holder !== a['holder'] || g.token !== a['fencingToken'])
          return err(r.next() < 0.5 ? 'not_holder' : 'lease_expired');
        if (kind === 'lease.release') {
          endLease(name, g, 'released', now);
          return okv({ name, released: true });
        }
        g.expiresAt = now + g.ttlMs + ttlExtra();
        return okv({ name, holder: g.holder, fencingToken: g.token, ttlMs: g.ttlMs });
      }
      case 'lease.get': {
        const g = leases.get(name);
        return g === undefined
          ? err('not_found', 404)
          : okv({
              name,
              holder: g.holder,
              fencingToken: g.token,
              ttlMs: g.ttlMs,
              remainingMs: Math.max(0, Math.round(g.expiresAt - now)),
            });
      }
      case 'lease.revoke': {
        const g = leases.get(name);
        const t = a['fencingToken'];
        if (typeof t === 'number' && g?.token !== t) return err('not_holder');
        if (g === undefined) return okv({ name, revoked: [] });
        endLease(name, g, 'revoked', now);
        return okv({ name, revoked: [g.token] });
      }
      case 'lease.history': {
        const limit = typeof a['limit'] === 'number' ? a['limit'] : 20;
        return okv({ name, grants: historyOf(name, limit) });
      }
      case 'election.campaign':
      case 'election.renew': {
        const e = group(a['group'] as string);
        const c = a['candidate'] as string;
        const x = e.q.find((y) => y.c === c);
        if (kind === 'election.renew' && x === undefined) return err('not_holder');
        if (x !== undefined) x.expiresAt = now + x.ttlMs + ttlExtra();
        else {
          const ttl = a['ttlMs'] as number;
          e.q.push({
            c,
            value: (a['value'] ?? null) as string | null,
            ttlMs: ttl,
            expiresAt: now + ttl + ttlExtra(),
          });
          if (e.q.length === 1) {
            e.next += r.int(1, 2);
            e.token = e.next;
            e.rev++;
          }
        }
        const elected = e.q[0]!.c === c;
        return okv({
          group: a['group'] as string,
          candidate: c,
          elected,
          ...(elected ? { fencingToken: e.token } : {}),
          leader: leaderOf(e),
        });
      }
      case 'election.resign': {
        const e = group(a['group'] as string);
        const idx = e.q.findIndex((y) => y.c === a['candidate']);
        if (idx < 0) return err('not_holder');
        e.q.splice(idx, 1);
        if (idx === 0 && e.q.length > 0) {
          e.next += r.int(1, 2);
          e.token = e.next;
        }
        e.rev++;
        return okv({ group: a['group'] as string, resigned: true });
      }
      case 'election.proclaim': {
        const e = group(a['group'] as string);
        if (e.q[0]?.c !== a['candidate'] || e.token !== a['fencingToken']) return err('not_holder');
        e.q[0]!.value = a['value'] as string;
        e.rev++;
        return okv({ group: a['group'] as string, leader: leaderOf(e) });
      }
      case 'election.get': {
        const e = group(a['group'] as string);
        return okv({
          group: a['group'] as string,
          leader: leaderOf(e),
          candidates: e.q.map((y) => ({ candidate: y.c, value: y.value })),
          revision: e.rev,
        });
      }
      case 'kv.put': {
        const key = a['key'] as string;
        const cur = kv.get(key);
        const fence = a['fence'] as JsonObject | undefined;
        if (fence !== undefined) {
          const current =
            typeof fence['lease'] === 'string'
              ? leases.get(fence['lease'])?.token
              : (() => {
                  const e = group(fence['election'] as string);
                  return e.q.length > 0 ? e.token : undefined;
                })();
          if (current === undefined || current !== fence['fencingToken']) return err('stale_token');
        }
        if (a['ifRevision'] !== undefined) {
          const want = a['ifRevision'] as number;
          if (want === 0 ? cur !== undefined : cur?.revision !== want)
            return err('revision_mismatch');
        }
        logIndex += r.int(1, 3);
        kv.set(key, { value: a['value'] as number, revision: logIndex });
        return okv({ key, revision: logIndex });
      }
      case 'kv.get': {
        const key = a['key'] as string;
        const cur = kv.get(key);
        return cur === undefined
          ? err('not_found', 404)
          : okv({ key, value: cur.value, revision: cur.revision });
      }
      case 'fence.check': {
        let current: number | null;
        if (typeof a['lease'] === 'string') current = leases.get(a['lease'])?.token ?? null;
        else {
          const e = group(a['election'] as string);
          current = e.q.length > 0 ? e.token : null;
        }
        return okv({ valid: current !== null && current === a['fencingToken'], current });
      }
      default:
        throw new Error(`sim: kind ${kind}`);
    }
  };
  return { serve };
}

/** Runs the simulation; returns ops ordered by invoke time. */
export function simulateHistory(o: SimOptions): HistoryOp[] {
  const r = o.random;
  const { serve } = createReferenceTenure(o.random, o.freezeMsMax);
  const ops: HistoryOp[] = [];
  const queue: Pending[] = [];
  let seq = 0;
  const at = (t: number, run: () => void): void => {
    queue.push({ at: t, seq: seq++, run });
  };
  let opId = 0;
  const procs = Array.from({ length: o.processes }, (_, i) => ({
    id: `p${i}`,
    holder: `H${i}`,
    token: null as number | null,
    left: o.opsPerProcess,
    lastRev: 0,
  }));
  const next = (p: (typeof procs)[number], now: number): void => {
    if (p.left-- <= 0) return;
    const choice = r.int(0, 13);
    const L = r.pick(['L1', 'L2']);
    let kind: OpKind;
    let args: JsonObject;
    switch (choice) {
      case 0:
      case 1:
        kind = 'lease.acquire';
        args = { name: L, holder: p.holder, ttlMs: r.pick([300, 800]) };
        break;
      case 2:
        kind = 'lease.renew';
        args = { name: L, holder: p.holder, fencingToken: p.token ?? 1 };
        break;
      case 3:
        kind = 'lease.release';
        args = { name: L, holder: p.holder, fencingToken: p.token ?? 1 };
        break;
      case 4:
        kind = 'lease.get';
        args = { name: L };
        break;
      case 5:
        kind = 'election.campaign';
        args = {
          group: 'G',
          candidate: p.holder,
          ttlMs: r.pick([300, 900]),
          value: `v${r.int(0, 2)}`,
        };
        break;
      case 6:
        kind = r.pick(['election.resign', 'election.renew'] as const);
        args = { group: 'G', candidate: p.holder };
        break;
      case 7:
        kind = 'election.get';
        args = { group: 'G' };
        break;
      case 8:
        kind = 'election.proclaim';
        args = {
          group: 'G',
          candidate: p.holder,
          fencingToken: p.token ?? 1,
          value: `w${r.int(0, 2)}`,
        };
        break;
      case 9:
        kind = 'kv.put';
        args =
          r.next() < 0.5
            ? { key: 'k', value: r.int(0, 5), ifRevision: p.lastRev }
            : { key: 'k', value: r.int(0, 5) };
        break;
      case 10:
        kind = 'kv.put';
        args = {
          key: `f-${L}`,
          value: r.int(0, 5),
          fence: { lease: L, fencingToken: p.token ?? 1 },
        };
        break;
      case 11:
        kind = 'kv.get';
        args = { key: r.pick(['k', 'f-L1', 'f-L2']) };
        break;
      case 12:
        // Operator revoke: of every live grant, of the token this client last saw, or of a stale one.
        kind = 'lease.revoke';
        args =
          r.next() < 0.4
            ? { name: L, reason: 'sim' }
            : { name: L, fencingToken: r.next() < 0.7 ? (p.token ?? 1) : r.int(1, 6) };
        break;
      default:
        kind = 'lease.history';
        args = { name: L, limit: r.pick([3, 20]) };
        break;
    }
    const id = ++opId;
    const invokeMs = now;
    const latency = r.int(1, 60);
    const lost = r.next() < o.lostProbability;
    const applyAt = lost ? invokeMs + r.int(0, 400) : invokeMs + r.int(0, latency);
    const completeMs = lost ? invokeMs + 100 : applyAt + r.int(0, 30);
    const neverApplied = lost && r.next() < 0.4;
    let outcome: OpOutcome = { status: 'unknown', reason: 'lost response' };
    const record = (): void => {
      ops.push({ opId: id, process: p.id, node: 'n1', kind, args, invokeMs, completeMs, outcome });
      at(completeMs + r.int(0, 50), () => next(p, curTime));
    };
    if (!neverApplied) {
      at(applyAt, () => {
        const out = serve(kind, args, curTime);
        if (!lost) {
          outcome = out;
          const v = out.status === 'ok' ? (out.value as JsonObject) : null;
          if (v !== null && typeof v['fencingToken'] === 'number') p.token = v['fencingToken'];
          if (v !== null && typeof v['revision'] === 'number' && kind.startsWith('kv.'))
            p.lastRev = v['revision'];
        }
      });
    }
    at(completeMs, record);
  };
  let curTime = 0;
  for (const p of procs) at(r.int(0, 20), () => next(p, curTime));
  while (queue.length > 0) {
    queue.sort((a, b) => a.at - b.at || a.seq - b.seq);
    const ev = queue.shift()!;
    curTime = ev.at;
    ev.run();
  }
  return ops.sort((a, b) => a.invokeMs - b.invokeMs || a.opId - b.opId);
}

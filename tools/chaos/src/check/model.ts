/**
 * A sequential, nondeterministic model of Tenure's state machine (docs/concepts.md, §3) for the
 * linearizability checker: leases, elections, KV and fence checks over the resources of one
 * partition. `stepModel` returns every state the op could leave behind if it took effect at this
 * point of a linearization; an empty list means "cannot be linearized here".
 *
 * Approximations (each keeps the model SOUND: it allows at least everything a correct server may do,
 * so a failed search is a real violation; the price is that some real bugs go unseen):
 * - Time. The model never sees cluster time. Expiry of a grant (lease or candidacy) is a
 *   nondeterministic event that may be inserted before an op X only if X could have taken effect at
 *   or after `base + ttlMs × (1 − maxDriftRatio)`, i.e. `complete(X) ≥ that` (∞ for unknown ops),
 *   where `base` is a lower bound on the real time the grant/renew was accepted: the largest invoke
 *   time among the ops linearized up to and including it (linearization points are increasing and
 *   each lies after its invoke). Expiry is never REQUIRED (leases freeze without a leader, §1.5);
 *   the upper bound is the lease-timing checker's business.
 * - Tokens and revisions are only known to increase (docs/concepts.md, §3), not by how much. A grant whose
 *   response is unknown gets an unknown token, bound later by the first op that shows it; a new
 *   token must be ≥ `next` (one more than the last token the model knew) and > the current one.
 * - Lease mode and session binding are not modelled: a 409 `grant_mismatch` is allowed whenever the
 *   acquirer holds the name (the shared-lock checker compares each answer with its request).
 * - Waits (waitMs > 0) are modelled as an acquire whose linearization point is the grant (or the
 *   409 at the deadline); FIFO order among waiters is not checked.
 * - lockDelayMs: after the expiry of a grant that asked for it, acquires may be granted or refused
 *   (`held`, holder null) until the next grant — the end of the delay is not modelled.
 * - maxHoldMs is not modelled (the workload does not use it); ttlMs of a grant is taken from the
 *   response, or from the request when the response is unknown.
 * - Elections: only the leader (head of the queue) and its value/token are checked; the candidates
 *   list in GET answers is not. Re-campaigning by a live candidate may or may not update its value;
 *   its ttl becomes the shorter of the old and new one.
 * - KV: a delete of an absent key may answer 200 or 404; a put's revision must exceed the key's
 *   current revision (global revisions are not compared across keys/partitions).
 * - Operator revoke (docs/api.md) ends the live grant like an expiry, at once and whatever the time:
 *   the lock-delay of the revoked grant applies as after an expiry. An answer `revoked: [T]` binds
 *   the current token to T; `revoked: []` says nothing was live; a 409 `not_holder` to a revoke of
 *   token T is refused only when the model KNOWS the live grant carries T. A revoke of an exclusive
 *   lease answering more than one token is a violation (these names are never shared).
 * - Holder history (docs/api.md) is a linearizable read of the current grant only: its live entry
 *   (`endReason: null`, newest first) is checked like a GET; a list with no live entry says the
 *   lease is free. The ended entries are the holder-history checker's business (holder-history.ts).
 * - Any 4xx other than the conflict codes of docs/api.md (e.g. 400, 429) is "no effect, no information".
 * - The initial state is empty: the workload uses run-unique resource names.
 */
import type { HistoryOp, JsonObject } from '../types.js';
import { canonicalJson, effectOf, num, obj, okValue, str, type Effect } from './history.js';

/** A lease grant in the model (`base`: lower bound of the run time its acquire/renew was accepted, ms). */
interface GrantS {
  readonly h: string;
  readonly ttl: number;
  readonly base: number;
  readonly ld: boolean;
}
/** Lease resource: current grant (or null = free), its token if known, the least possible next token. */
interface LeaseRes {
  readonly t: 'L';
  readonly g: GrantS | null;
  readonly tok: number | null;
  readonly next: number;
  readonly delayed: boolean;
}
/** One live candidacy (`v`: canonical JSON of its value). */
interface Cand {
  readonly c: string;
  readonly v: string;
  readonly ttl: number;
  readonly base: number;
}
/** Election group: candidacy queue (head = leader), leader token if known, least possible next token. */
interface ElecRes {
  readonly t: 'E';
  readonly q: readonly Cand[];
  readonly tok: number | null;
  readonly next: number;
}
/** KV key: canonical value (null = absent), revision if known, least possible next revision. */
interface KvRes {
  readonly t: 'K';
  readonly v: string | null;
  readonly rev: number | null;
  readonly next: number;
}
type Res = LeaseRes | ElecRes | KvRes;

/** An immutable model state; `key` identifies it exactly (for the search's memo). */
export interface ModelState {
  readonly res: Readonly<Record<string, Res>>;
  readonly key: string;
}

/** One possible successor: the state, and whether the op took effect (false = an unknown op that never did). */
export interface Alt {
  readonly state: ModelState;
  readonly effect: boolean;
}

/** An op prepared for the model. `completeMs` is ∞ when the op may take effect after its response. */
export interface ModelOp {
  readonly op: HistoryOp;
  readonly effect: Effect;
  readonly code: string | null;
  readonly value: JsonObject | null;
  readonly invokeMs: number;
  readonly completeMs: number;
  readonly resources: readonly string[];
}

/** Model parameters: the docs/concepts.md drift bound. */
export interface ModelOptions {
  readonly maxDriftRatio: number;
}

/** Error codes that mean "the grant you named is not the current live one" (docs/api.md details). */
const NOT_CURRENT = new Set(['not_holder', 'lease_expired', 'not_found']);

/** Kinds the linearizability checker models (long-polls and fenced-store ops are left out). */
export const MODELLED_KINDS: ReadonlySet<string> = new Set([
  'lease.acquire',
  'lease.renew',
  'lease.release',
  'lease.get',
  'lease.revoke',
  'lease.history',
  'election.campaign',
  'election.renew',
  'election.resign',
  'election.proclaim',
  'election.get',
  'kv.put',
  'kv.get',
  'kv.delete',
  'fence.check',
]);

/** Resource key of a fence reference `{lease}` / `{election}` in args, else null. */
function fenceResource(fence: JsonObject | null): string | null {
  if (fence === null) return null;
  const l = str(fence, 'lease');
  if (l !== null) return `lease:${l}`;
  const e = str(fence, 'election');
  return e !== null ? `election:${e}` : null;
}

/**
 * The resources an op touches (`lease:N`, `election:G`, `kv:K`), or [] when the op is not modelled.
 * Lease ops name the lease in `args.name`, election ops in `args.group`, KV in `args.key`;
 * fenced writes add their fence resource (`args.fence`), fence checks name theirs in args.
 */
export function opResources(op: HistoryOp): string[] {
  if (!MODELLED_KINDS.has(op.kind)) return [];
  const a = op.args;
  if (op.kind.startsWith('lease.')) {
    const n = str(a, 'name');
    return n === null ? [] : [`lease:${n}`];
  }
  if (op.kind.startsWith('election.')) {
    const g = str(a, 'group');
    return g === null ? [] : [`election:${g}`];
  }
  if (op.kind === 'fence.check') {
    const r = fenceResource(a);
    return r === null ? [] : [r];
  }
  const k = str(a, 'key');
  if (k === null) return [];
  const f = fenceResource(obj(a, 'fence'));
  return f === null ? [`kv:${k}`] : [`kv:${k}`, f];
}

/** Prepares an op for the model, or null when it carries no information (unknown/failed reads, 400s). */
export function prepareOp(op: HistoryOp): ModelOp | null {
  const resources = opResources(op);
  if (resources.length === 0) return null;
  const effect = effectOf(op.outcome);
  const isRead =
    op.kind.endsWith('.get') || op.kind === 'fence.check' || op.kind === 'lease.history';
  if (isRead && effect === 'maybe') return null;
  const code = op.outcome.status === 'fail' ? op.outcome.code : null;
  if (effect === 'fail' && code !== null && !isInformativeFailure(op.kind, code)) return null;
  return {
    op,
    effect,
    code,
    value: okValue(op.outcome),
    invokeMs: op.invokeMs,
    completeMs: effect === 'maybe' || op.completeMs === null ? Infinity : op.completeMs,
    resources,
  };
}

function isInformativeFailure(kind: string, code: string): boolean {
  switch (kind) {
    case 'lease.acquire':
      return code === 'held' || code === 'grant_mismatch';
    case 'lease.renew':
    case 'lease.release':
    case 'lease.revoke':
    case 'election.renew':
    case 'election.resign':
    case 'election.proclaim':
      return NOT_CURRENT.has(code);
    case 'lease.get':
    case 'kv.get':
      return code === 'not_found';
    case 'kv.put':
    case 'kv.delete':
      return code === 'revision_mismatch' || code === 'stale_token' || code === 'not_found';
    default:
      return false;
  }
}

function makeState(res: Record<string, Res>): ModelState {
  const names = Object.keys(res).sort();
  return { res, key: names.map((n) => `${n}=${JSON.stringify(res[n])}`).join('|') };
}

/** The empty initial state over `resources`. */
export function initialState(resources: readonly string[]): ModelState {
  const res: Record<string, Res> = {};
  for (const r of resources) {
    if (r.startsWith('lease:')) res[r] = { t: 'L', g: null, tok: null, next: 0, delayed: false };
    else if (r.startsWith('election:')) res[r] = { t: 'E', q: [], tok: null, next: 0 };
    else res[r] = { t: 'K', v: null, rev: null, next: 0 };
  }
  return makeState(res);
}

/** Binds/compares an observed token against (tok, next): the new (tok, next) or null if impossible. */
function observe(
  tok: number | null,
  next: number,
  t: number | null,
): { tok: number; next: number } | null {
  if (t === null) return null;
  if (tok !== null) return t === tok ? { tok, next } : null;
  return t >= next ? { tok: t, next: t + 1 } : null;
}

/** A brand-new token `t` (null = unknown) replacing (tok, next); null if impossible (docs/concepts.md). */
function issue(
  tok: number | null,
  next: number,
  t: number | null,
): { tok: number | null; next: number } | null {
  if (t === null) return { tok: null, next };
  if (t < next || (tok !== null && t <= tok)) return null;
  return { tok: t, next: t + 1 };
}

/**
 * Every state `op` may lead to from `state` when linearized now. `nowLoMs` is the lower bound on the
 * real time of this linearization point (max invoke over the linearized prefix, this op included).
 * Unknown ops also get the "never took effect" alternative (`effect: false`), last.
 */
export function stepModel(
  state: ModelState,
  m: ModelOp,
  nowLoMs: number,
  opts: ModelOptions,
): Alt[] {
  const out = new Map<string, Alt>();
  for (const pre of expiryOptions(state.res, m, opts)) {
    for (const res of applyOp(pre, m, nowLoMs)) {
      const s = makeState(res);
      if (!out.has(s.key)) out.set(s.key, { state: s, effect: true });
    }
  }
  // An unknown op may also never take effect: offered last as a no-op (`effect: false`), which lets
  // the search settle it at once; the search may also leave it unlinearized. An effect that leaves
  // the state unchanged is that no-op with a tighter time bound, so it is dropped.
  if (m.effect === 'maybe') {
    out.delete(state.key);
    out.set(`noop:${state.key}`, { state, effect: false });
  }
  return [...out.values()];
}

type ResMap = Record<string, Res>;

function eligible(base: number, ttlMs: number, m: ModelOp, opts: ModelOptions): boolean {
  return m.completeMs >= base + ttlMs * (1 - opts.maxDriftRatio);
}

/** Resource maps with every allowed combination of expiries before `m` on its resources. */
function expiryOptions(res: Readonly<ResMap>, m: ModelOp, opts: ModelOptions): ResMap[] {
  let acc: ResMap[] = [{ ...res }];
  for (const r of m.resources) {
    const cur = res[r]!;
    const variants: Res[] =
      cur.t === 'L'
        ? leaseExpiries(cur, m, opts)
        : cur.t === 'E'
          ? electionExpiries(cur, m, opts)
          : [cur];
    if (variants.length === 1) continue;
    const next: ResMap[] = [];
    for (const a of acc) for (const v of variants) next.push({ ...a, [r]: v });
    acc = next;
  }
  return acc;
}

function leaseExpiries(l: LeaseRes, m: ModelOp, opts: ModelOptions): LeaseRes[] {
  if (l.g === null || !eligible(l.g.base, l.g.ttl, m, opts)) return [l];
  return [l, { t: 'L', g: null, tok: null, next: l.next, delayed: l.g.ld }];
}

/** Candidate named by an election op (null for get/fence). */
function opCandidate(m: ModelOp): string | null {
  return str(m.op.args, 'candidate');
}

/**
 * Expiry choices for a group before `m`: the op's own candidacy may lapse (if eligible), and the head
 * may lapse repeatedly (each time the next candidate is promoted). Other candidacies are left for
 * later ops: their lapse is only observable when they reach the head or act themselves.
 */
function electionExpiries(e: ElecRes, m: ModelOp, opts: ModelOptions): ElecRes[] {
  const out: ElecRes[] = [];
  const c = opCandidate(m);
  const starts: ElecRes[] = [e];
  const idx = c === null ? -1 : e.q.findIndex((x) => x.c === c);
  if (idx > 0 && eligible(e.q[idx]!.base, e.q[idx]!.ttl, m, opts)) {
    starts.push({ ...e, q: e.q.filter((_, i) => i !== idx) });
  }
  for (const s of starts) {
    out.push(s);
    let q = s.q;
    while (q.length > 0 && eligible(q[0]!.base, q[0]!.ttl, m, opts)) {
      q = q.slice(1);
      out.push(promoted(e, q));
    }
  }
  return out;
}

/** Group state after the head changed to `q[0]` (new unknown token) or the queue emptied. */
function promoted(e: ElecRes, q: readonly Cand[]): ElecRes {
  return { t: 'E', q, tok: null, next: e.tok !== null ? Math.max(e.next, e.tok + 1) : e.next };
}

function applyOp(res: ResMap, m: ModelOp, nowLo: number): ResMap[] {
  switch (m.op.kind) {
    case 'lease.acquire':
      return leaseAcquire(res, m, nowLo);
    case 'lease.renew':
      return leaseRenewRelease(res, m, nowLo, false);
    case 'lease.release':
      return leaseRenewRelease(res, m, nowLo, true);
    case 'lease.get':
      return leaseGet(res, m);
    case 'lease.revoke':
      return leaseRevoke(res, m);
    case 'lease.history':
      return leaseHistory(res, m);
    case 'fence.check':
      return fenceCheck(res, m);
    case 'election.campaign':
      return electionCampaign(res, m, nowLo);
    case 'election.renew':
      return electionRenew(res, m, nowLo);
    case 'election.resign':
      return electionResign(res, m);
    case 'election.proclaim':
      return electionProclaim(res, m);
    case 'election.get':
      return electionGet(res, m);
    case 'kv.put':
    case 'kv.delete':
      return kvWrite(res, m);
    case 'kv.get':
      return kvGet(res, m);
    default:
      return [];
  }
}

function with1(res: ResMap, r: string, v: Res): ResMap {
  return { ...res, [r]: v };
}

/** The holder named in a 409 `held` body (`value.holder` or `value.error.holder`), undefined if absent. */
function heldHolder(m: ModelOp): string | null | undefined {
  const v = m.op.outcome.status === 'fail' ? m.op.outcome.value : undefined;
  if (v === undefined || v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const inner = obj(v, 'error') ?? v;
  const h = inner['holder'];
  return typeof h === 'string' ? h : h === null ? null : undefined;
}

function leaseAcquire(res: ResMap, m: ModelOp, nowLo: number): ResMap[] {
  const r = m.resources[0]!;
  const l = res[r] as LeaseRes;
  const h = str(m.op.args, 'holder') ?? '';
  const ttlArg = num(m.op.args, 'ttlMs') ?? 0;
  const ld = (num(m.op.args, 'lockDelayMs') ?? 0) > 0;
  if (m.effect === 'fail' && m.code === 'grant_mismatch')
    // The holder holds it in another mode or binding (mode and binding are not modelled).
    return l.g !== null && l.g.h === h ? [res] : [];
  if (m.effect === 'fail') {
    // 409 held: someone else holds it, or lock-delay (holder null).
    const named = heldHolder(m);
    if (l.g !== null && l.g.h !== h && (named === undefined || named === l.g.h)) return [res];
    if (l.g === null && l.delayed && (named === undefined || named === null)) return [res];
    return [];
  }
  const v = m.value;
  if (l.g === null) {
    if (v !== null && str(v, 'holder') !== h) return [];
    const t = issue(l.tok, l.next, v === null ? null : num(v, 'fencingToken'));
    if (t === null || (v !== null && t.tok === null)) return [];
    const ttl = (v === null ? null : num(v, 'ttlMs')) ?? ttlArg;
    return [
      with1(res, r, {
        t: 'L',
        g: { h, ttl, base: nowLo, ld },
        tok: t.tok,
        next: t.next,
        delayed: false,
      }),
    ];
  }
  if (l.g.h === h) {
    // Re-acquire by the holder in the same mode and binding renews and returns the same token
    // (docs/primitives.md); another mode or binding is 409 grant_mismatch (above).
    let tok = l.tok;
    let next = l.next;
    if (v !== null) {
      const o = observe(l.tok, l.next, num(v, 'fencingToken'));
      if (o === null || str(v, 'holder') !== h) return [];
      tok = o.tok;
      next = o.next;
    }
    const ttl = (v === null ? null : num(v, 'ttlMs')) ?? ttlArg;
    return [with1(res, r, { ...l, g: { ...l.g, ttl, base: nowLo }, tok, next })];
  }
  return m.effect === 'ok' ? [] : [res];
}

function leaseRenewRelease(res: ResMap, m: ModelOp, nowLo: number, release: boolean): ResMap[] {
  const r = m.resources[0]!;
  const l = res[r] as LeaseRes;
  const h = str(m.op.args, 'holder') ?? '';
  const t = num(m.op.args, 'fencingToken');
  const bound = l.g !== null && l.g.h === h ? observe(l.tok, l.next, t) : null;
  if (m.effect === 'fail') {
    // Refused: the named grant is not the current live one. With an unknown current token a
    // mismatch is possible even for the right holder, so only a KNOWN match forbids the refusal.
    const knownMatch = l.g !== null && l.g.h === h && l.tok !== null && l.tok === t;
    return knownMatch ? [] : [res];
  }
  if (bound === null || l.g === null) return m.effect === 'ok' ? [] : [res];
  if (release)
    return [
      with1(res, r, {
        t: 'L',
        g: null,
        tok: null,
        next: Math.max(bound.next, l.next),
        delayed: false,
      }),
    ];
  const v = m.value;
  if (v !== null && num(v, 'fencingToken') !== null && num(v, 'fencingToken') !== bound.tok)
    return [];
  const ttl = (v === null ? null : num(v, 'ttlMs')) ?? l.g.ttl;
  return [
    with1(res, r, { ...l, g: { ...l.g, ttl, base: nowLo }, tok: bound.tok, next: bound.next }),
  ];
}

function leaseGet(res: ResMap, m: ModelOp): ResMap[] {
  const r = m.resources[0]!;
  const l = res[r] as LeaseRes;
  if (m.effect === 'fail') return l.g === null ? [res] : [];
  const v = m.value;
  if (l.g === null || v === null || str(v, 'holder') !== l.g.h) return [];
  const o = observe(l.tok, l.next, num(v, 'fencingToken'));
  return o === null ? [] : [with1(res, r, { ...l, tok: o.tok, next: o.next })];
}

/** The `revoked` token list of an answer, [] when absent, null when malformed. */
function revokedTokens(v: JsonObject): number[] | null {
  const list = v['revoked'];
  if (!Array.isArray(list)) return null;
  return list.every((x) => typeof x === 'number') ? (list as number[]) : null;
}

/**
 * Operator revoke (docs/api.md): with `fencingToken` T it ends the live grant carrying T (409
 * `not_holder` when none does), without it every live grant; the lock-delay applies as after an
 * expiry. Answers `revoked: [tokens]`.
 */
function leaseRevoke(res: ResMap, m: ModelOp): ResMap[] {
  const r = m.resources[0]!;
  const l = res[r] as LeaseRes;
  const t = num(m.op.args, 'fencingToken');
  if (m.effect === 'fail') {
    if (t === null) return [];
    const knownMatch = l.g !== null && l.tok !== null && l.tok === t;
    return knownMatch ? [] : [res];
  }
  const shown = m.value === null ? null : revokedTokens(m.value);
  if (m.value !== null && (shown === null || shown.length > 1)) return [];
  if (t !== null && shown !== null && shown.length === 1 && shown[0] !== t) return [];
  if (l.g === null) {
    // Nothing live: an acknowledged revoke says so (`revoked: []`), and only without a token.
    if (m.effect === 'ok') return t === null && shown!.length === 0 ? [res] : [];
    return [res];
  }
  if (shown !== null && shown.length === 0) return [];
  const want = t ?? shown?.[0] ?? null;
  const o = want === null ? { tok: l.tok, next: l.next } : observe(l.tok, l.next, want);
  if (o === null) return m.effect === 'ok' ? [] : [res];
  return [with1(res, r, { t: 'L', g: null, tok: null, next: o.next, delayed: l.g.ld })];
}

/** Holder history as a read of the current grant: its live entry, or none when free. */
function leaseHistory(res: ResMap, m: ModelOp): ResMap[] {
  const r = m.resources[0]!;
  const l = res[r] as LeaseRes;
  const v = m.value;
  if (v === null) return [res];
  const grants = v['grants'];
  if (!Array.isArray(grants)) return [];
  const live = grants.filter(
    (e) => e !== null && typeof e === 'object' && !Array.isArray(e) && e['endReason'] === null,
  ) as JsonObject[];
  if (live.length === 0) return l.g === null ? [res] : [];
  if (live.length > 1 || l.g === null || str(live[0], 'holder') !== l.g.h) return [];
  const o = observe(l.tok, l.next, num(live[0], 'fencingToken'));
  return o === null ? [] : [with1(res, r, { ...l, tok: o.tok, next: o.next })];
}

/** Current live token holder of a resource for fence checks / fenced writes: 'none' | bound result. */
function bindCurrent(res: ResMap, r: string, t: number | null): { res: ResMap } | 'none' | null {
  const x = res[r]!;
  if (x.t === 'L') {
    if (x.g === null) return 'none';
    const o = observe(x.tok, x.next, t);
    return o === null ? null : { res: with1(res, r, { ...x, tok: o.tok, next: o.next }) };
  }
  if (x.t === 'E') {
    if (x.q.length === 0) return 'none';
    const o = observe(x.tok, x.next, t);
    return o === null ? null : { res: with1(res, r, { ...x, tok: o.tok, next: o.next }) };
  }
  return null;
}

function knownToken(res: ResMap, r: string): number | null | 'none' {
  const x = res[r]!;
  if (x.t === 'L') return x.g === null ? 'none' : x.tok;
  if (x.t === 'E') return x.q.length === 0 ? 'none' : x.tok;
  return null;
}

function fenceCheck(res: ResMap, m: ModelOp): ResMap[] {
  const r = m.resources[0]!;
  const v = m.value;
  if (v === null) return [res];
  const current = v['current'];
  const t = num(m.op.args, 'fencingToken');
  if (current === null) {
    return knownToken(res, r) === 'none' && v['valid'] !== true ? [res] : [];
  }
  if (typeof current !== 'number') return [];
  if ((v['valid'] === true) !== (current === t)) return [];
  const b = bindCurrent(res, r, current);
  return b === null || b === 'none' ? [] : [b.res];
}

function campaignValue(m: ModelOp): string {
  return canonicalJson(m.op.args['value'] ?? null);
}

/** Checks a campaign/renew answer `{elected, fencingToken?, leader}` against group `e`; binds tokens. */
function checkElectionAnswer(e: ElecRes, m: ModelOp, c: string): ElecRes | null {
  const v = m.value;
  if (v === null) return e;
  const head = e.q[0];
  if (head === undefined) return null;
  let tok = e.tok;
  let next = e.next;
  const elected = v['elected'];
  if (typeof elected === 'boolean' && elected !== (head.c === c)) return null;
  if (elected === true && num(v, 'fencingToken') !== null) {
    const o = observe(tok, next, num(v, 'fencingToken'));
    if (o === null) return null;
    tok = o.tok;
    next = o.next;
  }
  const leader = obj(v, 'leader');
  if (leader !== null) {
    if (str(leader, 'candidate') !== head.c) return null;
    if ('value' in leader && canonicalJson(leader['value']) !== head.v) return null;
    if (num(leader, 'fencingToken') !== null) {
      const o = observe(tok, next, num(leader, 'fencingToken'));
      if (o === null) return null;
      tok = o.tok;
      next = o.next;
    }
  } else if (v['leader'] === null) return null;
  return { ...e, tok, next };
}

function electionCampaign(res: ResMap, m: ModelOp, nowLo: number): ResMap[] {
  const r = m.resources[0]!;
  const e = res[r] as ElecRes;
  const c = str(m.op.args, 'candidate') ?? '';
  const ttl = num(m.op.args, 'ttlMs') ?? 0;
  const value = campaignValue(m);
  if (m.effect === 'fail') return [res];
  const idx = e.q.findIndex((x) => x.c === c);
  const candidates: ElecRes[] = [];
  if (idx < 0) {
    const q = [...e.q, { c, v: value, ttl, base: nowLo }];
    if (e.q.length === 0) {
      const v = m.value;
      const t =
        v !== null && v['elected'] === true
          ? (num(v, 'fencingToken') ?? num(obj(v, 'leader'), 'fencingToken'))
          : null;
      const iss = issue(e.tok, e.next, t);
      if (iss === null) return [];
      candidates.push({ t: 'E', q, tok: iss.tok, next: iss.next });
    } else {
      candidates.push({ ...e, q });
    }
  } else {
    // Re-campaign by a live candidate: SPEC leaves open whether it updates value and ttlMs, so
    // both values are allowed and the shorter ttl is kept (earlier expiry = more permissive).
    const old = e.q[idx]!;
    for (const v of new Set([old.v, value])) {
      candidates.push({
        ...e,
        q: e.q.map((x, i) => (i === idx ? { c, v, ttl: Math.min(old.ttl, ttl), base: nowLo } : x)),
      });
    }
  }
  const out: ResMap[] = [];
  for (const cand of candidates) {
    const checked = checkElectionAnswer(cand, m, c);
    if (checked !== null) out.push(with1(res, r, checked));
  }
  return out;
}

function electionRenew(res: ResMap, m: ModelOp, nowLo: number): ResMap[] {
  const r = m.resources[0]!;
  const e = res[r] as ElecRes;
  const c = str(m.op.args, 'candidate') ?? '';
  const idx = e.q.findIndex((x) => x.c === c);
  if (m.effect === 'fail') return idx < 0 ? [res] : [];
  if (idx < 0) return m.effect === 'ok' ? [] : [res];
  const renewed: ElecRes = { ...e, q: e.q.map((x, i) => (i === idx ? { ...x, base: nowLo } : x)) };
  const checked = checkElectionAnswer(renewed, m, c);
  return checked === null ? [] : [with1(res, r, checked)];
}

function electionResign(res: ResMap, m: ModelOp): ResMap[] {
  const r = m.resources[0]!;
  const e = res[r] as ElecRes;
  const c = str(m.op.args, 'candidate') ?? '';
  const idx = e.q.findIndex((x) => x.c === c);
  if (m.effect === 'fail') return idx < 0 ? [res] : [];
  if (idx < 0) return m.effect === 'ok' ? [] : [res];
  const q = e.q.filter((_, i) => i !== idx);
  return [with1(res, r, idx === 0 ? promoted(e, q) : { ...e, q })];
}

function electionProclaim(res: ResMap, m: ModelOp): ResMap[] {
  const r = m.resources[0]!;
  const e = res[r] as ElecRes;
  const c = str(m.op.args, 'candidate') ?? '';
  const t = num(m.op.args, 'fencingToken');
  const head = e.q[0];
  if (m.effect === 'fail') {
    const knownMatch = head !== undefined && head.c === c && e.tok !== null && e.tok === t;
    return knownMatch ? [] : [res];
  }
  const o = head !== undefined && head.c === c ? observe(e.tok, e.next, t) : null;
  if (o === null || head === undefined) return m.effect === 'ok' ? [] : [res];
  const value = canonicalJson(m.op.args['value'] ?? null);
  const after: ElecRes = {
    ...e,
    q: [{ ...head, v: value }, ...e.q.slice(1)],
    tok: o.tok,
    next: o.next,
  };
  const leader = m.value === null ? null : obj(m.value, 'leader');
  if (
    leader !== null &&
    (str(leader, 'candidate') !== c ||
      ('value' in leader && canonicalJson(leader['value']) !== value))
  )
    return [];
  return [with1(res, r, after)];
}

function electionGet(res: ResMap, m: ModelOp): ResMap[] {
  const r = m.resources[0]!;
  const e = res[r] as ElecRes;
  const v = m.value;
  if (v === null) return [res];
  if (v['leader'] === null) return e.q.length === 0 ? [res] : [];
  const leader = obj(v, 'leader');
  const head = e.q[0];
  if (leader === null || head === undefined) return [];
  if (str(leader, 'candidate') !== head.c || canonicalJson(leader['value'] ?? null) !== head.v)
    return [];
  const o = observe(e.tok, e.next, num(leader, 'fencingToken'));
  return o === null ? [] : [with1(res, r, { ...e, tok: o.tok, next: o.next })];
}

function kvWrite(res: ResMap, m: ModelOp): ResMap[] {
  const r = m.resources[0]!;
  const fenceR = m.resources[1];
  const k = res[r] as KvRes;
  const ifRev = num(m.op.args, 'ifRevision');
  const fenceToken = num(obj(m.op.args, 'fence'), 'fencingToken');
  const del = m.op.kind === 'kv.delete';
  if (m.effect === 'fail') {
    switch (m.code) {
      case 'stale_token': {
        if (fenceR === undefined) return [];
        const cur = knownToken(res, fenceR);
        return cur === fenceToken ? [] : [res];
      }
      case 'revision_mismatch': {
        if (ifRev === null) return [];
        if (ifRev === 0) return k.v === null ? [] : [res];
        return k.v !== null && k.rev !== null && k.rev === ifRev ? [] : [res];
      }
      case 'not_found':
        return del && k.v === null ? [res] : [];
      default:
        return [res];
    }
  }
  // Took effect (ok, or maybe-with-effect): the fence and the revision condition held.
  let cur: ResMap = res;
  if (fenceR !== undefined) {
    const b = bindCurrent(cur, fenceR, fenceToken);
    if (b === null || b === 'none') return m.effect === 'ok' ? [] : [res];
    cur = b.res;
  }
  let kk = cur[r] as KvRes;
  if (ifRev !== null) {
    if (ifRev === 0) {
      if (kk.v !== null) return m.effect === 'ok' ? [] : [res];
    } else {
      const o = kk.v === null ? null : observe(kk.rev, kk.next, ifRev);
      if (o === null) return m.effect === 'ok' ? [] : [res];
      kk = { ...kk, rev: o.tok, next: o.next };
    }
  }
  if (del)
    return [
      with1(cur, r, {
        t: 'K',
        v: null,
        rev: null,
        next: kk.rev !== null ? Math.max(kk.next, kk.rev + 1) : kk.next,
      }),
    ];
  const newRev = m.value === null ? null : num(m.value, 'revision');
  if (m.effect === 'ok' && newRev === null) return [];
  const iss = issue(kk.v === null ? null : kk.rev, kk.next, newRev);
  if (iss === null) return [];
  return [
    with1(cur, r, {
      t: 'K',
      v: canonicalJson(m.op.args['value'] ?? null),
      rev: iss.tok,
      next: iss.next,
    }),
  ];
}

function kvGet(res: ResMap, m: ModelOp): ResMap[] {
  const r = m.resources[0]!;
  const k = res[r] as KvRes;
  if (m.effect === 'fail') return k.v === null ? [res] : [];
  const v = m.value;
  if (v === null || k.v === null) return [];
  if (canonicalJson(v['value'] ?? null) !== k.v) return [];
  const o = observe(k.rev, k.next, num(v, 'revision'));
  return o === null ? [] : [with1(res, r, { ...k, rev: o.tok, next: o.next })];
}

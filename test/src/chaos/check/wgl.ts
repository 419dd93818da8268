/**
 * Wing–Gong / Lowe linearizability search (as in Porcupine) over one partition of a history, with a
 * nondeterministic model, memoization of (linearized set, model state, time bound) and a step/time
 * budget. Unknown ops get a return at +∞, so they may be linearized anywhere after their invoke;
 * the search succeeds once every op with a definite outcome is linearized, so an unknown op left
 * out "never took effect" — without branching on it (that branching is what makes naive searches
 * blow up on histories with many timeouts).
 */
import assert from 'node:assert';
import { stepModel, initialState, type ModelOp, type ModelOptions, type ModelState, type Alt } from './model.js';

/** Search verdict: linearizable, not (with where it got stuck), or gave up within the budget. */
export type SearchResult =
  | { readonly kind: 'ok'; readonly steps: number }
  | { readonly kind: 'violation'; readonly steps: number; readonly deepest: DeepestPoint }
  | { readonly kind: 'unknown'; readonly steps: number; readonly reason: string };

/** Diagnostics for a violation: the longest prefix the search could linearize, and what blocked it. */
export interface DeepestPoint {
  /** Indices (into the partition's ops) linearized in that prefix, in order. */
  readonly linearized: readonly number[];
  /** Model state after that prefix (`ModelState.key`). */
  readonly stateKey: string;
  /** Index of the op whose completion could not be explained (the first unlinearized return). */
  readonly blockedOp: number | null;
}

/** Budget: at most `stepsMax` search steps and `timeMsMax` ms of wall time, whichever comes first. */
export interface SearchBudget { readonly stepsMax: number; readonly timeMsMax: number }

interface Entry {
  readonly call: boolean;
  readonly opIdx: number;
  readonly timeMs: number;
  match: Entry | null;
  prev: Entry | null;
  next: Entry | null;
}

interface Frame {
  readonly entry: Entry;
  readonly alts: readonly Alt[];
  readonly altNext: number;
  readonly prevState: ModelState;
  readonly prevNowLo: number;
  readonly prevHash: number;
}

/** 32-bit FNV-1a of a string. */
function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); }
  return h >>> 0;
}

/** Per-op random 32-bit values for an incremental (Zobrist) hash of the linearized set. */
function zobrist(n: number): Uint32Array {
  const z = new Uint32Array(n);
  let x = 0x9e3779b9;
  for (let i = 0; i < n; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; z[i] = x >>> 0; }
  return z;
}

function buildEntries(ops: readonly ModelOp[]): Entry {
  const entries: Entry[] = [];
  ops.forEach((m, i) => {
    const call: Entry = { call: true, opIdx: i, timeMs: m.invokeMs, match: null, prev: null, next: null };
    const ret: Entry = { call: false, opIdx: i, timeMs: m.completeMs, match: null, prev: null, next: null };
    call.match = ret;
    entries.push(call, ret);
  });
  // Calls before returns at equal times: touching intervals count as concurrent (permissive = sound).
  entries.sort((a, b) => a.timeMs - b.timeMs || (a.call === b.call ? a.opIdx - b.opIdx : a.call ? -1 : 1));
  const head: Entry = { call: false, opIdx: -1, timeMs: -Infinity, match: null, prev: null, next: null };
  let prev = head;
  for (const e of entries) { prev.next = e; e.prev = prev; prev = e; }
  return head;
}

function lift(e: Entry): void {
  e.prev!.next = e.next;
  if (e.next !== null) e.next.prev = e.prev;
  const r = e.match!;
  r.prev!.next = r.next;
  if (r.next !== null) r.next.prev = r.prev;
}

function unlift(e: Entry): void {
  const r = e.match!;
  r.prev!.next = r;
  if (r.next !== null) r.next.prev = r;
  e.prev!.next = e;
  if (e.next !== null) e.next.prev = e;
}

/**
 * Searches for a linearization of `ops` (one partition) from the empty state over `resources`.
 * Returns within the budget; never throws on bad histories (they are violations).
 */
export function searchLinearization(ops: readonly ModelOp[], resources: readonly string[], model: ModelOptions, budget: SearchBudget): SearchResult {
  const n = ops.length;
  if (n === 0) return { kind: 'ok', steps: 0 };
  const head = buildEntries(ops);
  const z = zobrist(n);
  const words = Math.ceil(n / 32);
  const bits = new Uint32Array(words);
  const memo = new Map<number, { bits: Uint32Array; key: string; nowLo: number }[]>();
  const stack: Frame[] = [];
  let state = initialState(resources);
  let nowLo = -Infinity;
  let setHash = 0;
  let steps = 0;
  const t0 = performance.now();
  let deepest: DeepestPoint = { linearized: [], stateKey: state.key, blockedOp: null };

  const seen = (h: number, key: string, lo: number): boolean => {
    const full = (h ^ hashString(key) ^ hashString(String(lo))) >>> 0;
    const bucket = memo.get(full);
    if (bucket !== undefined) {
      for (const b of bucket) {
        if (b.nowLo === lo && b.key === key && b.bits.every((w, i) => w === bits[i])) return true;
      }
    }
    const rec = { bits: bits.slice(), key, nowLo: lo };
    if (bucket === undefined) memo.set(full, [rec]); else bucket.push(rec);
    return false;
  };

  /** Tries alternatives `from..` of `entry`'s op; on success moves the search one op deeper. */
  const tryAlts = (entry: Entry, alts: readonly Alt[], from: number): boolean => {
    const i = entry.opIdx;
    for (let a = from; a < alts.length; a++) {
      const alt = alts[a]!;
      const lo = alt.effect ? Math.max(nowLo, ops[i]!.invokeMs) : nowLo;
      const h = (setHash ^ z[i]!) >>> 0;
      bits[i >>> 5]! |= 1 << (i & 31);
      if (seen(h, alt.state.key, lo)) { bits[i >>> 5]! &= ~(1 << (i & 31)); continue; }
      stack.push({ entry, alts, altNext: a + 1, prevState: state, prevNowLo: nowLo, prevHash: setHash });
      state = alt.state; nowLo = lo; setHash = h;
      if (ops[i]!.effect !== 'maybe') definiteLeft--;
      lift(entry);
      return true;
    }
    return false;
  };

  let definiteLeft = ops.filter((m) => m.effect !== 'maybe').length;
  let entry: Entry | null = head.next;
  while (definiteLeft > 0) {
    steps++;
    if ((steps & 1023) === 0 && (steps > budget.stepsMax || performance.now() - t0 > budget.timeMsMax)) {
      return { kind: 'unknown', steps, reason: `search budget exhausted after ${steps} steps, ${(performance.now() - t0).toFixed(0)} ms (${n} ops)` };
    }
    assert(entry !== null, 'wgl: ran off the entry list');
    if (entry.call) {
      const m = ops[entry.opIdx]!;
      const alts = stepModel(state, m, Math.max(nowLo, m.invokeMs), model);
      if (tryAlts(entry, alts, 0)) { entry = head.next; continue; }
      entry = entry.next;
      continue;
    }
    // A return whose op is not linearized yet: backtrack.
    if (stack.length >= deepest.linearized.length) {
      deepest = { linearized: stack.map((f) => f.entry.opIdx), stateKey: state.key, blockedOp: entry.opIdx };
    }
    let moved = false;
    while (!moved) {
      const f = stack.pop();
      if (f === undefined) return { kind: 'violation', steps, deepest };
      unlift(f.entry);
      const i = f.entry.opIdx;
      if (ops[i]!.effect !== 'maybe') definiteLeft++;
      bits[i >>> 5]! &= ~(1 << (i & 31));
      state = f.prevState; nowLo = f.prevNowLo; setHash = f.prevHash;
      if (tryAlts(f.entry, f.alts, f.altNext)) { entry = head.next; moved = true; }
      else { entry = f.entry.next; moved = entry !== null; }
    }
  }
  return { kind: 'ok', steps };
}

/**
 * Wing–Gong / Lowe linearizability search (as in Porcupine) over one partition of a history, with a
 * nondeterministic model, memoization of (linearized set, model state, time bound) and a step/time
 * budget. Unknown ops get a return at +∞, so they may be linearized anywhere after their invoke;
 * the model also offers them a "never took effect" no-op, and the search succeeds as soon as every
 * op with a definite outcome is linearized (unknown ops still pending never took effect).
 * Candidates are tried in invoke order (an unknown op's effect first, near its invoke: a lost
 * response usually means the request applied at once), and among pending unknown ops with the
 * same request only the earliest is tried (symmetry reduction).
 */
import { SeededRandom } from '@tenure/testkit';
import { canonicalJson } from './history.js';
import {
  stepModel,
  initialState,
  type ModelOp,
  type ModelOptions,
  type ModelState,
  type Alt,
} from './model.js';

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
export interface SearchBudget {
  readonly stepsMax: number;
  readonly timeMsMax: number;
}

interface Entry {
  readonly call: boolean;
  readonly opIdx: number;
  readonly timeMs: number;
  match: Entry | null;
  prev: Entry | null;
  next: Entry | null;
}

/**
 * One node of the depth-first search: the candidate calls at this point (minimal ops: calls before
 * the first unlinearized finite return), definite ops first, and where the iteration is.
 */
interface Node {
  readonly cands: readonly Entry[];
  ci: number;
  alts: readonly Alt[] | null;
  ai: number;
  /** Set when the search descended from this node through `lifted`. */
  lifted: Entry | null;
  prevState: ModelState | null;
  prevNowLo: number;
  prevHash: number;
}

/** 32-bit FNV-1a of a string. */
function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Per-op random 32-bit values for an incremental (Zobrist) hash of the linearized set. */
function zobrist(n: number): Uint32Array {
  const random = new SeededRandom(0x9e3779b9); // fixed: the hash only needs well-spread values
  return Uint32Array.from({ length: n }, () => random.nextU32());
}

function buildEntries(ops: readonly ModelOp[]): Entry {
  const entries: Entry[] = [];
  ops.forEach((m, i) => {
    const call: Entry = {
      call: true,
      opIdx: i,
      timeMs: m.invokeMs,
      match: null,
      prev: null,
      next: null,
    };
    const ret: Entry = {
      call: false,
      opIdx: i,
      timeMs: m.completeMs,
      match: null,
      prev: null,
      next: null,
    };
    call.match = ret;
    entries.push(call, ret);
  });
  // Calls before returns at equal times: touching intervals count as concurrent (permissive = sound).
  entries.sort(
    (a, b) => a.timeMs - b.timeMs || (a.call === b.call ? a.opIdx - b.opIdx : a.call ? -1 : 1),
  );
  const head: Entry = {
    call: false,
    opIdx: -1,
    timeMs: -Infinity,
    match: null,
    prev: null,
    next: null,
  };
  let prev = head;
  for (const e of entries) {
    prev.next = e;
    e.prev = prev;
    prev = e;
  }
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
export function searchLinearization(
  ops: readonly ModelOp[],
  resources: readonly string[],
  model: ModelOptions,
  budget: SearchBudget,
): SearchResult {
  const n = ops.length;
  if (n === 0) return { kind: 'ok', steps: 0 };
  const head = buildEntries(ops);
  const z = zobrist(n);
  const words = Math.ceil(n / 32);
  const bits = new Uint32Array(words);
  const memo = new Map<number, { bits: Uint32Array; key: string; nowLo: number }[]>();
  const stack: Node[] = [];
  let state = initialState(resources);
  let nowLo = -Infinity;
  let setHash = 0;
  let steps = 0;
  const t0 = performance.now();
  let deepest: DeepestPoint = { linearized: [], stateKey: state.key, blockedOp: null };
  // Unknown ops with equal effect (same kind and request) are interchangeable: only the earliest
  // pending one is tried (symmetry reduction; the earlier invoke is the more permissive choice).
  const sig = ops.map((m) => {
    const { idempotencyKey: _k, attempt: _a, ...rest } = m.op.args;
    return `${m.op.kind}:${canonicalJson(rest)}`;
  });

  // Memo of failed configurations. A configuration with the same linearized set and state but a
  // higher time bound `lo` is dominated (the model only gets stricter as `lo` grows: later bases,
  // fewer expiries), so it is skipped too. Everything visited has failed: success ends the search.
  const seen = (h: number, key: string, lo: number): boolean => {
    const full = (h ^ hashString(key)) >>> 0;
    const bucket = memo.get(full);
    if (bucket !== undefined) {
      for (const b of bucket) {
        if (b.key === key && b.bits.every((w, i) => w === bits[i])) {
          if (b.nowLo <= lo) return true;
          b.nowLo = lo;
          return false;
        }
      }
    }
    const rec = { bits: bits.slice(), key, nowLo: lo };
    if (bucket === undefined) memo.set(full, [rec]);
    else bucket.push(rec);
    return false;
  };

  const newNode = (): Node => {
    // Invoke order, unknown ops included: trying an unknown op's effect near its invoke first, then
    // settling it as a no-op, finds real histories fastest (a lost response usually means the
    // request applied right away).
    const cands: Entry[] = [];
    const sigs = new Set<string>();
    for (let e = head.next; e !== null && e.call; e = e.next) {
      if (ops[e.opIdx]!.effect !== 'maybe') {
        cands.push(e);
        continue;
      }
      const sg = sig[e.opIdx]!;
      if (!sigs.has(sg)) {
        sigs.add(sg);
        cands.push(e);
      }
    }
    return {
      cands,
      ci: 0,
      alts: null,
      ai: 0,
      lifted: null,
      prevState: null,
      prevNowLo: 0,
      prevHash: 0,
    };
  };
  const firstReturn = (): number | null => {
    for (let e = head.next; e !== null; e = e.next) if (!e.call) return e.opIdx;
    return null;
  };

  let definiteLeft = ops.filter((m) => m.effect !== 'maybe').length;
  let node = newNode();
  while (definiteLeft > 0) {
    steps++;
    if (
      (steps & 1023) === 0 &&
      (steps > budget.stepsMax || performance.now() - t0 > budget.timeMsMax)
    ) {
      return {
        kind: 'unknown',
        steps,
        reason: `search budget exhausted after ${steps} steps, ${(performance.now() - t0).toFixed(0)} ms (${n} ops)`,
      };
    }
    let descended = false;
    while (!descended && node.ci < node.cands.length) {
      const e = node.cands[node.ci]!;
      const i = e.opIdx;
      const m = ops[i]!;
      if (node.alts === null) {
        node.alts = stepModel(state, m, Math.max(nowLo, m.invokeMs), model);
        node.ai = 0;
      }
      while (node.ai < node.alts.length) {
        const alt = node.alts[node.ai++]!;
        const lo = alt.effect ? Math.max(nowLo, m.invokeMs) : nowLo;
        const h = (setHash ^ z[i]!) >>> 0;
        bits[i >>> 5]! |= 1 << (i & 31);
        if (seen(h, alt.state.key, lo)) {
          bits[i >>> 5]! &= ~(1 << (i & 31));
          continue;
        }
        node.lifted = e;
        node.prevState = state;
        node.prevNowLo = nowLo;
        node.prevHash = setHash;
        stack.push(node);
        state = alt.state;
        nowLo = lo;
        setHash = h;
        if (m.effect !== 'maybe') definiteLeft--;
        lift(e);
        node = newNode();
        descended = true;
        break;
      }
      if (!descended) {
        node.ci++;
        node.alts = null;
      }
    }
    if (descended) continue;
    // Every candidate failed here: remember the deepest point, then backtrack one level.
    if (stack.length >= deepest.linearized.length) {
      deepest = {
        linearized: stack.map((f) => f.lifted!.opIdx),
        stateKey: state.key,
        blockedOp: firstReturn(),
      };
    }
    const parent = stack.pop();
    if (parent === undefined) return { kind: 'violation', steps, deepest };
    const e = parent.lifted!;
    unlift(e);
    const i = e.opIdx;
    if (ops[i]!.effect !== 'maybe') definiteLeft++;
    bits[i >>> 5]! &= ~(1 << (i & 31));
    state = parent.prevState!;
    nowLo = parent.prevNowLo;
    setHash = parent.prevHash;
    parent.lifted = null;
    node = parent;
  }
  return { kind: 'ok', steps };
}

/**
 * Merges retry attempts of one logical request into one operation (docs/concepts.md, §3 Idempotency).
 *
 * The workload records every HTTP attempt as its own op and puts the request's `Idempotency-Key` in
 * `args.idempotencyKey`; a retry after an unknown outcome reuses the key (through another node). A
 * correct server applies the request at most once and answers every repeat with the first outcome,
 * so the logical operation is: invoked at the first attempt's invoke, completed at the first
 * attempt with a definite answer (2xx / 4xx) with that answer — or unknown (may take effect any
 * time after the first invoke) when no attempt got one. The idempotency checker (durability.ts)
 * verifies the premise: all definite answers for one key are equal.
 */
import type { HistoryOp } from '../types.js';
import { effectOf, str } from './history.js';

/**
 * How long the server remembers an Idempotency-Key: docs/api.md, default 10 minutes of cluster time.
 * Cluster time never runs ahead of real time, so a repeat sent less than this long (real time) after
 * the first attempt is certainly answered from the record; a later one may be applied afresh, so it
 * is a new logical request.
 */
export const IDEMPOTENCY_WINDOW_MS = 600_000;

/** Key of a logical request: process + kind + idempotency key, or null when the op has none. */
export function logicalKey(op: HistoryOp): string | null {
  const k = str(op.args, 'idempotencyKey');
  return k === null ? null : `${op.process}\u0000${op.kind}\u0000${k}`;
}

/**
 * Returns the history with attempts sharing an idempotency key merged (opId of the first attempt),
 * ordered by invoke time. Ops without a key pass through unchanged.
 */
export function mergeAttempts(ops: readonly HistoryOp[]): HistoryOp[] {
  const groups = new Map<string, HistoryOp[]>();
  const out: HistoryOp[] = [];
  for (const op of ops) {
    const k = logicalKey(op);
    if (k === null) {
      out.push(op);
      continue;
    }
    const g = groups.get(k);
    if (g === undefined) groups.set(k, [op]);
    else g.push(op);
  }
  for (const all of groups.values())
    for (const g of splitByWindow(all)) {
      const first = g[0]!;
      const definite = g.find((o) => effectOf(o.outcome) !== 'maybe');
      if (definite !== undefined) {
        out.push({
          ...first,
          node: definite.node,
          completeMs: definite.completeMs,
          outcome: definite.outcome,
        });
      } else {
        const last = g[g.length - 1]!;
        out.push({
          ...first,
          completeMs: last.completeMs,
          outcome:
            last.outcome.status === 'unknown'
              ? last.outcome
              : { status: 'unknown', reason: `all ${g.length} attempts inconclusive` },
        });
      }
    }
  return out.sort((a, b) => a.invokeMs - b.invokeMs || a.opId - b.opId);
}

/** Attempts sorted by invoke time, split where one starts a full idempotency window after its run's first. */
export function splitByWindow(attempts: readonly HistoryOp[]): HistoryOp[][] {
  const sorted = [...attempts].sort((a, b) => a.invokeMs - b.invokeMs || a.opId - b.opId);
  const runs: HistoryOp[][] = [];
  for (const op of sorted) {
    const run = runs[runs.length - 1];
    if (run !== undefined && op.invokeMs - run[0]!.invokeMs < IDEMPOTENCY_WINDOW_MS) run.push(op);
    else runs.push([op]);
  }
  return runs;
}

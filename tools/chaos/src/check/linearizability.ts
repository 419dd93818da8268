/**
 * Checker (a): linearizability of the history (docs/concepts.md) against the model in model.ts, checked
 * per partition (P-compositionality: ops are grouped by the resources they touch — a fenced KV write
 * joins its key with its fence's lease/group). Each partition is searched with wgl.ts within a
 * budget; a partition the search cannot finish is reported in stats (`partitionsUnknown`), never
 * passed or failed silently.
 */
import { describeContext } from './context.js';
import type { Checker, CheckResult, HistoryOp, RunRecord, Violation } from '../types.js';
import { describeOp } from './history.js';
import { mergeAttempts } from './merge.js';
import { prepareOp, type ModelOp } from './model.js';
import { searchLinearization, type SearchBudget } from './wgl.js';

/** Options: drift bound (docs/concepts.md) and the search budget per partition. */
export interface LinearizabilityOptions {
  readonly maxDriftRatio: number;
  /** Wall-time budget for all partitions together, ms (default 60,000). */
  readonly searchBudgetMs?: number;
  /** Step budget per partition (default 5,000,000). */
  readonly stepsMaxPerPartition?: number;
}

/** One partition: its resources and prepared ops (ordered by invoke). */
export interface Partition {
  readonly resources: string[];
  readonly ops: ModelOp[];
}

/** Groups modelled ops into independent partitions by shared resources (union–find). */
export function partitionOps(ops: readonly HistoryOp[]): Partition[] {
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let r = x;
    while (parent.get(r) !== r) r = parent.get(r)!;
    let c = x;
    while (c !== r) {
      const p = parent.get(c)!;
      parent.set(c, r);
      c = p;
    }
    return r;
  };
  const prepared: ModelOp[] = [];
  for (const op of ops) {
    const m = prepareOp(op);
    if (m === null) continue;
    prepared.push(m);
    for (const r of m.resources) if (!parent.has(r)) parent.set(r, r);
    for (const r of m.resources.slice(1)) parent.set(find(r), find(m.resources[0]!));
  }
  const groups = new Map<string, Partition>();
  for (const r of parent.keys()) {
    const root = find(r);
    let g = groups.get(root);
    if (g === undefined) {
      g = { resources: [], ops: [] };
      groups.set(root, g);
    }
    g.resources.push(r);
  }
  for (const m of prepared) groups.get(find(m.resources[0]!))!.ops.push(m);
  const out = [...groups.values()];
  for (const g of out) {
    g.resources.sort();
    g.ops.sort((a, b) => a.invokeMs - b.invokeMs || a.op.opId - b.op.opId);
  }
  return out.sort((a, b) => a.resources[0]!.localeCompare(b.resources[0]!));
}

/**
 * Checks `ops` for linearizability (retry attempts merged by idempotency key first, merge.ts);
 * pure apart from the wall-time budget.
 */
export function checkLinearizability(
  ops: readonly HistoryOp[],
  options: LinearizabilityOptions,
): CheckResult {
  const partitions = partitionOps(mergeAttempts(ops));
  const budgetMs = options.searchBudgetMs ?? 60_000;
  const stepsMax = options.stepsMaxPerPartition ?? 5_000_000;
  const violations: Violation[] = [];
  const unknown: string[] = [];
  let steps = 0;
  let modelled = 0;
  const t0 = performance.now();
  // Smallest partitions first; each gets an equal share of what is left, so one hard partition
  // cannot starve the others (the leftover of easy ones flows to the hard ones).
  const order = [...partitions].sort((a, b) => a.ops.length - b.ops.length);
  for (const [i, p] of order.entries()) {
    modelled += p.ops.length;
    const left = Math.max(1, budgetMs - (performance.now() - t0));
    const budget: SearchBudget = { stepsMax, timeMsMax: left / (order.length - i) };
    const r = searchLinearization(
      p.ops,
      p.resources,
      { maxDriftRatio: options.maxDriftRatio },
      budget,
    );
    steps += r.steps;
    if (r.kind === 'unknown') {
      unknown.push(`${p.resources.join('+')}: ${r.reason}`);
      continue;
    }
    if (r.kind === 'violation')
      violations.push(
        describeViolation(p, r.deepest.linearized, r.deepest.blockedOp, r.deepest.stateKey),
      );
  }
  return {
    ok: violations.length === 0,
    violations,
    stats: {
      partitions: partitions.length,
      opsModelled: modelled,
      partitionsUnknown: unknown.length,
      unknownDetail: unknown.slice(0, 5).join('; '),
      searchSteps: steps,
      searchMs: Math.round(performance.now() - t0),
    },
  };
}

function describeViolation(
  p: Partition,
  linearized: readonly number[],
  blocked: number | null,
  stateKey: string,
): Violation {
  const blockedOp = blocked === null ? null : p.ops[blocked]!.op;
  const tail = linearized
    .slice(-6)
    .map((i) => `  ${describeOp(p.ops[i]!.op)}`)
    .join('\n');
  const message =
    `no linearization of ${p.resources.join(' + ')} (${p.ops.length} ops): ` +
    (blockedOp === null ? 'search exhausted' : `op ${describeOp(blockedOp)} cannot be explained`) +
    ` after ${linearized.length} linearized ops; last linearized:\n${tail}\nmodel state: ${stateKey}`;
  const opIds = [
    ...(blockedOp === null ? [] : [blockedOp.opId]),
    ...linearized.slice(-6).map((i) => p.ops[i]!.op.opId),
  ];
  return {
    property: 'linearizability',
    message,
    opIds,
    ...(blockedOp?.completeMs != null ? { timeMs: blockedOp.completeMs } : {}),
  };
}

/** The checker object (docs/concepts.md), for `createCheckers`. */
export function linearizabilityChecker(options: LinearizabilityOptions): Checker {
  return {
    name: 'linearizability',
    check: async (run: RunRecord) => {
      const result = checkLinearizability(run.ops, options);
      // Each violation names the cluster context of its blocked op: leaders/terms and nearby faults.
      const byId = new Map(run.ops.map((op) => [op.opId, op]));
      const violations = result.violations.map((v) => {
        const op = v.opIds?.[0] === undefined ? undefined : byId.get(v.opIds[0]);
        if (op === undefined) return v;
        return {
          ...v,
          message: `${v.message}\n${describeContext(run.leaderSamples, run.faults, op.invokeMs, op.completeMs ?? op.invokeMs)}`,
        };
      });
      return { ...result, violations };
    },
  };
}

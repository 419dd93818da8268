/**
 * The chaos checkers' entry (types.ts module contract): `createCheckers` for the runner, and
 * `runChecks` which runs them on a `RunRecord` (or a run folder) and writes `check-verdicts.json` and
 * `check-verdicts.md` into the run folder (the runner writes its own `verdicts.json`).
 *
 * Run-folder files read by `loadRunRecord` (JSON lines unless said): `history.jsonl`
 * (HistoryEvent), `faults.jsonl` (FaultEvent), `leader-samples.jsonl` (LeaderSample),
 * `fenced-store.jsonl` (FencedWriteRecord, read by the fencing checker), and `run.json`
 * (`{seed, scenario, nodeIds, durationMs, timing}`; missing fields get SPEC defaults).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type {
  Checker,
  CheckerFactory,
  CheckerOptions,
  CheckResult,
  FaultEvent,
  HistoryEvent,
  LeaderSample,
  RunRecord,
  RunTiming,
} from '../types.js';
import { pairEvents, readJsonl } from './history.js';
import { linearizabilityChecker } from './linearizability.js';
import { fencingChecker } from './fencing.js';
import { raftChecker } from './raft.js';
import { leaseTimingChecker } from './lease-timing.js';
import { durabilityChecker } from './durability.js';
import { livenessChecker } from './liveness.js';
import { semaphoreChecker } from './semaphore.js';
import { sharedLockChecker } from './shared-lock.js';
import { sessionsChecker } from './sessions.js';
import { watchChecker } from './watch.js';
import { revokeChecker } from './revoke.js';
import { holderHistoryChecker } from './holder-history.js';
import { nodeExitsChecker } from './node-exits.js';

export { checkLinearizability } from './linearizability.js';
export { checkFencing } from './fencing.js';
export { checkRaft } from './raft.js';
export { checkLeaseTiming } from './lease-timing.js';
export { checkDurability } from './durability.js';
export { checkLiveness } from './liveness.js';
export { checkSemaphores } from './semaphore.js';
export { checkSharedLocks } from './shared-lock.js';
export { checkSessions } from './sessions.js';
export { checkWatch } from './watch.js';
export { checkRevokes } from './revoke.js';
export { checkHolderHistory } from './holder-history.js';
export { checkNodeExits } from './node-exits.js';
export { mergeAttempts } from './merge.js';
export { pairEvents, readJsonl } from './history.js';

/** docs/api.md defaults for a run that did not record its timing. */
export const DEFAULT_RUN_TIMING: RunTiming = {
  heartbeatMs: 100,
  electionTimeoutMinMs: 1000,
  electionTimeoutMaxMs: 2000,
  maxDriftRatio: 0.01,
  expiryLatenessMaxMs: 2 * 2000 + 1000,
};

/**
 * `createCheckers` (types.ts CheckerFactory): linearizability, fencing, raft, lease-timing,
 * durability, liveness, then the primitives' semaphore, shared-lock, sessions and watch, then
 * operator revoke and holder history, then node exits (node logs) — in that order.
 * `searchBudgetMs` bounds the linearizability search (default 60 s); the others are linear or
 * n·log n.
 */
export const createCheckers: CheckerFactory = (options: CheckerOptions): readonly Checker[] => [
  linearizabilityChecker({
    maxDriftRatio: options.timing.maxDriftRatio,
    searchBudgetMs: options.searchBudgetMs ?? 60_000,
  }),
  fencingChecker(),
  raftChecker(),
  leaseTimingChecker({ timing: options.timing }),
  durabilityChecker(),
  livenessChecker(),
  semaphoreChecker(),
  sharedLockChecker(),
  sessionsChecker(),
  watchChecker(),
  revokeChecker(),
  holderHistoryChecker(),
  nodeExitsChecker(),
];

/** Reads a run folder into a RunRecord (see the module comment for the files). */
export function loadRunRecord(runDir: string): RunRecord {
  const meta = existsSync(join(runDir, 'run.json'))
    ? (JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')) as Partial<RunRecord>)
    : {};
  const history = readJsonl<HistoryEvent>(join(runDir, 'history.jsonl'));
  const ops = pairEvents(history);
  const lastMs = ops.reduce((m, o) => Math.max(m, o.completeMs ?? o.invokeMs), 0);
  return {
    runDir,
    seed: meta.seed ?? 0,
    scenario: meta.scenario ?? 'mixed',
    nodeIds: meta.nodeIds ?? ['n1', 'n2', 'n3'],
    durationMs: meta.durationMs ?? lastMs,
    timing: { ...DEFAULT_RUN_TIMING, ...(meta.timing ?? {}) },
    history,
    ops,
    faults: readJsonl<FaultEvent>(join(runDir, 'faults.jsonl')),
    leaderSamples: readJsonl<LeaderSample>(join(runDir, 'leader-samples.jsonl')),
  };
}

/** The verdict of one run: every checker's result, and `ok` when all are ok. */
export interface RunVerdict {
  readonly ok: boolean;
  readonly results: Readonly<
    Record<string, CheckResult & { readonly elapsedMs: number; readonly error?: string }>
  >;
}

/**
 * Runs the checkers on `run` (a RunRecord, or a run folder to load) and writes `check-verdicts.json` and
 * `check-verdicts.md` into `run.runDir` when `write` (default true). A checker that throws counts as
 * failed with property `checker-error` (a checker bug must not pass a run).
 */
export async function runChecks(
  run: RunRecord | string,
  options: { searchBudgetMs?: number; write?: boolean; checkers?: readonly Checker[] } = {},
): Promise<RunVerdict> {
  const record = typeof run === 'string' ? loadRunRecord(run) : run;
  const checkers =
    options.checkers ??
    createCheckers({
      timing: record.timing,
      ...(options.searchBudgetMs !== undefined ? { searchBudgetMs: options.searchBudgetMs } : {}),
    });
  const results: Record<string, CheckResult & { elapsedMs: number; error?: string }> = {};
  for (const c of checkers) {
    const t0 = performance.now();
    try {
      const r = await c.check(record);
      results[c.name] = { ...r, elapsedMs: Math.round(performance.now() - t0) };
    } catch (err) {
      const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
      results[c.name] = {
        ok: false,
        violations: [{ property: 'checker-error', message }],
        stats: {},
        elapsedMs: Math.round(performance.now() - t0),
        error: message,
      };
    }
  }
  const verdict: RunVerdict = { ok: Object.values(results).every((r) => r.ok), results };
  if (options.write !== false && existsSync(record.runDir)) {
    writeFileSync(
      join(record.runDir, 'check-verdicts.json'),
      `${JSON.stringify(verdict, null, 2)}\n`,
    );
    writeFileSync(join(record.runDir, 'check-verdicts.md'), verdictMarkdown(record, verdict));
  }
  return verdict;
}

/** A short human summary of a verdict (one section per checker, violations first 20). */
export function verdictMarkdown(run: RunRecord, v: RunVerdict): string {
  const lines = [`# Verdicts — ${run.scenario} seed ${run.seed}: ${v.ok ? 'PASS' : 'FAIL'}`, ''];
  for (const [name, r] of Object.entries(v.results)) {
    lines.push(
      `## ${name}: ${r.ok ? 'ok' : `${r.violations.length} violation(s)`} (${r.elapsedMs} ms)`,
      '',
    );
    for (const [k, val] of Object.entries(r.stats)) lines.push(`- ${k}: ${val}`);
    for (const viol of r.violations.slice(0, 20))
      lines.push(
        '',
        `**${viol.property}**${viol.opIds ? ` ops ${viol.opIds.join(',')}` : ''}: ${viol.message}`,
      );
    if (r.violations.length > 20)
      lines.push('', `… ${r.violations.length - 20} more in check-verdicts.json`);
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Hand-made histories for the checkers' tests: a tiny builder of `HistoryOp`s with explicit times
 * and outcomes, and a `RunRecord` wrapper with docs/api.md default timing.
 */
import type {
  FaultEvent,
  HistoryOp,
  Json,
  JsonObject,
  LeaderSample,
  OpKind,
  OpOutcome,
  RunRecord,
  RunTiming,
} from '../types.js';

/** docs/api.md local-cluster defaults; Δmax = 2 × 2,000 + 1,000 (docs/failure-scenarios.md). */
export const DEFAULT_TIMING: RunTiming = {
  heartbeatMs: 100,
  electionTimeoutMinMs: 1000,
  electionTimeoutMaxMs: 2000,
  maxDriftRatio: 0.01,
  expiryLatenessMaxMs: 5000,
};

/** `ok` outcome with a 200 and `value`. */
export function ok(value: Json): OpOutcome {
  return { status: 'ok', httpStatus: 200, value };
}
/** Definite failure with `code` (409 unless given), optional error details as `value`. */
export function fail(code: string, httpStatus = 409, value?: Json): OpOutcome {
  return value === undefined
    ? { status: 'fail', httpStatus, code }
    : { status: 'fail', httpStatus, code, value };
}
/** Unknown outcome (timeout, connection loss). */
export function unknown(reason = 'timeout'): OpOutcome {
  return { status: 'unknown', reason };
}

/** Builds ops with increasing ids. `completeMs` null = never completed. */
export class HistoryBuilder {
  readonly ops: HistoryOp[] = [];
  #nextId = 1;
  /** Adds one op and returns its opId. */
  add(
    process: string,
    kind: OpKind,
    args: JsonObject,
    invokeMs: number,
    completeMs: number | null,
    outcome: OpOutcome,
    node: string | null = 'n1',
  ): number {
    const opId = this.#nextId++;
    this.ops.push({ opId, process, node, kind, args, invokeMs, completeMs, outcome });
    return opId;
  }
}

/** A RunRecord around `ops` (history events left empty: checkers read `ops`). */
export function runRecord(
  ops: readonly HistoryOp[],
  extra: {
    faults?: FaultEvent[];
    leaderSamples?: LeaderSample[];
    durationMs?: number;
    runDir?: string;
  } = {},
): RunRecord {
  const end = ops.reduce((m, o) => Math.max(m, o.completeMs ?? o.invokeMs), 0);
  return {
    runDir: extra.runDir ?? '/nonexistent',
    seed: 1,
    scenario: 'test',
    nodeIds: ['n1', 'n2', 'n3'],
    durationMs: extra.durationMs ?? end + 1000,
    timing: DEFAULT_TIMING,
    history: [],
    ops,
    faults: extra.faults ?? [],
    leaderSamples: extra.leaderSamples ?? [],
  };
}

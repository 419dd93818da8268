/**
 * Runs one workload cell (a workload at a client count) against a system for a fixed time and
 * measures throughput, latency and the CPU each server process spent per operation.
 */
import { readFileSync } from 'node:fs';
import type * as hdr from 'hdr-histogram-js';
import { latencyHistogram } from '@tenure/testkit';
import { stallsBetween, type RunStalls, type StallReading } from './stalls.js';
import type { DrivenSystem, WorkloadId } from './system.js';

/** Latency histogram in microseconds, 1 µs … 60 s, 3 significant digits (testkit's one helper). */
export const newLatencyHistogram = latencyHistogram;

/** CPU seconds (user + system) process `pid` has used so far (/proc/<pid>/stat), 0 if gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the comm field: index 11 = utime, 12 = stime (fields 14 and 15 of proc(5)), in ticks.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Figures of one timed run of one cell. */
export interface CellRun {
  readonly system: string;
  readonly workload: WorkloadId;
  readonly clients: number;
  readonly round: number;
  readonly ops: number;
  readonly errors: number;
  readonly seconds: number;
  readonly opsPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Server CPU microseconds per successful op, per node, and summed over nodes. */
  readonly cpuUsPerOp: Readonly<Record<string, number>>;
  /** Event-loop delay and GC pauses per node during the run (Tenure only). */
  readonly stalls?: Readonly<Record<string, RunStalls>>;
}

/** A run's figures plus its latency histogram (kept in memory for pooling across rounds). */
export interface MeasuredCell {
  readonly run: CellRun;
  readonly histogram: hdr.Histogram;
}

/** Parameters of one cell run. */
export interface CellSpec {
  readonly workload: WorkloadId;
  readonly clients: number;
  readonly seconds: number;
  readonly round: number;
  /** Unique tag of this run, so names never collide with earlier runs on the same cluster. */
  readonly tag: string;
}

/**
 * Prepares `clients` loop bodies, then runs them concurrently for `seconds`. An op that rejects
 * or answers unexpectedly counts as an error (its latency is still recorded).
 */
export async function runCell(system: DrivenSystem, spec: CellSpec): Promise<MeasuredCell> {
  const ops = await Promise.all(
    Array.from({ length: spec.clients }, (_, i) => system.prepare(spec.workload, i, spec.tag)),
  );
  const histogram = newLatencyHistogram();
  let count = 0;
  let errors = 0;
  const pids = system.pids();
  const stallsBefore = await system.stalls?.();
  const cpuBefore = new Map([...pids].map(([id, pid]) => [id, cpuSeconds(pid)]));
  const start = performance.now();
  const until = start + spec.seconds * 1000;
  await Promise.all(
    ops.map(async (op) => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const ok = await op().catch(() => false);
        histogram.recordValue(Math.max(1, Math.round((performance.now() - t0) * 1000)));
        if (ok) count++;
        else errors++;
      }
    }),
  );
  const elapsedS = (performance.now() - start) / 1000;
  const cpuUsPerOp: Record<string, number> = {};
  let totalS = 0;
  for (const [id, pid] of pids) {
    const usedS = cpuSeconds(pid) - cpuBefore.get(id)!;
    totalS += usedS;
    cpuUsPerOp[id] = count === 0 ? 0 : Math.round((usedS / count) * 1e6);
  }
  cpuUsPerOp.total = count === 0 ? 0 : Math.round((totalS / count) * 1e6);
  const stallsAfter = await system.stalls?.(); // after the CPU reading: the scrape is not the run's
  const run: CellRun = {
    system: system.label,
    workload: spec.workload,
    clients: spec.clients,
    round: spec.round,
    ops: count,
    errors,
    seconds: Number(elapsedS.toFixed(2)),
    opsPerSec: Math.round(count / elapsedS),
    p50Ms: histogram.getValueAtPercentile(50) / 1000,
    p99Ms: histogram.getValueAtPercentile(99) / 1000,
    maxMs: histogram.maxValue / 1000,
    cpuUsPerOp,
    ...(stallsBefore && stallsAfter
      ? { stalls: runStalls(stallsBefore, stallsAfter, elapsedS) }
      : {}),
  };
  return { run, histogram };
}

/** Each node's stalls over a run of `seconds`, for the nodes both scrapes reached. */
function runStalls(
  before: ReadonlyMap<string, StallReading>,
  after: ReadonlyMap<string, StallReading>,
  seconds: number,
): Record<string, RunStalls> {
  const out: Record<string, RunStalls> = {};
  for (const [id, a] of after) {
    const b = before.get(id);
    if (b !== undefined) out[id] = stallsBetween(b, a, seconds);
  }
  return out;
}

/**
 * Pools the runs of the comparison (median ops/s over rounds, latency percentiles of the pooled
 * histograms), prints the table with Tenure/etcd ratios and builds the JSON result document.
 */
import type * as hdr from 'hdr-histogram-js';
import { newLatencyHistogram, type CellRun, type MeasuredCell } from './measure.js';
import { WORKLOAD_TITLES, type WorkloadId } from './system.js';

/** One failover measure: the product's cluster, its round, ms from SIGKILL to the first ack. */
export interface FailoverRun {
  readonly system: 'tenure' | 'etcd';
  readonly round: number;
  readonly ms: number;
}

/** Pooled figures of one (system, workload, clients) cell over every round. */
export interface PooledCell {
  readonly opsPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
  readonly runs: number;
  /** Median over rounds of the summed server CPU µs per op. */
  readonly cpuUsPerOp: number;
}

/** Median of a non-empty list (mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const cellKey = (system: string, workload: WorkloadId, clients: number): string =>
  `${system}|${workload}|${clients}`;

/** Pools measured cells by (system, workload, clients). */
export function poolCells(cells: readonly MeasuredCell[]): Map<string, PooledCell> {
  const groups = new Map<string, { runs: CellRun[]; histogram: hdr.Histogram }>();
  for (const { run, histogram } of cells) {
    const key = cellKey(run.system, run.workload, run.clients);
    let group = groups.get(key);
    if (group === undefined) {
      group = { runs: [], histogram: newLatencyHistogram() };
      groups.set(key, group);
    }
    group.runs.push(run);
    group.histogram.add(histogram);
  }
  const pooled = new Map<string, PooledCell>();
  for (const [key, { runs, histogram }] of groups)
    pooled.set(key, {
      opsPerSec: Math.round(median(runs.map((r) => r.opsPerSec))),
      p50Ms: histogram.getValueAtPercentile(50) / 1000,
      p99Ms: histogram.getValueAtPercentile(99) / 1000,
      errors: runs.reduce((sum, r) => sum + r.errors, 0),
      runs: runs.length,
      cpuUsPerOp: Math.round(median(runs.map((r) => r.cpuUsPerOp.total ?? 0))),
    });
  return pooled;
}

/** One printed row: a workload at a client count, one column group per system, ratios. */
export interface SummaryRow {
  readonly workload: string;
  readonly clients: number | null;
  readonly bySystem: Readonly<Record<string, PooledCell | { failoverMs: number } | null>>;
  /** Tenure ÷ etcd ops/s (for failover: etcd ms ÷ Tenure ms), by etcd column; > 1 = Tenure better. */
  readonly ratios: Readonly<Record<string, number | null>>;
}

/** Rows of the table, in workload order, each client count of the run. */
export function summarise(
  cells: readonly MeasuredCell[],
  failovers: readonly FailoverRun[],
  systems: readonly string[],
  cellOrder: readonly { workload: WorkloadId; clients: number }[],
): SummaryRow[] {
  const pooled = poolCells(cells);
  const etcdColumns = systems.filter((s) => s !== 'tenure');
  const rows: SummaryRow[] = cellOrder.map(({ workload, clients }) => {
    const bySystem: Record<string, PooledCell | null> = {};
    for (const s of systems) bySystem[s] = pooled.get(cellKey(s, workload, clients)) ?? null;
    const ratios: Record<string, number | null> = {};
    for (const s of etcdColumns) {
      const t = bySystem.tenure;
      const e = bySystem[s];
      ratios[s] = t && e && e.opsPerSec > 0 ? t.opsPerSec / e.opsPerSec : null;
    }
    return { workload: WORKLOAD_TITLES[workload], clients, bySystem, ratios };
  });
  if (failovers.length > 0) {
    const ms = (product: 'tenure' | 'etcd'): number | null => {
      const own = failovers.filter((f) => f.system === product).map((f) => f.ms);
      return own.length === 0 ? null : median(own);
    };
    const tenureMs = ms('tenure');
    const etcdMs = ms('etcd');
    const bySystem: Record<string, { failoverMs: number } | null> = {};
    const ratios: Record<string, number | null> = {};
    for (const s of systems) {
      const value = s === 'tenure' ? tenureMs : etcdMs;
      bySystem[s] = value === null ? null : { failoverMs: value };
    }
    for (const s of etcdColumns)
      ratios[s] = tenureMs !== null && etcdMs !== null ? etcdMs / tenureMs : null;
    rows.push({ workload: 'leader SIGKILL → first ack (ms)', clients: null, bySystem, ratios });
  }
  return rows;
}

const fmt = (n: number, digits = 0): string => n.toFixed(digits);

/** The table as text lines (fixed-width columns). */
export function formatTable(rows: readonly SummaryRow[], systems: readonly string[]): string[] {
  const etcdColumns = systems.filter((s) => s !== 'tenure');
  const header = [
    'workload',
    'clients',
    ...systems.map((s) => `${s} ops/s p50/p99 ms`),
    ...etcdColumns.map((s) => `tenure/${s}`),
  ];
  const body = rows.map((row) => [
    row.workload,
    row.clients === null ? '' : String(row.clients),
    ...systems.map((s) => {
      const cell = row.bySystem[s];
      if (cell === null || cell === undefined) return '—';
      if ('failoverMs' in cell) return fmt(cell.failoverMs);
      const errors = cell.errors > 0 ? ` (${cell.errors} err)` : '';
      return `${cell.opsPerSec} ${fmt(cell.p50Ms, 2)}/${fmt(cell.p99Ms, 1)}${errors}`;
    }),
    ...etcdColumns.map((s) => {
      const ratio = row.ratios[s];
      return ratio === null || ratio === undefined ? '—' : fmt(ratio, 2);
    }),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...body.map((r) => r[c]!.length)));
  const line = (cells: string[]): string =>
    cells.map((cell, c) => cell.padEnd(widths[c]!)).join('  ');
  return [line(header), ...body.map(line)];
}

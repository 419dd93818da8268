/**
 * `npm run bench:compare`: Tenure against etcd on this machine, side by side. Starts a three-node
 * Tenure cluster, runs every workload cell, SIGKILLs its leader and times the first acknowledged
 * write, stops it; then does the same with a three-node etcd cluster (driven through its JSON
 * gateway, then natively with `etcd3`); repeats for `--rounds` (A B A B …; never both clusters at
 * once). Prints the pooled table with Tenure/etcd ratios and writes
 * bench-results/compare-<time>.json with every run and the load average before and after.
 * `--help` lists the flags; the README beside this file explains the workloads.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { REPO_ROOT } from '../../support/cluster.js';
import { EtcdCluster, etcdVersion, findEtcd } from './etcd-cluster.js';
import { EtcdGrpcSystem } from './etcd-grpc-system.js';
import { EtcdHttpSystem } from './etcd-http-system.js';
import { runCell, type MeasuredCell } from './measure.js';
import type { RunStalls } from './stalls.js';
import {
  parseCompareOptions,
  WARMUP_CLIENTS,
  type CompareOptions,
  type SystemLabel,
} from './options.js';
import { formatTable, summarise, type FailoverRun } from './report.js';
import type { DrivenSystem, WorkloadId } from './system.js';
import { TenureSystem } from './tenure-system.js';

/** Load average (1, 5, 15 min) as printed by /proc/loadavg. */
function loadavg(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** Every (workload, clients) cell of a round, in table order. */
function cellOrder(o: CompareOptions): { workload: WorkloadId; clients: number }[] {
  return o.workloads.flatMap((workload) =>
    (workload === 'handoff' ? [o.handoffClients] : o.clients).map((clients) => ({
      workload,
      clients,
    })),
  );
}

/** The leader's stalls of a run, as printed after its figures ('' without them). */
function stallsText(stalls: Readonly<Record<string, RunStalls>> | undefined): string {
  const leader = Object.entries(stalls ?? {}).find(([id]) => id.endsWith('-leader'))?.[1];
  if (leader === undefined) return '';
  return ` leader loop delay p99 ${leader.loopDelayP99Ms} ms max ${leader.loopDelayMaxMs} ms GC ${leader.gcMsPerS} ms/s`;
}

/** Runs every cell of the round against one system, printing a line per run. */
async function runCells(
  system: DrivenSystem,
  o: CompareOptions,
  round: number,
  into: MeasuredCell[],
): Promise<void> {
  // Unmeasured warm-up (JIT, connection pools, etcd's first compactions) before the first cell.
  // 8 s at 16 clients: after 2 s of one client, a fresh Tenure's first cell ran about 1.4× slower
  // than the same requests later in its round (grant ×1 before pair ×1 showed it was the order).
  const warmup = {
    workload: 'pair' as const,
    clients: WARMUP_CLIENTS,
    seconds: o.warmupSeconds,
    round,
    tag: `${system.label}-r${round}-warm`,
  };
  if (o.warmupSeconds > 0) {
    const w = (await runCell(system, warmup)).run;
    console.log(
      `  ${system.label} warm-up (not measured): pair ×${WARMUP_CLIENTS} for ${o.warmupSeconds} s, ${w.opsPerSec} ops/s`,
    );
  }
  for (const { workload, clients } of cellOrder(o)) {
    const tag = `${system.label}-r${round}-c${clients}`;
    const cell = await runCell(system, { workload, clients, seconds: o.seconds, round, tag });
    const r = cell.run;
    console.log(
      `  ${system.label} ${workload} ×${clients}: ${r.opsPerSec} ops/s p50 ${r.p50Ms.toFixed(2)} ms p99 ${r.p99Ms.toFixed(1)} ms errors ${r.errors} cpu ${r.cpuUsPerOp.total} µs/op${stallsText(r.stalls)}`,
    );
    into.push(cell);
  }
}

/** One Tenure turn: start, cells, failover, stop. */
async function tenureTurn(
  o: CompareOptions,
  round: number,
  cells: MeasuredCell[],
  failovers: FailoverRun[],
): Promise<void> {
  const connections = Math.max(o.handoffClients, ...o.clients);
  const tenure = await TenureSystem.start(connections, o.profileDir);
  try {
    await runCells(tenure, o, round, cells);
    if (o.failover) {
      const ms = await tenure.failoverMs(o.failoverDeadlineMs);
      console.log(`  tenure failover: ${ms.toFixed(0)} ms`);
      failovers.push({ system: 'tenure', round, ms });
    }
  } finally {
    await tenure.stop();
  }
}

/** One etcd turn: start, cells through the gateway and/or gRPC, failover, stop. */
async function etcdTurn(
  binary: string,
  systems: readonly SystemLabel[],
  o: CompareOptions,
  round: number,
  cells: MeasuredCell[],
  failovers: FailoverRun[],
): Promise<void> {
  const connections = Math.max(o.handoffClients, ...o.clients);
  const cluster = await EtcdCluster.start(binary);
  try {
    const leader = await cluster.leader(10_000);
    const http = new EtcdHttpSystem(cluster, leader, connections);
    try {
      if (systems.includes('etcd-http')) await runCells(http, o, round, cells);
      if (systems.includes('etcd-grpc')) {
        const grpc = new EtcdGrpcSystem(cluster, leader);
        try {
          await runCells(grpc, o, round, cells);
        } finally {
          await grpc.close();
        }
      }
      if (o.failover) {
        const ms = await http.failoverMs(o.failoverDeadlineMs);
        console.log(`  etcd failover: ${ms.toFixed(0)} ms`);
        failovers.push({ system: 'etcd', round, ms });
      }
    } finally {
      await http.close();
    }
  } finally {
    await cluster.teardown();
  }
}

async function main(): Promise<void> {
  const o = parseCompareOptions(process.argv.slice(2));
  const etcdBinary = findEtcd();
  const systems = o.systems.filter((s) => s === 'tenure' || etcdBinary !== null);
  if (systems.length < o.systems.length)
    console.log(
      'no etcd binary ($ETCD_BIN or etcd on the PATH): Tenure only (apt-get install etcd-server)',
    );
  const startedAt = new Date().toISOString();
  const loadBefore = loadavg();
  console.log(
    `bench:compare ${systems.join(', ')}: ${o.rounds} round(s), ${o.seconds} s per run, load average ${loadBefore}, ${cpus().length} CPUs`,
  );
  const cells: MeasuredCell[] = [];
  const failovers: FailoverRun[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    console.log(`round ${round}/${o.rounds}`);
    if (systems.includes('tenure')) await tenureTurn(o, round, cells, failovers);
    const etcdSystems = systems.filter((s) => s !== 'tenure');
    if (etcdBinary !== null && etcdSystems.length > 0)
      await etcdTurn(etcdBinary, etcdSystems, o, round, cells, failovers);
  }
  const loadAfter = loadavg();
  const rows = summarise(cells, failovers, systems, cellOrder(o));
  const against = systems.some((s) => s !== 'tenure');
  console.log(
    `\n${systems.join(' vs ')}, 3 nodes each, loopback, fsync on, ${o.rounds} ${against ? 'alternated ' : ''}round(s) × ${o.seconds} s; medians of ops/s, pooled p50/p99${against && systems.includes('tenure') ? '; ratios > 1 = Tenure better' : ''}.`,
  );
  console.log(`load average before ${loadBefore}, after ${loadAfter}; ${cpus().length} CPUs\n`);
  for (const line of formatTable(rows, systems)) console.log(line);
  const dir = o.outDir === null ? join(REPO_ROOT, 'bench-results') : resolve(o.outDir);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `compare-${startedAt.replace(/[:.]/g, '-')}.json`);
  const document = {
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? '?',
      loadavgBefore: loadBefore,
      loadavgAfter: loadAfter,
    },
    node: process.version,
    etcd: etcdBinary === null ? null : etcdVersion(etcdBinary),
    options: o,
    systems,
    summary: rows,
    runs: cells.map((c) => c.run),
    failovers,
  };
  writeFileSync(file, JSON.stringify(document, null, 2));
  console.log(`\nwritten ${file}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

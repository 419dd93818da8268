/**
 * Command line of the comparison bench (commander). `--help` prints it; a bad value exits 2
 * naming the flag.
 */
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { WORKLOAD_IDS, type WorkloadId } from './system.js';

/** The systems the bench can drive, in the order of the table's columns. */
export const SYSTEM_LABELS = ['tenure', 'etcd-http', 'etcd-grpc'] as const;
export type SystemLabel = (typeof SYSTEM_LABELS)[number];

/** Parsed options. */
export interface CompareOptions {
  /** Seconds of each timed run of one cell. */
  readonly seconds: number;
  /** Unmeasured acquire+release seconds before each system's first cell (0 = none). */
  readonly warmupSeconds: number;
  /** Alternations: each round runs Tenure, then etcd (A B A B …). */
  readonly rounds: number;
  /** Client counts of pair, grant, renew and read. */
  readonly clients: readonly number[];
  /** Client count of the contended hand-off. */
  readonly handoffClients: number;
  readonly workloads: readonly WorkloadId[];
  /** Systems asked for; etcd ones are dropped (with a notice) when no etcd binary is found. */
  readonly systems: readonly SystemLabel[];
  /** Whether each round ends by SIGKILLing the leader and timing the first acknowledged write. */
  readonly failover: boolean;
  /** Bound of the failover measure. */
  readonly failoverDeadlineMs: number;
  /** Directory of the JSON result file. */
  readonly outDir: string | null;
  readonly smoke: boolean;
  /** Directory of .cpuprofile files of the Tenure servers (null = no profiling). */
  readonly profileDir: string | null;
}

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('not a positive integer');
  return n;
};
const positiveNumber = (value: string): number => {
  const n = Number(value);
  if (!(n > 0)) throw new InvalidArgumentError('not a positive number');
  return n;
};
const nonNegativeNumber = (value: string): number => {
  const n = Number(value);
  if (!(n >= 0)) throw new InvalidArgumentError('not a number ≥ 0');
  return n;
};
const intList = (value: string): number[] => value.split(',').map(positiveInt);
const listOf =
  <T extends string>(allowed: readonly T[]) =>
  (value: string): T[] =>
    value.split(',').map((item) => {
      if (!allowed.includes(item as T))
        throw new InvalidArgumentError(`"${item}" is not one of ${allowed.join(', ')}`);
      return item as T;
    });

/** Clients of the unmeasured warm-up before each system's cells (--warmup-seconds). */
export const WARMUP_CLIENTS = 16;

/** Parses `argv` (without node and script); exits on --help or a bad flag. */
export function parseCompareOptions(argv: readonly string[]): CompareOptions {
  const program = new Command('bench:compare')
    .description(
      'Tenure vs etcd, three nodes each on loopback, fsync on, started one after the ' +
        'other, runs alternated (Tenure, etcd, Tenure, etcd, …). Uses an installed etcd ' +
        '($ETCD_BIN or `etcd` on the PATH; Debian: apt-get install etcd-server).',
    )
    .addOption(
      new Option('--seconds <n>', 'seconds per timed run').default(5).argParser(positiveNumber),
    )
    .addOption(
      new Option(
        '--warmup-seconds <n>',
        `unmeasured acquire+release by ${WARMUP_CLIENTS} clients before each turn`,
      )
        .default(8)
        .argParser(nonNegativeNumber),
    )
    .addOption(
      new Option('--rounds <n>', 'alternated rounds (A B per round)')
        .default(3)
        .argParser(positiveInt),
    )
    .addOption(
      new Option('--clients <list>', 'client counts of pair, grant, renew, read')
        .default([1, 16, 64], '1,16,64')
        .argParser(intList),
    )
    .addOption(
      new Option('--handoff-clients <n>', 'clients contending for one name')
        .default(8)
        .argParser(positiveInt),
    )
    .addOption(
      new Option('--workloads <list>', `among ${WORKLOAD_IDS.join(',')}`)
        .default([...WORKLOAD_IDS], WORKLOAD_IDS.join(','))
        .argParser(listOf(WORKLOAD_IDS)),
    )
    .addOption(
      new Option('--systems <list>', `among ${SYSTEM_LABELS.join(',')}`)
        .default([...SYSTEM_LABELS], SYSTEM_LABELS.join(','))
        .argParser(listOf(SYSTEM_LABELS)),
    )
    .option('--no-failover', 'skip the leader SIGKILL → first acknowledged write measure')
    .addOption(
      new Option('--failover-deadline-ms <n>', 'bound of the failover measure')
        .default(30_000)
        .argParser(positiveInt),
    )
    .option('--out <dir>', 'directory of the JSON result file (default <repo>/bench-results)')
    .option(
      '--profile <dir>',
      'run the Tenure servers under the V8 CPU profiler, write .cpuprofile files into <dir> (implies --no-failover: a SIGKILLed leader writes none)',
    )
    .option(
      '--smoke',
      'tiny run to keep the bench from rotting: 1 client, 1 s, 1 round, no warm-up',
    )
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
    .parse([...argv], { from: 'user' });
  const o = program.opts<{
    seconds: number;
    warmupSeconds: number;
    rounds: number;
    clients: number[];
    handoffClients: number;
    workloads: WorkloadId[];
    systems: SystemLabel[];
    failover: boolean;
    failoverDeadlineMs: number;
    out?: string;
    smoke?: boolean;
    profile?: string;
  }>();
  const smoke = o.smoke === true;
  return {
    seconds: smoke ? 1 : o.seconds,
    warmupSeconds: smoke ? 0 : o.warmupSeconds,
    rounds: smoke ? 1 : o.rounds,
    clients: smoke ? [1] : o.clients,
    handoffClients: smoke ? 1 : o.handoffClients,
    workloads: o.workloads,
    systems: o.systems,
    failover: o.failover && o.profile === undefined,
    failoverDeadlineMs: o.failoverDeadlineMs,
    outDir: o.out ?? null,
    smoke,
    profileDir: o.profile === undefined ? null : resolve(o.profile),
  };
}

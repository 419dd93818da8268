/**
 * The chaos CLI's options, parsed with commander (one declaration gives parsing, checks and
 * `--help`). `parseChaosArgs` never exits by itself: it throws `CommanderError` (with
 * `exitCode` 0 for `--help`, 1 for a usage error, whose message the caller prints) and the CLI
 * maps that to its exit codes.
 */
import { join, resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { faultKinds } from './faults/index.js';

/** Parsed options. `durationMs` is the mixed run's length; `seed` is random unless given. */
export interface ChaosArgs {
  readonly durationMs: number;
  readonly faults: string;
  readonly seed: number;
  readonly backend: 'netns' | 'compose';
  readonly out: string;
  readonly scenario: string | null;
  readonly repetitions: number;
  readonly list: boolean;
  readonly cleanup: boolean;
  readonly all: boolean;
  readonly keepData: boolean;
  readonly deps: boolean;
  readonly unsafeStaleReads: boolean;
}

/** Defaults that depend on the caller: the checkout root, the fault list and a random seed. */
export interface ChaosArgDefaults {
  readonly repoRoot: string;
  readonly faults: readonly string[];
  readonly randomSeed: () => number;
}

const positive = (text: string): number => {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError(`must be a positive number, got "${text}"`);
  return n;
};

const seedOf = (text: string): number => {
  if (!/^\d+$/.test(text))
    throw new InvalidArgumentError(`must be a non-negative integer, got "${text}"`);
  return Number(text) >>> 0;
};

/** The commander program (also the source of `--help`). Output goes through `write`. */
export function chaosProgram(defaults: ChaosArgDefaults, write: (text: string) => void): Command {
  return new Command('npm run chaos --')
    .description('real faults against a real Tenure cluster, judged by history checkers')
    .exitOverride()
    .configureOutput({ writeOut: write, writeErr: () => {} })
    .allowExcessArguments(false)
    .option('--minutes <n>', 'length of a mixed run in minutes (default 3)', positive)
    .option('--seconds <n>', 'length of a mixed run in seconds (instead of --minutes)', positive)
    .option(
      '--faults <list>',
      `comma-separated fault kinds of ${faultKinds.join(',')}; one the backend or topology cannot do is skipped`,
      defaults.faults.join(','),
    )
    .option('--seed <s>', 'PRNG seed (default random, printed; replay with it)', seedOf)
    .addOption(
      new Option('--backend <kind>', 'cluster backend (netns needs root)')
        .choices(['netns', 'compose'])
        .default('netns'),
    )
    .option('--out <dir>', 'parent of run folders (default <repo>/chaos-runs)')
    .option('--scenario <names>', 'run named failure scenarios (BC-XX[,BC-YY]) instead')
    .option('--repetitions <n>', 'scenario rounds', positive, 3)
    .option('--list', 'list scenarios', false)
    .option('--cleanup', 'remove runs whose owner process is dead (never live runs)', false)
    .option('--all', 'with --cleanup: also namespaces/links no state file accounts for', false)
    .option('--keep-data', 'keep node data dirs of passing runs', false)
    .option('--no-deps', 'do not run scripts/chaos-deps.sh first')
    .option(
      '--unsafe-stale-reads',
      'deliberately unsafe: workload reads use ?consistency=stale (the checker must flag it)',
      false,
    );
}

/** Parses `argv` (without node and script). Throws `CommanderError` on `--help` and bad input. */
export function parseChaosArgs(
  argv: readonly string[],
  defaults: ChaosArgDefaults,
  write: (text: string) => void = (text) => process.stderr.write(text),
): ChaosArgs {
  const program = chaosProgram(defaults, write);
  program.parse([...argv], { from: 'user' });
  const o = program.opts<{
    minutes?: number;
    seconds?: number;
    faults: string;
    seed?: number;
    backend: 'netns' | 'compose';
    out?: string;
    scenario?: string;
    repetitions: number;
    list: boolean;
    cleanup: boolean;
    all: boolean;
    keepData: boolean;
    deps: boolean;
    unsafeStaleReads: boolean;
  }>();
  const durationMs =
    o.seconds !== undefined ? Math.round(o.seconds * 1000) : Math.round((o.minutes ?? 3) * 60_000);
  return {
    durationMs,
    faults: o.faults,
    seed: o.seed ?? defaults.randomSeed(),
    backend: o.backend,
    out: o.out !== undefined ? resolve(o.out) : join(defaults.repoRoot, 'chaos-runs'),
    scenario: o.scenario ?? null,
    repetitions: Math.round(o.repetitions),
    list: o.list,
    cleanup: o.cleanup,
    all: o.all,
    keepData: o.keepData,
    deps: o.deps,
    unsafeStaleReads: o.unsafeStaleReads,
  };
}

/**
 * `npm run chaos -- [options]`: the chaos harness CLI (root only for the netns backend).
 *
 *   --minutes N | --seconds N   length of a mixed run (default 3 minutes)
 *   --faults a,b,…              crash,pause,partition,netem,clock,restart-all,rolling-restart
 *                               (default crash,pause,partition,netem,clock)
 *   --seed S                    PRNG seed (default: random, printed; replay with it)
 *   --backend netns|compose     default netns
 *   --out DIR                   parent of run folders (default <repo>/chaos-runs)
 *   --scenario BC-XX[,BC-YY]    run named failure scenarios instead of a mixed run
 *   --repetitions N             scenario rounds (default 3)
 *   --list                      list scenarios
 *   --cleanup [--all]           remove runs whose owner process is dead (--all: also
 *                               namespaces/links no state file accounts for; never live runs)
 *   --keep-data                 keep node data dirs of passing runs
 *   --no-deps                   do not run scripts/chaos-deps.sh first
 *   --unsafe-stale-reads        deliberately unsafe: workload reads use ?consistency=stale
 *                               (the linearizability checker must flag the run)
 * Exit code: 0 all verdicts pass, 1 a verdict failed, 2 usage or setup error.
 */
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseFaultKinds } from './faults/index.js';
import { runMixed } from './runner/mixed.js';
import { defaultFaultKinds, type SessionResult } from './runner/session.js';
import { runScenario } from './scenarios/run-scenario.js';
import { scenarios } from './scenarios/registry.js';
import { cleanupLeftovers } from './topology/netns.js';

/** The checkout root (cli.js lives in tools/chaos/dist or tools/chaos/src). */
const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

interface CliArgs {
  durationMs: number;
  faults: string;
  seed: number;
  backend: 'netns' | 'compose';
  out: string;
  scenario: string | null;
  repetitions: number;
  list: boolean;
  cleanup: boolean;
  all: boolean;
  keepData: boolean;
  deps: boolean;
  unsafeStaleReads: boolean;
}

const helpText = `npm run chaos -- [options]
  --minutes N | --seconds N   length of a mixed run (default 3 minutes)
  --faults a,b,...            crash,pause,partition,netem,clock,restart-all,rolling-restart
                              (default crash,pause,partition,netem,clock)
  --seed S                    PRNG seed (default random, printed; replay with it)
  --backend netns|compose     default netns (root)
  --out DIR                   parent of run folders (default <repo>/chaos-runs)
  --scenario BC-XX[,BC-YY]    run named failure scenarios instead of a mixed run
  --repetitions N             scenario rounds (default 3)
  --list                      list scenarios
  --cleanup [--all]           remove runs whose owner process is dead (--all: also
                              namespaces/links no state file accounts for; never live runs)
  --keep-data                 keep node data dirs of passing runs
  --no-deps                   do not run scripts/chaos-deps.sh first
  --unsafe-stale-reads        deliberately unsafe: workload reads use ?consistency=stale
                              (the linearizability checker must flag the run)`;

function usage(message: string): never {
  console.error(
    `chaos: ${message}\n(see tools/chaos/README.md; e.g. npm run chaos -- --minutes 3 --seed 42)`,
  );
  process.exit(2);
}

function parseArgs(argv: readonly string[]): CliArgs {
  const args: CliArgs = {
    durationMs: 3 * 60_000,
    faults: defaultFaultKinds.join(','),
    seed: randomInt(1, 2 ** 31 - 1),
    backend: 'netns',
    out: join(repoRoot, 'chaos-runs'),
    scenario: null,
    repetitions: 3,
    list: false,
    cleanup: false,
    all: false,
    keepData: false,
    deps: true,
    unsafeStaleReads: false,
  };
  const value = (i: number, flag: string): string => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) usage(`${flag} needs a value`);
    return v;
  };
  const positive = (text: string, flag: string): number => {
    const n = Number(text);
    if (!Number.isFinite(n) || n <= 0) usage(`${flag} must be a positive number, got "${text}"`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    switch (flag) {
      case '--minutes':
        args.durationMs = Math.round(positive(value(i++, flag), flag) * 60_000);
        break;
      case '--seconds':
        args.durationMs = Math.round(positive(value(i++, flag), flag) * 1000);
        break;
      case '--faults':
        args.faults = value(i++, flag);
        break;
      case '--seed': {
        const text = value(i++, flag);
        if (!/^\d+$/.test(text)) usage(`--seed must be a non-negative integer, got "${text}"`);
        args.seed = Number(text) >>> 0;
        break;
      }
      case '--backend': {
        const b = value(i++, flag);
        if (b !== 'netns' && b !== 'compose')
          usage(`--backend must be netns or compose, got "${b}"`);
        args.backend = b;
        break;
      }
      case '--out':
        args.out = resolve(value(i++, flag));
        break;
      case '--scenario':
        args.scenario = value(i++, flag);
        break;
      case '--repetitions':
        args.repetitions = Math.round(positive(value(i++, flag), flag));
        break;
      case '--list':
        args.list = true;
        break;
      case '--cleanup':
        args.cleanup = true;
        break;
      case '--all':
        args.all = true;
        break;
      case '--keep-data':
        args.keepData = true;
        break;
      case '--no-deps':
        args.deps = false;
        break;
      case '--unsafe-stale-reads':
        args.unsafeStaleReads = true;
        break;
      case '--help':
      case '-h':
        console.log(helpText);
        return process.exit(0);
      default:
        usage(`unknown option ${flag}`);
    }
  }
  return args;
}

function printResult(result: SessionResult): void {
  for (const v of result.verdicts)
    console.log(
      `  ${v.ok ? 'PASS' : 'FAIL'} ${v.checker}${v.ok ? '' : `: ${v.error ?? v.violations[0]?.message ?? ''}`}`,
    );
  console.log(`  run folder: ${result.runDir} (summary.md, timeline.html)`);
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.list) {
    for (const s of scenarios) console.log(`${s.name}  ${s.title}  [${s.faults}]`);
    return 0;
  }
  if (args.cleanup) {
    const report = cleanupLeftovers({ unowned: args.all });
    console.log(
      `removed ${report.prefixes.length} run(s): ${report.prefixes.join(' ') || '-'}; namespaces ${report.namespaces.length}, links ${report.links.length}`,
    );
    for (const k of report.kept) console.log(`kept ${k.prefix}: ${k.reason}`);
    return 0;
  }
  if (args.backend === 'netns' && process.getuid?.() !== 0) usage('the netns backend needs root');
  if (args.deps && args.backend === 'netns') {
    const deps = spawnSync('bash', [join(repoRoot, 'scripts/chaos-deps.sh')], { stdio: 'inherit' });
    if (deps.status !== 0) usage('scripts/chaos-deps.sh failed');
  }
  const log = (line: string): void => console.log(line);
  // Read by the workload's defaultWorkloadOptions (tenure-workload.ts).
  if (args.unsafeStaleReads) process.env['TENURE_CHAOS_STALE_READS'] = '1';
  const common = {
    backend: args.backend,
    seed: args.seed,
    outRoot: args.out,
    repoRoot,
    log,
    keepData: args.keepData,
  };
  let ok = true;
  if (args.scenario !== null) {
    for (const name of args.scenario.split(',').map((s) => s.trim().toUpperCase())) {
      console.log(`== scenario ${name} (seed ${args.seed})`);
      const result = await runScenario(name, { ...common, repetitions: args.repetitions });
      printResult(result);
      ok &&= result.ok;
    }
  } else {
    const faults = (() => {
      try {
        return parseFaultKinds(args.faults);
      } catch (error) {
        return usage((error as Error).message);
      }
    })();
    console.log(
      `== mixed run: ${Math.round(args.durationMs / 1000)} s, faults ${faults.join(',')}, seed ${args.seed}, backend ${args.backend}`,
    );
    const result = await runMixed({ ...common, durationMs: args.durationMs, faults });
    printResult(result);
    ok = result.ok;
  }
  console.log(ok ? 'chaos: PASS' : 'chaos: FAIL');
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    console.error(`chaos: ${error.stack ?? error.message}`);
    process.exit(2);
  },
);

/**
 * `npm run chaos -- [options]`: the chaos harness CLI (root only for the netns backend). The
 * options are declared in cli-args.ts (`npm run chaos -- --help` lists them).
 * Exit code: 0 all verdicts pass, 1 a verdict failed, 2 usage or setup error.
 */
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { join, resolve } from 'node:path';
import { CommanderError } from 'commander';
import { fileURLToPath } from 'node:url';
import { parseChaosArgs, type ChaosArgs } from './cli-args.js';
import { parseFaultKinds } from './faults/index.js';
import { runMixed } from './runner/mixed.js';
import { defaultFaultKinds, type SessionResult } from './runner/session.js';
import { runScenario } from './scenarios/run-scenario.js';
import { scenarios } from './scenarios/registry.js';
import { cleanupLeftovers } from './topology/netns.js';

/** The checkout root (cli.js lives in tools/chaos/dist or tools/chaos/src). */
const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

function usage(message: string): never {
  console.error(
    `chaos: ${message}\n(see tools/chaos/README.md; e.g. npm run chaos -- --minutes 3 --seed 42)`,
  );
  process.exit(2);
}

/** The options, or the process exits: 0 after `--help`, 2 on a usage error. */
function parseArgs(argv: readonly string[]): ChaosArgs {
  const defaults = {
    repoRoot,
    faults: defaultFaultKinds,
    randomSeed: () => randomInt(1, 2 ** 31 - 1),
  };
  try {
    return parseChaosArgs(argv, defaults, (text) => process.stdout.write(text));
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) process.exit(0);
      return usage(error.message.replace(/^error: /, ''));
    }
    throw error;
  }
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

/**
 * `npm run sim` — run many seeded simulations of the Raft core and report any violation.
 *
 *   npm run sim -- --seeds N [--from S] [--nodes 3|5] [--mode safety|liveness] [--membership] [--unsafe FLAG]…
 *   npm run sim -- --seed S [--nodes 3|5] [--mode safety|liveness] [--trace]  (replay one seed: stats,
 *                                                                               and with --trace its events)
 *
 * `--membership` adds membership changes as faults (simulation.ts SimOptions.membership).
 * Prints a progress line on stderr, one line per failing seed with the command that replays it, and
 * a summary. Exit code 0 when every seed passed, 1 on any violation, 2 on bad flags.
 */
import { parseArgs } from 'node:util';
import type { UnsafeVariants } from '../core/types.js';
import { runSimulation } from './simulation.js';
import type { SimMode, SimResult } from './simulation.js';
import {
  isUnsafeVariantName,
  UNSAFE_VARIANT_NAMES,
  UNSAFE_VARIANT_RUNS,
} from './unsafe-variants.js';

/** Progress lines at most this often (wall ms). */
const PROGRESS_INTERVAL_MS = 1000;

interface CliOptions {
  readonly seeds: number;
  readonly from: number;
  readonly nodes: 3 | 5;
  readonly mode: SimMode;
  readonly membership: boolean;
  readonly unsafe: UnsafeVariants | undefined;
  readonly single: boolean;
  readonly bail: boolean;
  readonly trace: boolean;
}

function usage(message: string): never {
  process.stderr.write(
    `${message}\nusage: npm run sim -- --seeds N [--from S] [--nodes 3|5] [--mode safety|liveness] ` +
      `[--membership] [--unsafe ${UNSAFE_VARIANT_NAMES.join('|')}] [--bail]\n       npm run sim -- --seed S [--nodes 3|5] [--mode safety|liveness] [--membership] [--unsafe FLAG] [--trace]\n`,
  );
  process.exit(2);
}

function parseIntFlag(
  name: string,
  text: string | undefined,
  fallback: number,
  min: number,
): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min)
    usage(`--${name} must be an integer ≥ ${min}, got '${text}'`);
  return n;
}

function parseCli(argv: readonly string[]): CliOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        seeds: { type: 'string' },
        from: { type: 'string' },
        seed: { type: 'string' },
        nodes: { type: 'string' },
        mode: { type: 'string' },
        unsafe: { type: 'string', multiple: true },
        membership: { type: 'boolean' },
        bail: { type: 'boolean' },
        trace: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (err) {
    usage((err as Error).message);
  }
  const nodes = parseIntFlag('nodes', values.nodes, 3, 3);
  if (nodes !== 3 && nodes !== 5) usage(`--nodes must be 3 or 5, got ${nodes}`);
  const mode = values.mode ?? 'safety';
  if (mode !== 'safety' && mode !== 'liveness')
    usage(`--mode must be safety or liveness, got '${mode}'`);
  let unsafe: Record<string, boolean> | undefined;
  for (const flag of values.unsafe ?? []) {
    if (!isUnsafeVariantName(flag))
      usage(`--unsafe must be one of ${UNSAFE_VARIANT_NAMES.join(', ')}`);
    if (UNSAFE_VARIANT_RUNS[flag] === 'membership' && values.membership !== true)
      usage(`--unsafe ${flag} breaks a membership rule: add --membership`);
    unsafe = { ...unsafe, [flag]: true };
  }
  const single = values.seed !== undefined;
  if (values.trace === true && !single) usage('--trace needs --seed');
  if (single && (values.seeds !== undefined || values.from !== undefined))
    usage('--seed replays one seed; drop --seeds/--from');
  return {
    seeds: single ? 1 : parseIntFlag('seeds', values.seeds, 100, 1),
    from: single
      ? parseIntFlag('seed', values.seed, 1, 0)
      : parseIntFlag('from', values.from, 1, 0),
    nodes,
    mode,
    membership: values.membership === true,
    unsafe: unsafe as UnsafeVariants | undefined,
    single,
    bail: values.bail === true,
    trace: values.trace === true,
  };
}

function describeFailure(r: SimResult): string {
  return `FAIL seed ${r.seed}: ${r.violation?.message ?? '?'}\n  replay: ${r.replay}\n`;
}

function main(): void {
  const opts = parseCli(process.argv.slice(2));
  const startedMs = performance.now();
  let lastProgressMs = startedMs;
  let failures = 0;
  let events = 0;
  let done = 0;
  for (let seed = opts.from; seed < opts.from + opts.seeds; seed++) {
    const result = runSimulation({
      seed,
      nodes: opts.nodes,
      mode: opts.mode,
      membership: opts.membership,
      ...(opts.unsafe === undefined ? {} : { unsafe: opts.unsafe }),
      ...(opts.trace ? { trace: (line: string) => process.stdout.write(`${line}\n`) } : {}),
    });
    done++;
    events += result.stats.events;
    if (!result.ok) {
      failures++;
      process.stderr.write(`\n${describeFailure(result)}`);
      if (opts.bail) break;
    }
    if (opts.single) process.stdout.write(`${JSON.stringify(result.stats, null, 2)}\n`);
    const nowMs = performance.now();
    if (nowMs - lastProgressMs >= PROGRESS_INTERVAL_MS) {
      lastProgressMs = nowMs;
      const rate = done / ((nowMs - startedMs) / 1000);
      process.stderr.write(
        `\rsim ${opts.mode} nodes=${opts.nodes}${opts.membership ? ' membership' : ''}: ${done}/${opts.seeds} seeds, ${failures} failing, ${rate.toFixed(1)} seeds/s   `,
      );
    }
  }
  const wallS = (performance.now() - startedMs) / 1000;
  process.stderr.write(
    `\nsim ${opts.mode} nodes=${opts.nodes}${opts.membership ? ' membership' : ''}: ${done} seeds from ${opts.from}, ${failures} failing, ` +
      `${events} events, ${wallS.toFixed(1)}s wall\n`,
  );
  process.exitCode = failures > 0 ? 1 : 0;
}

main();

// Proves the chaos CLI's options: defaults, lengths, seeds, choices, and that bad input and --help
// end in a CommanderError (exit code 1 / 0) instead of exiting the process.
import t from 'tap';
import { CommanderError } from 'commander';
import { parseChaosArgs } from './cli-args.js';

const defaults = { repoRoot: '/repo', faults: ['crash', 'pause'], randomSeed: () => 77 };
const parse = (...argv: string[]) => parseChaosArgs(argv, defaults, () => {});

t.test('defaults: a 3-minute netns mixed run with a random seed', async (t) => {
  t.match(parse(), {
    durationMs: 180_000,
    faults: 'crash,pause',
    seed: 77,
    backend: 'netns',
    out: '/repo/chaos-runs',
    scenario: null,
    repetitions: 3,
    deps: true,
    unsafeStaleReads: false,
  });
});

t.test('lengths, seed, scenario and flags', async (t) => {
  t.equal(parse('--minutes', '0.5').durationMs, 30_000);
  t.equal(parse('--seconds', '45').durationMs, 45_000);
  t.equal(parse('--seed', '424242').seed, 424242);
  t.match(parse('--scenario', 'BC-08', '--repetitions', '20', '--no-deps', '--keep-data'), {
    scenario: 'BC-08',
    repetitions: 20,
    deps: false,
    keepData: true,
  });
  t.equal(parse('--backend', 'compose').backend, 'compose');
});

t.test('bad input and --help throw CommanderError with their exit codes', async (t) => {
  const code = (...argv: string[]): number | null => {
    try {
      parse(...argv);
      return null;
    } catch (error) {
      return error instanceof CommanderError ? error.exitCode : -1;
    }
  };
  t.equal(code('--minutes', 'x'), 1);
  t.equal(code('--seed', '-3'), 1);
  t.equal(code('--backend', 'k8s'), 1);
  t.equal(code('--bogus'), 1);
  t.equal(code('--help'), 0);
});

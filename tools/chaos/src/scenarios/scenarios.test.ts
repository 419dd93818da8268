// Proves that the automated docs/failure-scenarios.md cases (BC-05, BC-07, BC-08, BC-10, BC-20, BC-26)
// each hold on a real three-node cluster in network namespaces: the scenario's own expectation and
// every general checker pass (one repetition each here; `npm run chaos -- --scenario` runs more).
import t from 'tap';
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runScenario } from './run-scenario.js';
import { findScenario, scenarios } from './registry.js';
import { cleanupLeftovers } from '../topology/netns.js';

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../..');
const isRoot = process.getuid?.() === 0;
const seed = Number(process.env['TENURE_CHAOS_SEED'] ?? 20261129) >>> 0;

t.test('registry names', async (t) => {
  t.equal(findScenario('bc8').name, 'BC-08');
  t.equal(findScenario('BC-26').name, 'BC-26');
  t.throws(() => findScenario('BC-99'), /unknown scenario/);
});

t.test(
  'scenarios on a namespaced cluster',
  { skip: isRoot ? false : 'needs root (network namespaces, iptables)', timeout: 900_000 },
  async (t) => {
    cleanupLeftovers(); // runs whose owner process died (never a live run's)
    const deps = spawnSync('bash', [join(repoRoot, 'scripts/chaos-deps.sh')], { encoding: 'utf8' });
    t.equal(deps.status, 0, `scripts/chaos-deps.sh: ${deps.stdout}${deps.stderr}`);
    t.ok(
      existsSync(join(repoRoot, 'packages/server/dist/main.js')),
      'server is built (npm run build)',
    );
    for (const scenario of scenarios) {
      await t.test(`${scenario.name} ${scenario.title}`, async (t) => {
        const result = await runScenario(scenario.name, {
          backend: 'netns',
          seed,
          repetitions: 1,
          outRoot: join(repoRoot, 'chaos-runs'),
          repoRoot,
          searchBudgetMs: 10_000,
          log: (line) => t.comment(line),
        });
        t.comment(`run folder ${result.runDir}`);
        for (const v of result.verdicts)
          t.ok(
            v.ok,
            `${v.checker}: ${
              v.ok
                ? 'pass'
                : (v.error ??
                  v.violations
                    .slice(0, 3)
                    .map((x) => x.message)
                    .join(' | '))
            }`,
          );
      });
    }
  },
);

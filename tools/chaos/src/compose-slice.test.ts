// Proves that the repository's docker-compose.yml runs a working three-node cluster and that a
// short seeded mixed run against it (crash, pause, whole-node partition) leaves every checker
// passing (docs/operations.md, docker-compose). Runs only where a container engine is ready
// (scripts/container-engine.sh --check); elsewhere it is skipped with the command that sets one up.
// The image is rebuilt first so the slice tests this checkout, not an older image.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMixed } from './runner/mixed.js';

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
/** Fixed by default so every run replays one schedule; override with TENURE_CHAOS_SEED. */
const seed = Number(process.env['TENURE_CHAOS_SEED'] ?? 20261201) >>> 0;
const durationMs = Number(process.env['TENURE_COMPOSE_SLICE_MS'] ?? 60_000);
/** Building the image: minutes when the dependency layer is cached, more when it is not. */
const buildTimeoutMs = 600_000;

/** Why the slice cannot run here, or null when a container engine and the base image are ready. */
function skipReason(): string | null {
  if (process.env['TENURE_COMPOSE_SLICE'] === '0') return 'TENURE_COMPOSE_SLICE=0';
  const check = spawnSync('bash', [join(repoRoot, 'scripts/container-engine.sh'), '--check'], {
    encoding: 'utf8',
  });
  return check.status === 0
    ? null
    : 'no container engine ready here (as root, scripts/container-engine.sh sets one up)';
}

const reason = skipReason();
t.test(
  'docker-compose cluster under a mixed chaos slice',
  { skip: reason ?? false, timeout: 880_000 },
  async (t) => {
    const build = spawnSync('docker-compose', ['-f', 'docker-compose.yml', 'build', '--quiet'], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: buildTimeoutMs,
      env: { ...process.env, TENURE_BASE_IMAGE: 'tenure-base:local' },
    });
    t.equal(build.status, 0, `docker-compose build: ${build.stderr.slice(-2000)}`);
    if (build.status !== 0) return;
    // The image starts: the server resolves its production dependencies inside it.
    const version = spawnSync('docker', ['run', '--rm', 'tenure:local', '--version'], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    t.equal(version.status, 0, `tenure:local --version: ${version.stdout}${version.stderr}`);
    if (version.status !== 0) return;
    const result = await runMixed({
      backend: 'compose',
      seed,
      durationMs,
      faults: ['crash', 'pause', 'partition'],
      outRoot: join(repoRoot, 'chaos-runs'),
      repoRoot,
      searchBudgetMs: 20_000,
      firstLeaderWaitMs: 120_000,
      log: (line) => t.comment(line),
    });
    t.comment(`run folder ${result.runDir} (seed ${seed})`);
    t.ok(
      result.record.faults.some((f) => f.action === 'inject'),
      'faults were injected',
    );
    t.ok(
      result.record.ops.some((op) => op.outcome.status === 'ok'),
      'operations succeeded',
    );
    for (const v of result.verdicts) {
      const why = v.violations
        .slice(0, 3)
        .map((x) => x.message)
        .join(' | ');
      t.ok(v.ok, `${v.checker}: ${v.ok ? 'pass' : (v.error ?? why)}`);
    }
  },
);

// Proves the comparison bench still runs end to end: `--smoke` (1 client, 1 s per workload, one round, Tenure and — when an etcd binary is installed — etcd) answers every workload without errors, times a failover and writes its JSON result naming the machine load and Tenure's leader stalls (event-loop delay, GC), and that the stall figures are read from the metrics page. Skipped when the bench is not built.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { REPO_ROOT, SERVER_MAIN } from '../../support/cluster.js';
import { parseStalls, stallsBetween } from './stalls.js';

const CLI = join(REPO_ROOT, 'test', 'dist', 'bench', 'compare', 'cli.js');

/** Runs the CLI to its exit; resolves with the exit code and the output. */
function runCli(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

const missing = [CLI, SERVER_MAIN].filter((file) => !existsSync(file));

t.test(
  'bench:compare --smoke',
  { skip: missing.length > 0 ? `not built: ${missing.join(', ')}` : false, timeout: 600_000 },
  async (t) => {
    const outDir = mkdtempSync(join(tmpdir(), 'compare-smoke-'));
    t.teardown(() => rmSync(outDir, { recursive: true, force: true }));
    const { code, output } = await runCli(['--smoke', '--out', outDir]);
    t.equal(code, 0, `exit code (output:\n${output})`);
    const files = readdirSync(outDir).filter((f) => f.startsWith('compare-'));
    t.equal(files.length, 1, 'one result file');
    const result = JSON.parse(readFileSync(join(outDir, files[0]!), 'utf8'));
    t.match(result.machine, { loadavgBefore: /^\S+ \S+ \S+$/, loadavgAfter: /^\S+ \S+ \S+$/ });
    t.ok(result.systems.includes('tenure'), 'Tenure was driven');
    for (const run of result.runs) {
      t.equal(run.errors, 0, `${run.system} ${run.workload}: no errors`);
      t.ok(run.ops > 0, `${run.system} ${run.workload}: at least one op`);
    }
    const workloads = new Set(
      result.runs
        .filter((r: { system: string }) => r.system === 'tenure')
        .map((r: { workload: string }) => r.workload),
    );
    t.same([...workloads].sort(), ['grant', 'handoff', 'pair', 'read', 'renew']);
    for (const run of result.runs.filter((r: { system: string }) => r.system === 'tenure')) {
      const leader = Object.entries(run.stalls ?? {}).find(([id]) => id.endsWith('-leader'));
      t.ok(leader, `${run.workload}: the leader's stalls were scraped`);
      t.match(leader?.[1], { loopDelayP99Ms: Number, loopDelayMaxMs: Number, gcMsPerS: Number });
    }
    t.ok(
      result.failovers.some(
        (f: { system: string; ms: number }) => f.system === 'tenure' && f.ms > 0,
      ),
      'Tenure failover timed',
    );
  },
);

t.test(
  'stall figures: read from the metrics page, GC as the difference over the run',
  async (t) => {
    const page = (p99: number, max: number, minor: number) =>
      [
        '# HELP tenure_event_loop_delay_seconds x',
        `tenure_event_loop_delay_seconds{quantile="0.5"} 0.001`,
        `tenure_event_loop_delay_seconds{quantile="0.99"} ${p99}`,
        `tenure_event_loop_delay_seconds{quantile="1"} ${max}`,
        `tenure_gc_pause_seconds_total{kind="minor"} ${minor}`,
        `tenure_gc_pause_seconds_total{kind="major"} 0.5`,
      ].join('\n');
    const before = parseStalls(page(0.002, 0.004, 1));
    t.same(before, { loopDelayP99S: 0.002, loopDelayMaxS: 0.004, gcPauseS: 1.5 });
    const after = parseStalls(page(0.012, 0.05, 1.2));
    t.same(stallsBetween(before, after, 2), {
      loopDelayP99Ms: 12,
      loopDelayMaxMs: 50,
      gcMsPerS: 100,
    });
    t.same(parseStalls('no metrics here'), { loopDelayP99S: 0, loopDelayMaxS: 0, gcPauseS: 0 });
  },
);

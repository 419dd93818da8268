// Proves the comparison bench still runs end to end: `--smoke` (1 client, 1 s per workload, one round, Tenure and — when an etcd binary is installed — etcd) answers every workload without errors, times a failover and writes its JSON result naming the machine load. Skipped when the bench is not built.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { REPO_ROOT, SERVER_MAIN } from '../../support/cluster.js';

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
    t.ok(
      result.failovers.some(
        (f: { system: string; ms: number }) => f.system === 'tenure' && f.ms > 0,
      ),
      'Tenure failover timed',
    );
  },
);

/**
 * `npm run bench:raft`: a three-process loopback cluster (TCP transport, level storage with fsync)
 * of demo nodes; the leader runs 1 and then 64 concurrent proposers of 128-byte commands.
 * Reports commits/s and p50/p99 commit latency (propose → applied on the leader).
 * Targets: 64 proposers ≥ 15,000 commits/s; 1 proposer p50 ≤ 2 ms.
 *
 * Flags (`--help`): --duration-ms N (per run, default 5000), --size-bytes N (default 128),
 * --cpu-prof (profile the nodes into bench-results/raft-prof).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Command, InvalidArgumentError } from 'commander';
import type { RaftStatus } from '@tenure/raft';
import { freePorts, percentiles } from '@tenure/testkit';
import { REPO_ROOT } from '../support/cluster.js';

/** The raft package's demo node (one process of the cluster under test). */
const demoNode = path.join(REPO_ROOT, 'packages', 'raft', 'dist', 'bench', 'demo-node.js');
const ids = ['n1', 'n2', 'n3'];

/** commander parser of a positive number option. */
function positive(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new InvalidArgumentError('must be a positive number');
  return value;
}

/** Command-line options (commander; `--help` lists them). */
function parseOptions(): { durationMs: number; sizeBytes: number; cpuProf: boolean } {
  return new Command('raft-bench')
    .description('Commits/s and commit latency of a three-process loopback Raft cluster.')
    .option('--duration-ms <n>', 'length of each run', positive, 5000)
    .option('--size-bytes <n>', 'size of each command', positive, 128)
    .option('--cpu-prof', 'profile the nodes into bench-results/raft-prof', false)
    .parse()
    .opts();
}

interface LoadResult {
  commits: number;
  errors: number;
  elapsedMs: number;
  latenciesMs: number[];
}

async function main(): Promise<void> {
  const { durationMs, sizeBytes, cpuProf: profile } = parseOptions();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenure-raft-bench-'));
  const ports = await freePorts(3);
  const peers = ids.map((id, i) => ({ id, raftAddress: `127.0.0.1:${ports[i]}` }));
  const children: ChildProcess[] = [];
  const cleanup = (): void => {
    for (const child of children) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', cleanup);
  const cpuProf = profile
    ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve('bench-results/raft-prof')}`]
    : [];
  const controlPorts = await Promise.all(
    ids.map(async (id) => {
      const config = {
        id,
        clusterId: 'bench',
        peers,
        dataDir: path.join(dir, id),
        recordValues: false,
      };
      const child = spawn(process.execPath, [...cpuProf, demoNode, JSON.stringify(config)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(child);
      const line = await new Promise<string>((resolve) =>
        readline.createInterface({ input: child.stdout! }).once('line', resolve),
      );
      return (JSON.parse(line) as { controlPort: number }).controlPort;
    }),
  );
  let leaderPort = 0;
  for (const startMs = Date.now(); leaderPort === 0;) {
    if (Date.now() - startMs > 30_000) throw new Error('no leader within 30 s');
    for (const port of controlPorts) {
      const status = (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as RaftStatus;
      if (status.role === 'leader') leaderPort = port;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const run = async (proposers: number, ms: number): Promise<LoadResult> => {
    const res = await fetch(`http://127.0.0.1:${leaderPort}/load`, {
      method: 'POST',
      body: JSON.stringify({ proposers, durationMs: ms, sizeBytes }),
    });
    return (await res.json()) as LoadResult;
  };
  await run(16, 1000); // warm-up (JIT, connections, level caches)
  console.log(
    `raft bench: 3 processes on loopback, fsync on, ${sizeBytes}-byte commands, ${durationMs} ms per run, ${os.cpus().length} CPUs`,
  );
  const rows = [];
  for (const proposers of [1, 64]) {
    const r = await run(proposers, durationMs);
    const latency = percentiles(r.latenciesMs);
    rows.push({
      proposers,
      commits: r.commits,
      errors: r.errors,
      commitsPerSec: Math.round((r.commits / r.elapsedMs) * 1000),
      p50Ms: Number((latency.p50 ?? NaN).toFixed(3)),
      p99Ms: Number((latency.p99 ?? NaN).toFixed(3)),
      maxMs: Number((latency.max ?? NaN).toFixed(3)),
    });
  }
  console.table(rows);
  const [one, many] = rows;
  console.log(
    JSON.stringify({
      targets: {
        commitsPerSec64: {
          target: 15000,
          measured: many!.commitsPerSec,
          met: many!.commitsPerSec >= 15000,
        },
        p50Ms1: { target: 2, measured: one!.p50Ms, met: one!.p50Ms <= 2 },
      },
    }),
  );
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(
    children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))),
  );
  cleanup();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

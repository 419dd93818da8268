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
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Command, InvalidArgumentError } from 'commander';
import { fileURLToPath } from 'node:url';
import type { RaftStatus } from '../api.js';

const here = path.dirname(fileURLToPath(import.meta.url));
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

async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve) => {
          const server = net.createServer();
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** Value at quantile q (0..1) of an ascending array (nearest rank). */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
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
      const child = spawn(
        process.execPath,
        [...cpuProf, path.join(here, 'demo-node.js'), JSON.stringify(config)],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
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
    const sorted = [...r.latenciesMs].sort((a, b) => a - b);
    rows.push({
      proposers,
      commits: r.commits,
      errors: r.errors,
      commitsPerSec: Math.round((r.commits / r.elapsedMs) * 1000),
      p50Ms: Number(quantile(sorted, 0.5).toFixed(3)),
      p99Ms: Number(quantile(sorted, 0.99).toFixed(3)),
      maxMs: Number(quantile(sorted, 1).toFixed(3)),
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

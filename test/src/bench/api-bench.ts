/**
 * API bench (`npm run bench`): starts a local three-node cluster of real processes (Raft log
 * fsynced) and measures, with 1, 16 and 64 concurrent clients talking to the leader over kept-alive
 * HTTP: acquire+release pairs on distinct names, renewals of held leases, contended hand-offs on
 * one name, and linearizable reads. Prints ops/s, p50/p99 and the CPU each process used, and writes
 * the figures to bench-results/api-bench-<time>.json.
 *
 * Options (env): BENCH_SECONDS (per workload and concurrency, default 3), BENCH_CONCURRENCY
 * (comma list, default 1,16,64).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { LocalCluster, REPO_ROOT } from '../support/cluster.js';

interface Answer {
  readonly status: number;
  readonly body: { fencingToken?: number; [k: string]: unknown };
}

/** Minimal kept-alive JSON client for one node. */
class BenchClient {
  readonly #agent: Agent;
  readonly #host: string;
  readonly #port: number;
  constructor(httpAddress: string, sockets: number) {
    const [host, port] = httpAddress.split(':');
    this.#host = host!;
    this.#port = Number(port);
    this.#agent = new Agent({ keepAlive: true, maxSockets: sockets });
  }
  call(method: string, path: string, body?: unknown): Promise<Answer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: this.#host,
          port: this.#port,
          method,
          path,
          agent: this.#agent,
          headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['body'] }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }
  close(): void {
    this.#agent.destroy();
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the comm field: index 11 = utime, 12 = stime (fields 14 and 15 of proc(5)), in clock ticks.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

interface Result {
  workload: string;
  clients: number;
  ops: number;
  errors: number;
  seconds: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  cpuPercent: Record<string, number>;
}

/** One client's loop body: performs one op, returns false on an unexpected answer. */
type OpFactory = (client: number) => Promise<() => Promise<boolean>>;

async function runWorkload(cluster: LocalCluster, http: BenchClient, name: string, clients: number, seconds: number, make: OpFactory): Promise<Result> {
  const ops = await Promise.all(Array.from({ length: clients }, (_, i) => make(i)));
  const hist = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
  let count = 0;
  let errors = 0;
  const pids = new Map(cluster.nodes.map((n) => [n.id, cluster.pid(n.id)!]));
  pids.set('bench', process.pid);
  const cpu0 = new Map([...pids].map(([id, pid]) => [id, cpuSeconds(pid)]));
  const start = performance.now();
  const until = start + seconds * 1000;
  await Promise.all(
    ops.map(async (op) => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const ok = await op().catch(() => false);
        hist.recordValue(Math.max(1, Math.round((performance.now() - t0) * 1000)));
        if (ok) count++;
        else errors++;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const cpuPercent: Record<string, number> = {};
  for (const [id, pid] of pids) cpuPercent[id] = Math.round(((cpuSeconds(pid) - cpu0.get(id)!) / elapsed) * 100);
  void http;
  return {
    workload: name,
    clients,
    ops: count,
    errors,
    seconds: Number(elapsed.toFixed(2)),
    opsPerSec: Math.round(count / elapsed),
    p50Ms: hist.getValueAtPercentile(50) / 1000,
    p99Ms: hist.getValueAtPercentile(99) / 1000,
    maxMs: hist.maxValue / 1000,
    cpuPercent,
  };
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 3);
  const levels = (process.env.BENCH_CONCURRENCY ?? '1,16,64').split(',').map(Number);
  const cluster = await LocalCluster.start({ logLevel: 'warn' });
  const stop = (): void => {
    void cluster.teardown().then(() => process.exit(130));
  };
  process.on('SIGINT', stop);
  try {
    const leader = await cluster.waitForLeader();
    const http = new BenchClient(cluster.node(leader).httpAddress, Math.max(...levels) * 2);
    const results: Result[] = [];
    let run = 0;
    for (const clients of levels) {
      run++;
      const tag = `r${run}c${clients}`;
      results.push(
        await runWorkload(cluster, http, 'acquire+release pair', clients, seconds, async (i) => {
          const path = `/v1/leases/pair-${tag}-${i}`;
          return async () => {
            const a = await http.call('POST', `${path}/acquire`, { holder: `h${i}`, ttlMs: 10000 });
            if (a.status !== 200) return false;
            const r = await http.call('POST', `${path}/release`, { holder: `h${i}`, fencingToken: a.body.fencingToken });
            return r.status === 200;
          };
        }),
      );
      results.push(
        await runWorkload(cluster, http, 'acquire (single request)', clients, seconds, async (i) => {
          let n = 0;
          return async () => {
            const a = await http.call('POST', `/v1/leases/acq-${tag}-${i}-${n++}/acquire`, { holder: `h${i}`, ttlMs: 2000 });
            return a.status === 200;
          };
        }),
      );
      results.push(
        await runWorkload(cluster, http, 'renew', clients, seconds, async (i) => {
          const path = `/v1/leases/renew-${tag}-${i}`;
          const a = await http.call('POST', `${path}/acquire`, { holder: `h${i}`, ttlMs: 60000 });
          return async () => (await http.call('POST', `${path}/renew`, { holder: `h${i}`, fencingToken: a.body.fencingToken })).status === 200;
        }),
      );
      results.push(
        await runWorkload(cluster, http, 'contended hand-off', clients, seconds, async (i) => {
          const path = `/v1/leases/hot-${tag}`;
          let n = 0;
          return async () => {
            const holder = `h${i}-${n++}`;
            const a = await http.call('POST', `${path}/acquire`, { holder, ttlMs: 10000, waitMs: 60000 });
            if (a.status !== 200) return false;
            return (await http.call('POST', `${path}/release`, { holder, fencingToken: a.body.fencingToken })).status === 200;
          };
        }),
      );
      results.push(
        await runWorkload(cluster, http, 'linearizable read', clients, seconds, async (i) => {
          const path = `/v1/leases/read-${tag}-${i}`;
          await http.call('POST', `${path}/acquire`, { holder: `h${i}`, ttlMs: 600000 });
          return async () => (await http.call('GET', path)).status === 200;
        }),
      );
    }
    http.close();
    const header = ['workload', 'clients', 'ops/s', 'p50 ms', 'p99 ms', 'max ms', 'errors', 'cpu % (n1/n2/n3/bench)'];
    const rows = results.map((r) => [
      r.workload,
      String(r.clients),
      String(r.opsPerSec),
      r.p50Ms.toFixed(2),
      r.p99Ms.toFixed(2),
      r.maxMs.toFixed(1),
      String(r.errors),
      ['n1', 'n2', 'n3', 'bench'].map((k) => r.cpuPercent[k] ?? 0).join('/'),
    ]);
    const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
    const line = (cells: string[]): string => cells.map((cell, c) => cell.padEnd(widths[c]!)).join('  ');
    console.log(`\nTenure API bench: 3 nodes on loopback, leader ${leader}, ${seconds} s per run, fsync on\n`);
    console.log(line(header));
    for (const r of rows) console.log(line(r));
    const dir = join(REPO_ROOT, 'bench-results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `api-bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify({ leader, seconds, cpus: (await import('node:os')).cpus().length, results }, null, 2));
    console.log(`\nwritten ${file}`);
  } finally {
    await cluster.teardown();
  }
}

void main();

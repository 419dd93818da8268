/**
 * API bench (`npm run bench`): starts a local three-node cluster of real processes (Raft log
 * fsynced) and measures, with 1, 16 and 64 concurrent clients talking to the leader over kept-alive
 * HTTP: acquire+release pairs on distinct names, renewals of held leases, contended hand-offs on
 * one name, linearizable reads, and semaphore permits (`sem-pair`: acquire+release of a permit on
 * one semaphore of limit 1000; `sem-handoff`: the same on a semaphore of limit 4 with waiting
 * acquires, so the rate is the permit hand-off rate; `npm run bench:semaphore` runs only these). Prints ops/s, p50/p99 and the CPU each process used, and writes
 * the figures to bench-results/api-bench-<time>.json.
 *
 * Options: `--help` lists them (flags win over the env BENCH_SECONDS / BENCH_CONCURRENCY).
 * `--profile DIR` runs every server process under the V8 CPU profiler (cpu-profile-preload.ts via
 * NODE_OPTIONS, since `--cpu-prof` is refused there), stops them
 * gracefully at the end so the .cpuprofile files are written, and profiles the bench client too.
 * `--target follower` sends every request to a follower (measures the forwarding hop).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { cpus, tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { latencyHistogram } from '@tenure/testkit';
import { LocalCluster, REPO_ROOT, type ClusterOptions } from '../support/cluster.js';
import { fetchTrusting, TestCa, tlsArgs } from '../support/tls.js';

interface Answer {
  readonly status: number;
  readonly body: { fencingToken?: number; [k: string]: unknown };
}

/** `--secure`: the client's CA, certificate and bearer (HTTPS with client certificates, auth on). */
interface BenchSecurity {
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
  readonly bearer: string;
}

/** Minimal kept-alive JSON client for one node (HTTPS with a bearer under `--secure`). */
class BenchClient {
  readonly #agent: Agent;
  readonly #request: typeof request;
  readonly #host: string;
  readonly #port: number;
  readonly #idempotencyKeys: boolean;
  readonly #auth: Record<string, string>;
  constructor(
    httpAddress: string,
    sockets: number,
    idempotencyKeys: boolean,
    security: BenchSecurity | null,
  ) {
    this.#idempotencyKeys = idempotencyKeys;
    const [host, port] = httpAddress.split(':');
    this.#host = host!;
    this.#port = Number(port);
    const pool = { keepAlive: true, maxSockets: sockets };
    this.#agent =
      security === null
        ? new Agent(pool)
        : new HttpsAgent({
            ...pool,
            ca: security.caPem,
            cert: security.certPem,
            key: security.keyPem,
          });
    this.#request = security === null ? request : httpsRequest;
    this.#auth = security === null ? {} : { authorization: `Bearer ${security.bearer}` };
  }
  call(method: string, path: string, body?: unknown): Promise<Answer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = this.#request(
        {
          host: this.#host,
          port: this.#port,
          method,
          path,
          agent: this.#agent,
          headers:
            payload === undefined
              ? this.#auth
              : {
                  ...this.#auth,
                  'content-type': 'application/json',
                  'content-length': Buffer.byteLength(payload),
                  // Like @tenure/client, which sends one key per mutating call.
                  ...(this.#idempotencyKeys ? { 'idempotency-key': randomUUID() } : {}),
                },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['body'],
            }),
          );
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
  /** CPU time per successful op, microseconds, per process (n1..n3, bench). */
  cpuUsPerOp: Record<string, number>;
}

/** One client's loop body: performs one op, returns false on an unexpected answer. */
type OpFactory = (client: number) => Promise<() => Promise<boolean>>;

async function runWorkload(
  cluster: LocalCluster,
  http: BenchClient,
  name: string,
  clients: number,
  seconds: number,
  make: OpFactory,
): Promise<Result> {
  const ops = await Promise.all(Array.from({ length: clients }, (_, i) => make(i)));
  const hist = latencyHistogram();
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
  const cpuUsPerOp: Record<string, number> = {};
  for (const [id, pid] of pids) {
    const used = cpuSeconds(pid) - cpu0.get(id)!;
    cpuPercent[id] = Math.round((used / elapsed) * 100);
    cpuUsPerOp[id] = count === 0 ? 0 : Math.round((used / count) * 1e6);
  }
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
    cpuUsPerOp,
  };
}

const WORKLOADS = [
  'pair',
  'acquire',
  'renew',
  'handoff',
  'read',
  'sem-pair',
  'sem-handoff',
] as const;

/**
 * One permit acquired and released on `path` (a semaphore) with a fresh holder each time; with
 * `waitMs` the acquire queues while all `limit` permits are held (docs/api.md "Semaphores").
 */
function permitPair(
  http: BenchClient,
  path: string,
  limit: number,
  waitMs: number,
  i: number,
): () => Promise<boolean> {
  let n = 0;
  return async () => {
    const holder = `h${i}-${n++}`;
    const a = await http.call('POST', `${path}/acquire`, {
      holder,
      limit,
      ttlMs: 10000,
      ...(waitMs > 0 ? { waitMs } : {}),
    });
    if (a.status !== 200) return false;
    const r = await http.call('POST', `${path}/release`, {
      holder,
      fencingToken: a.body.fencingToken,
    });
    return r.status === 200;
  };
}
type Workload = (typeof WORKLOADS)[number];

interface BenchOptions {
  readonly seconds: number;
  readonly levels: readonly number[];
  readonly workloads: ReadonlySet<Workload>;
  readonly target: 'leader' | 'follower';
  readonly profileDir: string | null;
  readonly raftStatsDir: string | null;
  readonly idempotencyKeys: boolean;
  readonly secure: boolean;
  readonly nodeArgs: string;
  readonly serverArgs: readonly string[];
  readonly logLevel: string;
}

/** The bench's command line (commander): one option per setting, `--help`. */
function benchCommand(): Command {
  return new Command('api-bench')
    .description('Measure the HTTP API of a local three-node cluster of real processes.')
    .addOption(
      new Option('--seconds <n>', 'seconds per workload and concurrency')
        .env('BENCH_SECONDS')
        .default('3'),
    )
    .addOption(
      new Option('--concurrency <list>', 'comma list of client counts')
        .env('BENCH_CONCURRENCY')
        .default('1,16,64'),
    )
    .option('--workloads <list>', `comma list among: ${WORKLOADS.join(', ')}`, WORKLOADS.join(','))
    .option('--target <node>', 'leader | follower: the node the clients talk to', 'leader')
    .option(
      '--profile <dir>',
      'run the servers under the V8 CPU profiler; .cpuprofile files of n1..n3 and the client go to dir',
    )
    .option(
      '--raft-stats <dir>',
      'measure group commit in the servers (persist calls, entries per persist, persist ms incl. fsync) into dir',
    )
    .option('--idempotency-keys', 'send an Idempotency-Key on every write, as @tenure/client does')
    .option(
      '--secure',
      'HTTPS with client certificates, peer mutual TLS and auth on (what `npm start -- --secure` runs); the bench uses an application token',
    )
    .option('--node-args <args>', 'extra node flags for the servers (NODE_OPTIONS)', '')
    .option('--server-args <args>', 'extra tenure-server flags (space separated)', '')
    .option('--log-level <level>', 'server log level', 'warn')
    .addHelpText(
      'after',
      '\nPrints ops/s, p50/p99/max latency, CPU % and CPU microseconds per op of every process, and\n' +
        'writes the figures to bench-results/api-bench-<time>.json.',
    );
}

interface BenchFlags {
  seconds: string;
  concurrency: string;
  workloads: string;
  target: string;
  profile?: string;
  raftStats?: string;
  idempotencyKeys?: boolean;
  secure?: boolean;
  nodeArgs: string;
  serverArgs: string;
  logLevel: string;
}

/** Parse argv; commander prints usage and exits on --help or a bad option (exit code 2). */
function parseOptions(argv: readonly string[]): BenchOptions {
  const cmd = benchCommand();
  cmd.parse([...argv], { from: 'user' });
  const v = cmd.opts<BenchFlags>();
  const fail = (msg: string): never => cmd.error(`error: ${msg}`, { exitCode: 2 });
  const seconds = Number(v.seconds);
  if (!(seconds > 0)) fail('--seconds must be a positive number');
  const levels = v.concurrency.split(',').map(Number);
  if (levels.some((n) => !Number.isInteger(n) || n < 1))
    fail('--concurrency must be a comma list of positive integers');
  const workloads = v.workloads.split(',') as Workload[];
  for (const w of workloads) if (!WORKLOADS.includes(w)) fail(`unknown workload "${w}"`);
  const target = v.target;
  if (target !== 'leader' && target !== 'follower') fail('--target must be leader or follower');
  return {
    seconds,
    levels,
    workloads: new Set(workloads),
    target: target as 'leader' | 'follower',
    profileDir: v.profile === undefined ? null : resolve(v.profile),
    raftStatsDir: v.raftStats === undefined ? null : resolve(v.raftStats),
    idempotencyKeys: v.idempotencyKeys === true,
    secure: v.secure === true,
    nodeArgs: v.nodeArgs,
    serverArgs: v.serverArgs.split(' ').filter((a) => a.length > 0),
    logLevel: v.logLevel,
  };
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const { seconds, levels } = o;
  // Node flags reach the server processes through NODE_OPTIONS (the cluster helper spawns
  // `node main.js`); set only while spawning, the bench itself is already running.
  // `--cpu-prof` is refused in NODE_OPTIONS: a preload starts the profiler instead.
  const preload = new URL('./cpu-profile-preload.js', import.meta.url).href;
  const statsPreload = new URL('./raft-stats-preload.js', import.meta.url).href;
  const nodeOptions = [
    o.nodeArgs,
    o.profileDir === null ? '' : `--import=${preload}`,
    o.raftStatsDir === null ? '' : `--import=${statsPreload}`,
  ]
    .join(' ')
    .trim();
  if (o.profileDir !== null) process.env.TENURE_CPU_PROF_DIR = o.profileDir;
  if (o.raftStatsDir !== null) {
    process.env.TENURE_RAFT_STATS_DIR = o.raftStatsDir;
    mkdirSync(o.raftStatsDir, { recursive: true });
  }
  const savedNodeOptions = process.env.NODE_OPTIONS;
  if (nodeOptions.length > 0)
    process.env.NODE_OPTIONS = `${savedNodeOptions ?? ''} ${nodeOptions}`.trim();
  if (o.profileDir !== null) mkdirSync(o.profileDir, { recursive: true });
  const secured = o.secure ? secureCluster() : null;
  const cluster = await LocalCluster.start({
    logLevel: o.logLevel,
    extraArgs: o.serverArgs,
    ...secured?.options,
  });
  if (savedNodeOptions === undefined) delete process.env.NODE_OPTIONS;
  else process.env.NODE_OPTIONS = savedNodeOptions;
  const stop = (): void => {
    void cluster.teardown().then(() => process.exit(130));
  };
  process.on('SIGINT', stop);
  let session: Session | null = null;
  if (o.profileDir !== null) {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  try {
    const leader = await cluster.waitForLeader();
    if (o.profileDir !== null)
      console.log(
        `profiling pids: ${cluster.nodes.map((n) => `${n.id}=${cluster.pid(n.id)}`).join(' ')} leader=${leader}`,
      );
    const targetId =
      o.target === 'leader' ? leader : cluster.nodes.find((n) => n.id !== leader)!.id;
    const http = new BenchClient(
      cluster.node(targetId).httpAddress,
      Math.max(...levels) * 2,
      o.idempotencyKeys,
      secured === null ? null : await secured.appToken(cluster),
    );
    const results: Result[] = [];
    let run = 0;
    for (const clients of levels) {
      run++;
      const tag = `r${run}c${clients}`;
      if (o.workloads.has('pair'))
        results.push(
          await runWorkload(cluster, http, 'acquire+release pair', clients, seconds, async (i) => {
            const path = `/v1/leases/pair-${tag}-${i}`;
            return async () => {
              const a = await http.call('POST', `${path}/acquire`, {
                holder: `h${i}`,
                ttlMs: 10000,
              });
              if (a.status !== 200) return false;
              const r = await http.call('POST', `${path}/release`, {
                holder: `h${i}`,
                fencingToken: a.body.fencingToken,
              });
              return r.status === 200;
            };
          }),
        );
      if (o.workloads.has('acquire'))
        results.push(
          await runWorkload(
            cluster,
            http,
            'acquire (single request)',
            clients,
            seconds,
            async (i) => {
              let n = 0;
              return async () => {
                const a = await http.call('POST', `/v1/leases/acq-${tag}-${i}-${n++}/acquire`, {
                  holder: `h${i}`,
                  ttlMs: 2000,
                });
                return a.status === 200;
              };
            },
          ),
        );
      if (o.workloads.has('renew'))
        results.push(
          await runWorkload(cluster, http, 'renew', clients, seconds, async (i) => {
            const path = `/v1/leases/renew-${tag}-${i}`;
            const a = await http.call('POST', `${path}/acquire`, { holder: `h${i}`, ttlMs: 60000 });
            return async () =>
              (
                await http.call('POST', `${path}/renew`, {
                  holder: `h${i}`,
                  fencingToken: a.body.fencingToken,
                })
              ).status === 200;
          }),
        );
      if (o.workloads.has('handoff'))
        results.push(
          await runWorkload(cluster, http, 'contended hand-off', clients, seconds, async (i) => {
            const path = `/v1/leases/hot-${tag}`;
            let n = 0;
            return async () => {
              const holder = `h${i}-${n++}`;
              const a = await http.call('POST', `${path}/acquire`, {
                holder,
                ttlMs: 10000,
                waitMs: 60000,
              });
              if (a.status !== 200) return false;
              return (
                (
                  await http.call('POST', `${path}/release`, {
                    holder,
                    fencingToken: a.body.fencingToken,
                  })
                ).status === 200
              );
            };
          }),
        );
      if (o.workloads.has('sem-pair'))
        results.push(
          await runWorkload(cluster, http, 'permit acquire+release', clients, seconds, async (i) =>
            permitPair(http, `/v1/semaphores/sem-${tag}`, 1000, 0, i),
          ),
        );
      if (o.workloads.has('sem-handoff'))
        results.push(
          await runWorkload(
            cluster,
            http,
            'permit hand-off, limit 4',
            clients,
            seconds,
            async (i) => permitPair(http, `/v1/semaphores/semhot-${tag}`, 4, 60000, i),
          ),
        );
      if (o.workloads.has('read'))
        results.push(
          await runWorkload(cluster, http, 'linearizable read', clients, seconds, async (i) => {
            const path = `/v1/leases/read-${tag}-${i}`;
            await http.call('POST', `${path}/acquire`, { holder: `h${i}`, ttlMs: 600000 });
            return async () => (await http.call('GET', path)).status === 200;
          }),
        );
    }
    http.close();
    const header = [
      'workload',
      'clients',
      'ops/s',
      'p50 ms',
      'p99 ms',
      'max ms',
      'errors',
      'cpu % n1/n2/n3/bench',
      'cpu µs/op n1/n2/n3/bench',
    ];
    const ids = ['n1', 'n2', 'n3', 'bench'];
    const rows = results.map((r) => [
      r.workload,
      String(r.clients),
      String(r.opsPerSec),
      r.p50Ms.toFixed(2),
      r.p99Ms.toFixed(2),
      r.maxMs.toFixed(1),
      String(r.errors),
      ids.map((k) => r.cpuPercent[k] ?? 0).join('/'),
      ids.map((k) => r.cpuUsPerOp[k] ?? 0).join('/'),
    ]);
    const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
    const line = (cells: string[]): string =>
      cells.map((cell, c) => cell.padEnd(widths[c]!)).join('  ');
    const loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(
      `\nTenure API bench: 3 nodes on loopback, leader ${leader}, clients talk to ${targetId} (${o.target}), ${o.idempotencyKeys ? 'with' : 'no'} idempotency keys, ${seconds} s per run, fsync on, ${cpus().length} CPUs, load average ${loadavg}\n`,
    );
    console.log(line(header));
    for (const r of rows) console.log(line(r));
    const dir = join(REPO_ROOT, 'bench-results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `api-bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        {
          leader,
          target: o.target,
          targetId,
          idempotencyKeys: o.idempotencyKeys,
          seconds,
          cpus: cpus().length,
          loadavg,
          serverArgs: o.serverArgs,
          nodeArgs: o.nodeArgs,
          results,
        },
        null,
        2,
      ),
    );
    console.log(`\nwritten ${file}`);
    if (o.profileDir !== null || o.raftStatsDir !== null) {
      // Graceful stops, so every server writes its .cpuprofile on exit (SIGKILL would not).
      await Promise.all(cluster.nodes.map((n) => cluster.stop(n.id)));
      if (session !== null && o.profileDir !== null) {
        const { profile } = await session.post('Profiler.stop');
        writeFileSync(
          join(o.profileDir, `bench-client-${process.pid}.cpuprofile`),
          JSON.stringify(profile),
        );
        console.log(`profiles in ${o.profileDir}`);
      }
      if (o.raftStatsDir !== null) console.log(`raft stats in ${o.raftStatsDir}`);
    }
  } finally {
    session?.disconnect();
    await cluster.teardown();
    secured?.remove();
  }
}

/**
 * `--secure`: a CA and certificates in a temporary directory, the cluster options that turn on
 * HTTPS with client certificates, peer mutual TLS and auth (docs/security.md), and an application
 * token whose role may write leases and semaphores (what a real client holds; root is not it).
 */
function secureCluster(): {
  options: Partial<ClusterOptions>;
  appToken: (c: LocalCluster) => Promise<BenchSecurity>;
  remove: () => void;
} {
  const dir = mkdtempSync(join(tmpdir(), 'tenure-bench-tls-'));
  const ca = new TestCa(dir, 'bench CA');
  const user = ca.issue('bench-client');
  const nodeFiles = new Map(['n1', 'n2', 'n3'].map((id) => [id, ca.issue(id)]));
  const root = `bench-root-${randomUUID()}`;
  return {
    options: {
      scheme: 'https',
      fetch: fetchTrusting([ca.ca.certPem], user.pem),
      nodeArgs: (n) => [...tlsArgs(nodeFiles.get(n.id)!, ca.caFile, { clientCa: true }), '--auth'],
      env: { TENURE_ROOT_TOKEN: root },
      token: root,
    },
    appToken: async (c) => {
      const role = await c.request(c.nodes[0]!.id, 'PUT', '/v1/auth/roles/bench', {
        rules: [{ kinds: ['lease', 'semaphore', 'kv'], prefix: '', actions: ['read', 'write'] }],
      });
      if (role.status !== 200) throw new Error(`role: ${role.status} ${JSON.stringify(role.body)}`);
      const token = await c.request(c.nodes[0]!.id, 'POST', '/v1/auth/tokens', {
        name: 'bench',
        roles: ['bench'],
        quota: { requestsPerSecond: 0, leasesMax: 1e8, sessionsMax: 1e8, waitersMax: 1e8 }, // a bench, not a tenant
      });
      if (token.status !== 200)
        throw new Error(`token: ${token.status} ${JSON.stringify(token.body)}`);
      return {
        caPem: ca.ca.certPem,
        certPem: user.pem.certPem,
        keyPem: user.pem.keyPem,
        bearer: token.body.secret as string,
      };
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

void main();

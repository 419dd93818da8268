/**
 * CPU per operation (`npm run bench:cpu`): the measuring instrument for server cost on a shared,
 * loaded machine, where wall-clock throughput says little. Starts a local three-node cluster of
 * real processes (fsync on, default timing settings), drives a fixed number of replicated writes
 * with 1 or more clients at the leader, and divides each node's CPU time (user + system, from
 * /proc/<pid>/stat) by the number of writes — the leader and the followers separately. It also
 * measures an idle cluster (nothing live, no clients) as % of one core per node.
 *
 * `--baseline <main.js>` alternates runs of another build's server (e.g. a copy of the tree before a
 * change) with this one — A/B/A/B, `--rounds` pairs — and prints the median of each build per row.
 * `--profile DIR` runs this build's servers under the V8 CPU profiler (cpu-profile-preload.ts).
 * Results also go to bench-results/cpu-per-op-<time>.json with the machine's load average.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { LocalCluster, REPO_ROOT, SERVER_MAIN } from '../support/cluster.js';

const WORKLOADS = ['pair', 'renew', 'acquire'] as const;
type Workload = (typeof WORKLOADS)[number];

interface Options {
  readonly writes: number;
  readonly clients: readonly number[];
  readonly workloads: readonly Workload[];
  readonly rounds: number;
  readonly idleSeconds: number;
  readonly baseline: string | null;
  readonly profileDir: string | null;
}

/** One measured row of one run: CPU µs per write of the leader and the mean follower. */
interface Row {
  readonly build: 'baseline' | 'current';
  readonly workload: string;
  readonly clients: number;
  readonly writes: number;
  readonly errors: number;
  readonly leaderUsPerWrite: number;
  readonly followerUsPerWrite: number;
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat (clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** An HTTP answer: status and the parsed JSON body (a grant carries its fencing token). */
interface Answer {
  readonly status: number;
  readonly body: { readonly fencingToken?: number };
}

/** Kept-alive JSON POST/GET to one node; resolves with the status and parsed body. */
class Http {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 256 });
  readonly #host: string;
  readonly #port: number;
  constructor(address: string) {
    const [host, port] = address.split(':');
    this.#host = host!;
    this.#port = Number(port);
  }
  call(method: string, path: string, body?: unknown): Promise<Answer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers =
      payload === undefined
        ? {}
        : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
    return new Promise((done, fail) => {
      const req = request(
        { host: this.#host, port: this.#port, method, path, agent: this.#agent, headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            done({
              status: res.statusCode ?? 0,
              body: JSON.parse(Buffer.concat(chunks).toString()),
            }),
          );
          res.on('error', fail);
        },
      );
      req.on('error', fail);
      req.end(payload);
    });
  }
  close(): void {
    this.#agent.destroy();
  }
}

/** A client's step: performs one or two writes, returns how many succeeded and how many failed. */
type Step = () => Promise<{ ok: number; failed: number }>;

async function makeStep(http: Http, workload: Workload, tag: string, i: number): Promise<Step> {
  const holder = `h${i}`;
  const ok = (status: number): { ok: number; failed: number } =>
    status === 200 ? { ok: 1, failed: 0 } : { ok: 0, failed: 1 };
  if (workload === 'renew') {
    const path = `/v1/leases/renew-${tag}-${i}`;
    const a = await http.call('POST', `${path}/acquire`, { holder, ttlMs: 60_000 });
    const fencingToken = a.body.fencingToken;
    return async () =>
      ok((await http.call('POST', `${path}/renew`, { holder, fencingToken })).status);
  }
  let n = 0;
  if (workload === 'acquire')
    return async () =>
      ok(
        (
          await http.call('POST', `/v1/leases/acq-${tag}-${i}-${n++}/acquire`, {
            holder,
            ttlMs: 2000,
          })
        ).status,
      );
  const path = `/v1/leases/pair-${tag}-${i}`;
  return async () => {
    const a = await http.call('POST', `${path}/acquire`, { holder, ttlMs: 10_000 });
    if (a.status !== 200) return { ok: 0, failed: 1 };
    const r = await http.call('POST', `${path}/release`, {
      holder,
      fencingToken: a.body.fencingToken,
    });
    return { ok: 1 + ok(r.status).ok, failed: ok(r.status).failed };
  };
}

/** Runs `writes` writes (at least) over `clients` loops; returns successes and failures. */
async function drive(
  steps: readonly Step[],
  writes: number,
): Promise<{ ok: number; failed: number }> {
  let started = 0;
  const total = { ok: 0, failed: 0 };
  await Promise.all(
    steps.map(async (step) => {
      while (started < writes) {
        started += 1;
        const r = await step();
        total.ok += r.ok;
        total.failed += r.failed;
      }
    }),
  );
  return total;
}

/** One run: a fresh cluster of `serverMain`, idle measure, then every workload × clients. */
async function runOnce(
  o: Options,
  build: Row['build'],
  serverMain: string,
  round: number,
): Promise<{ rows: Row[]; idlePercent: Record<string, number> }> {
  const profile = build === 'current' && o.profileDir !== null;
  const saved = process.env.NODE_OPTIONS;
  if (profile) {
    process.env.TENURE_CPU_PROF_DIR = o.profileDir!;
    const preload = new URL('./cpu-profile-preload.js', import.meta.url).href;
    process.env.NODE_OPTIONS = `${saved ?? ''} --import=${preload}`.trim();
  }
  const cluster = await LocalCluster.start({ serverMain });
  if (saved === undefined) delete process.env.NODE_OPTIONS;
  else process.env.NODE_OPTIONS = saved;
  try {
    const leader = await cluster.waitForLeader();
    const pids = new Map(cluster.nodes.map((n) => [n.id, cluster.pid(n.id)!]));
    const idlePercent: Record<string, number> = {};
    if (o.idleSeconds > 0) {
      // Let start-up settle (JIT, first entries) before the idle window.
      await new Promise((r) => setTimeout(r, 3000));
      const before = new Map([...pids].map(([id, pid]) => [id, cpuSeconds(pid)]));
      await new Promise((r) => setTimeout(r, o.idleSeconds * 1000));
      for (const [id, pid] of pids)
        idlePercent[id === leader ? `${id} (leader)` : id] =
          Math.round(((cpuSeconds(pid) - before.get(id)!) / o.idleSeconds) * 1000) / 10;
    }
    const http = new Http(cluster.node(leader).httpAddress);
    const rows: Row[] = [];
    for (const workload of o.workloads)
      for (const clients of o.clients) {
        const tag = `${build}-${round}-${workload}-${clients}`;
        const steps = await Promise.all(
          Array.from({ length: clients }, (_, i) => makeStep(http, workload, tag, i)),
        );
        await drive(steps, Math.min(200, o.writes)); // warm-up (JIT, connections)
        const before = new Map([...pids].map(([id, pid]) => [id, cpuSeconds(pid)]));
        const done = await drive(steps, workload === 'pair' ? o.writes / 2 : o.writes);
        const used = new Map([...pids].map(([id, pid]) => [id, cpuSeconds(pid) - before.get(id)!]));
        const followers = [...used].filter(([id]) => id !== leader).map(([, s]) => s);
        const perWrite = (s: number): number => Math.round((s / Math.max(1, done.ok)) * 1e6);
        rows.push({
          build,
          workload,
          clients,
          writes: done.ok,
          errors: done.failed,
          leaderUsPerWrite: perWrite(used.get(leader)!),
          followerUsPerWrite: perWrite(followers.reduce((a, b) => a + b, 0) / followers.length),
        });
      }
    http.close();
    if (profile) await Promise.all(cluster.nodes.map((n) => cluster.stop(n.id)));
    return { rows, idlePercent };
  } finally {
    await cluster.teardown();
  }
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : Math.round((s[mid - 1]! + s[mid]!) / 2);
}

function parse(argv: readonly string[]): Options {
  const cmd = new Command('cpu-per-op')
    .description('Server CPU time per replicated write, leader and followers; idle CPU per node.')
    .option('--writes <n>', 'writes per workload and client count', '3000')
    .option('--clients <list>', 'comma list of client counts', '1,16')
    .option('--workloads <list>', `comma list among: ${WORKLOADS.join(', ')}`, 'pair,renew')
    .option('--rounds <n>', 'runs per build (alternated with --baseline)', '2')
    .option('--idle-seconds <n>', 'idle window per run (0 = skip)', '20')
    .option(
      '--baseline <main.js>',
      "another build's packages/server/dist/main.js to alternate with",
    )
    .option('--profile <dir>', "V8 CPU profiles of this build's servers go to dir");
  cmd.parse([...argv], { from: 'user' });
  const v = cmd.opts<Record<string, string | undefined>>();
  const fail = (msg: string): never => cmd.error(`error: ${msg}`, { exitCode: 2 });
  const int = (name: string, min: number): number => {
    const n = Number(v[name]);
    if (!Number.isInteger(n) || n < min) fail(`--${name} must be an integer ≥ ${min}`);
    return n;
  };
  const workloads = v.workloads!.split(',').filter((w) => w !== '') as Workload[];
  for (const w of workloads) if (!WORKLOADS.includes(w)) fail(`unknown workload "${w}"`);
  const clients = v.clients!.split(',').map(Number);
  if (clients.some((n) => !Number.isInteger(n) || n < 1)) fail('--clients: positive integers');
  return {
    writes: int('writes', 10),
    clients,
    workloads,
    rounds: int('rounds', 1),
    idleSeconds: Number(v.idleSeconds),
    baseline: v.baseline === undefined ? null : resolve(v.baseline),
    profileDir: v.profile === undefined ? null : resolve(v.profile),
  };
}

async function main(): Promise<void> {
  const o = parse(process.argv.slice(2));
  if (o.profileDir !== null) mkdirSync(o.profileDir, { recursive: true });
  const loadavgBefore = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const runs: { build: Row['build']; rows: Row[]; idlePercent: Record<string, number> }[] = [];
  const dir = join(REPO_ROOT, 'bench-results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `cpu-per-op-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  // Written after every run, so an interrupted session keeps what it measured.
  const save = (): void =>
    writeFileSync(
      file,
      JSON.stringify(
        {
          options: o,
          cpus: cpus().length,
          loadavgBefore,
          loadavg: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
          runs,
        },
        null,
        2,
      ),
    );
  for (let round = 1; round <= o.rounds; round++) {
    const order: Row['build'][] = o.baseline === null ? ['current'] : ['baseline', 'current'];
    for (const build of order) {
      const main = build === 'baseline' ? o.baseline! : SERVER_MAIN;
      const run = await runOnce(o, build, main, round);
      runs.push({ build, ...run });
      save();
      console.log(`round ${round} ${build}: idle % ${JSON.stringify(run.idlePercent)}`);
      for (const r of run.rows)
        console.log(
          `  ${r.workload} c${r.clients}: leader ${r.leaderUsPerWrite} µs/write, follower ${r.followerUsPerWrite} µs/write (${r.writes} ok, ${r.errors} failed)`,
        );
    }
  }
  const loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(
    `\nCPU µs per replicated write (median of ${o.rounds} run(s) per build; ${cpus().length} CPUs; load ${loadavgBefore} → ${loadavg})\n`,
  );
  console.log('build     workload  clients  leader µs/write  follower µs/write  idle % of a core');
  for (const build of ['baseline', 'current'] as const) {
    const mine = runs.filter((r) => r.build === build);
    if (mine.length === 0) continue;
    const idle = mine.flatMap((r) => Object.values(r.idlePercent));
    for (const workload of o.workloads)
      for (const clients of o.clients) {
        const rows = mine.flatMap((r) =>
          r.rows.filter((x) => x.workload === workload && x.clients === clients),
        );
        console.log(
          [
            build.padEnd(8),
            workload.padEnd(8),
            String(clients).padStart(7),
            String(median(rows.map((x) => x.leaderUsPerWrite))).padStart(15),
            String(median(rows.map((x) => x.followerUsPerWrite))).padStart(17),
            idle.length === 0 ? '' : `  median ${median(idle.map((x) => x * 10)) / 10}`,
          ].join('  '),
        );
      }
  }
  console.log(`\nwritten ${file}`);
}

void main();

/**
 * HTTP-path bench: how much CPU one node's HTTP/server path costs per request, with Raft's disk and
 * network out of the picture. A child process serves the real `buildApp` over a single-voter
 * RaftNode on in-memory storage and transport (`--raft memory`: the whole runtime minus fsync and
 * peers) or over an immediate-apply fake (`--raft fake`: HTTP + server + state machine only); the
 * parent drives it with N kept-alive node:http clients and reports ops/s, latency and the CPU
 * microseconds per op of the server process and of the client.
 *
 * Usage: node test/dist/bench/http-path-bench.js [--raft memory|fake] [--seconds N]
 *        [--concurrency 1,64] [--workloads acquire,renew,read]
 * Env: BENCH_SERVER_MODULE=/abs/path/to/server/dist/index.js serves another build (A/B);
 *      BENCH_TICK_MS sets the memory RaftNode's tick (default 10).
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { latencyHistogram } from '@tenure/testkit';
import {
  CoordStateMachine,
  decodeEnvelope,
  encodeEnvelope,
  type ApplyOutput,
} from '@tenure/coord-state';
import {
  MemoryNetwork,
  MemoryRaftStorage,
  RaftNode,
  type Applied,
  type Leadership,
  type RaftNodeApi,
  type RaftStatus,
  type StateMachine,
} from '@tenure/raft';
import * as serverModule from '@tenure/server';

type LogIndex = RaftStatus['commitIndex'];
type Term = RaftStatus['term'];

/** Immediate-apply single-node RaftNodeApi: no log, no Ready loop (isolates HTTP + state machine). */
class ImmediateRaft implements RaftNodeApi<ApplyOutput> {
  readonly id = 'n1';
  #index = 0;
  readonly #sm: StateMachine<ApplyOutput>;
  readonly #applied = new Set<(i: LogIndex) => void>();
  constructor(sm: StateMachine<ApplyOutput>) {
    this.#sm = sm;
  }
  async propose(data: Uint8Array): Promise<Applied<ApplyOutput>> {
    const index = ++this.#index as LogIndex;
    const clusterTimeMs = Math.floor(performance.now());
    const result = this.#sm.apply({ index, term: 1 as Term, clusterTimeMs, type: 'command', data });
    for (const fn of this.#applied) fn(index);
    return { index, clusterTimeMs, result };
  }
  async readBarrier(): Promise<LogIndex> {
    return this.#index as LogIndex;
  }
  /** The bench takes no backups while it writes: nothing to hold. */
  holdApplies(): () => void {
    return () => undefined;
  }
  async transferLeadership(): Promise<void> {}
  leadership(): Leadership {
    const { role, term, leaderId, clusterTimeMs } = this.status();
    return { role, term, leaderId, clusterTimeMs };
  }
  status(): RaftStatus {
    const i = this.#index as LogIndex;
    return {
      id: 'n1',
      role: 'leader',
      term: 1 as Term,
      leaderId: 'n1',
      commitIndex: i,
      leaderCommitIndex: i,
      caughtUpIndex: i,
      leaderHeardAgoMs: 0,
      appliedIndex: i,
      lastLogIndex: i,
      snapshotIndex: 0 as LogIndex,
      snapshotBytes: 0,
      clusterTimeMs: Math.floor(performance.now()),
      members: [{ id: 'n1', role: 'leader' }],
      configIndex: 0 as LogIndex,
      configCommitted: true,
    };
  }
  memberAddress(): undefined {
    return undefined;
  }
  changeMembership(): Promise<RaftStatus> {
    return Promise.reject(new Error('single-node bench: no membership changes'));
  }
  /** Joining is not modelled here. */
  admitted(): void {}

  onRemoved(): () => void {
    return () => undefined;
  }
  onApplied(fn: (i: LogIndex) => void): () => void {
    this.#applied.add(fn);
    return () => this.#applied.delete(fn);
  }
  onLeaderChange(): () => void {
    return () => {};
  }
  async stop(): Promise<void> {}
}

/** Child: serve one node on 127.0.0.1:0, report the port over IPC, run until killed. */
async function serve(mode: string): Promise<void> {
  // BENCH_SERVER_MODULE: another build of the server's index.js (A/B runs against an older build).
  const override = process.env.BENCH_SERVER_MODULE;
  const m = (override === undefined ? serverModule : await import(override)) as typeof serverModule;
  const {
    buildApp,
    ChangeHub,
    CoordStateAdapter,
    createLogger,
    createMetrics,
    HttpForwarder,
    loadConfig,
    TimeAdvancer,
  } = m;
  const dir = mkdtempSync(join(tmpdir(), 'tenure-http-bench-'));
  const config = loadConfig([
    '--id',
    'n1',
    '--peers',
    'n1=127.0.0.1:1@127.0.0.1:2',
    '--data-dir',
    dir,
    '--log-level',
    'warn',
  ]);
  const logger = createLogger('n1', 'warn', () => null);
  const hub = new ChangeHub();
  const coord = new CoordStateMachine({ ...config.limits });
  const adapter = new CoordStateAdapter(coord, hub, decodeEnvelope);
  const raft: RaftNodeApi<ApplyOutput> =
    mode === 'fake'
      ? new ImmediateRaft(adapter)
      : await RaftNode.open<ApplyOutput>({
          id: 'n1',
          clusterId: 'bench',
          peers: [{ id: 'n1', raftAddress: 'mem:1' }],
          stateMachine: adapter,
          storage: new MemoryRaftStorage(),
          transport: new MemoryNetwork().transport('n1'),
          tickMs: Number(process.env.BENCH_TICK_MS ?? 10),
          heartbeatMs: 100,
          electionTimeoutMs: 1000,
          logger,
        });
  const metrics = createMetrics(
    () => raft,
    () => coord,
  );
  const app = await buildApp({
    config,
    raft,
    coord,
    hub,
    encodeEnvelope,
    forwarder: new HttpForwarder(),
    logger,
    metrics,
  });
  new TimeAdvancer({
    raft,
    coord,
    hub,
    encodeTimeAdvance: () =>
      encodeEnvelope({ v: 1, command: { type: 'time.advance' }, idempotency: null }),
    logger,
    proposeTimeoutMs: 2000,
    retryMs: 100,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  while (raft.status().role !== 'leader') await new Promise((r) => setTimeout(r, 20));
  process.send!({ port: (app.server.address() as AddressInfo).port });
  process.on('disconnect', () => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
}

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

function call(
  agent: Agent,
  port: number,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: { fencingToken?: number } }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers:
          payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as { fencingToken?: number },
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function drive(): Promise<void> {
  const { values: v } = parseArgs({
    options: {
      raft: { type: 'string' },
      seconds: { type: 'string' },
      concurrency: { type: 'string' },
      workloads: { type: 'string' },
    },
  });
  const mode = v.raft ?? 'memory';
  const seconds = Number(v.seconds ?? 3);
  const levels = (v.concurrency ?? '1,64').split(',').map(Number);
  const workloads = (v.workloads ?? 'acquire,renew,read').split(',');
  const child = fork(process.argv[1]!, ['--serve', mode], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve) =>
    child.once('message', (m: { port: number }) => resolve(m.port)),
  );
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  console.log(
    `HTTP-path bench: one node, raft=${mode}, ${seconds} s per run, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  );
  console.log('workload  clients  ops/s  p50 ms  p99 ms  server µs/op  client µs/op');
  let run = 0;
  for (const clients of levels) {
    for (const w of workloads) {
      run++;
      const ops = await Promise.all(
        Array.from({ length: clients }, async (_, i) => {
          const path = `/v1/leases/${w}-${run}-${i}`;
          let n = 0;
          if (w === 'acquire')
            return async () =>
              (
                await call(agent, port, 'POST', `${path}-${n++}/acquire`, {
                  holder: `h${i}`,
                  ttlMs: 2000,
                })
              ).status === 200;
          const a = await call(agent, port, 'POST', `${path}/acquire`, {
            holder: `h${i}`,
            ttlMs: 600_000,
          });
          if (w === 'renew')
            return async () =>
              (
                await call(agent, port, 'POST', `${path}/renew`, {
                  holder: `h${i}`,
                  fencingToken: a.body.fencingToken,
                })
              ).status === 200;
          return async () => (await call(agent, port, 'GET', path)).status === 200;
        }),
      );
      const hist = latencyHistogram();
      let count = 0;
      const s0 = cpuSeconds(child.pid!);
      const c0 = process.cpuUsage();
      const start = performance.now();
      const until = start + seconds * 1000;
      await Promise.all(
        ops.map(async (op) => {
          while (performance.now() < until) {
            const t0 = performance.now();
            if (await op()) count++;
            hist.recordValue(Math.max(1, Math.round((performance.now() - t0) * 1000)));
          }
        }),
      );
      const elapsed = (performance.now() - start) / 1000;
      const server = ((cpuSeconds(child.pid!) - s0) / count) * 1e6;
      const c = process.cpuUsage(c0);
      const client = (c.user + c.system) / count;
      console.log(
        [
          w.padEnd(8),
          String(clients).padStart(7),
          String(Math.round(count / elapsed)).padStart(6),
          (hist.getValueAtPercentile(50) / 1000).toFixed(2).padStart(7),
          (hist.getValueAtPercentile(99) / 1000).toFixed(2).padStart(7),
          server.toFixed(0).padStart(13),
          client.toFixed(0).padStart(13),
        ].join('  '),
      );
    }
  }
  agent.destroy();
  child.disconnect();
}

if (process.argv[2] === '--serve') void serve(process.argv[3] ?? 'memory');
else void drive();

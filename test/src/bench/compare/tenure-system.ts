/**
 * Tenure under the comparison bench: a LocalCluster of three real server processes (Raft log
 * fsynced, heartbeat 100 ms and election timeout 1000 ms — etcd's defaults), clients talk to the
 * leader over the shared JSON client.
 */
import { mkdirSync } from 'node:fs';
import { LocalCluster } from '../../support/cluster.js';
import { firstAcknowledgedMs } from './first-ack.js';
import { JsonHttp } from './json-http.js';
import { scrapeStalls, type StallReading } from './stalls.js';
import type { DrivenSystem, FailoverCapable, Op, WorkloadId } from './system.js';

/** TTL of the leases the workloads take, long enough never to expire during a run. */
const LEASE_TTL_MS = 60_000;
/** How long a contended acquire may wait in the server's queue. */
const HANDOFF_WAIT_MS = 60_000;
/** Bound of the cluster's start-up (slow when the machine is shared and loaded). */
const START_TIMEOUT_MS = 120_000;
/** Bound of one failover write attempt. */
const ATTEMPT_TIMEOUT_MS = 1_000;

/** A three-node Tenure cluster and a client of its leader. */
export class TenureSystem implements DrivenSystem, FailoverCapable {
  readonly label = 'tenure';
  readonly #cluster: LocalCluster;
  readonly #leader: string;
  readonly #http: JsonHttp;

  private constructor(cluster: LocalCluster, leader: string, connections: number) {
    this.#cluster = cluster;
    this.#leader = leader;
    this.#http = new JsonHttp(cluster.node(leader).url, connections);
  }

  /**
   * Starts the cluster (fresh data directories) and waits for its leader. With `profileDir`, every
   * server process runs under the V8 CPU profiler (../cpu-profile-preload.ts) and writes
   * `<profileDir>/<node>-<pid>.cpuprofile` when stopped gracefully by `stop()`.
   */
  static async start(connections: number, profileDir: string | null): Promise<TenureSystem> {
    const cluster = await withProfiler(profileDir, () =>
      LocalCluster.start({ logLevel: 'warn', startTimeoutMs: START_TIMEOUT_MS }),
    );
    try {
      return new TenureSystem(cluster, await cluster.waitForLeader(), connections);
    } catch (err) {
      await cluster.teardown();
      throw err;
    }
  }

  pids(): ReadonlyMap<string, number> {
    const pids = new Map<string, number>();
    for (const node of this.#cluster.nodes) {
      const pid = this.#cluster.pid(node.id);
      if (pid !== null) pids.set(node.id === this.#leader ? `${node.id}-leader` : node.id, pid);
    }
    return pids;
  }

  async stalls(): Promise<ReadonlyMap<string, StallReading>> {
    const readings = new Map<string, StallReading>();
    for (const node of this.#cluster.nodes) {
      const r = await scrapeStalls(node.url);
      if (r !== null) readings.set(node.id === this.#leader ? `${node.id}-leader` : node.id, r);
    }
    return readings;
  }

  async prepare(workload: WorkloadId, client: number, tag: string): Promise<Op> {
    const http = this.#http;
    const holder = `h${client}`;
    const base = `/v1/leases/${workload}-${tag}-${client}`;
    let n = 0;
    const acquireRelease = async (path: string, who: string, waitMs: number): Promise<boolean> => {
      const a = await http.call('POST', `${path}/acquire`, {
        holder: who,
        ttlMs: LEASE_TTL_MS,
        waitMs,
      });
      if (a.status !== 200) return false;
      const body = { holder: who, fencingToken: a.body.fencingToken };
      return (await http.call('POST', `${path}/release`, body)).status === 200;
    };
    switch (workload) {
      case 'pair':
        return () => acquireRelease(base, holder, 0);
      case 'grant':
        return () => acquireRelease(`${base}-${n++}`, holder, 0);
      case 'renew': {
        const a = await http.call('POST', `${base}/acquire`, { holder, ttlMs: LEASE_TTL_MS });
        if (a.status !== 200) throw new Error(`renew setup: acquire answered ${a.status}`);
        const body = { holder, fencingToken: a.body.fencingToken };
        return async () => (await http.call('POST', `${base}/renew`, body)).status === 200;
      }
      case 'handoff':
        return () => acquireRelease(`/v1/leases/hot-${tag}`, `${holder}-${n++}`, HANDOFF_WAIT_MS);
      case 'read': {
        const a = await http.call('POST', `${base}/acquire`, { holder, ttlMs: LEASE_TTL_MS });
        if (a.status !== 200) throw new Error(`read setup: acquire answered ${a.status}`);
        return async () => (await http.call('GET', base)).status === 200;
      }
    }
  }

  async failoverMs(deadlineMs: number): Promise<number> {
    const survivors = this.#cluster.nodes.filter((node) => node.id !== this.#leader);
    const clients = survivors.map((node) => new JsonHttp(node.url, 1));
    try {
      const killedAtMs = performance.now();
      await this.#cluster.kill(this.#leader, 'SIGKILL');
      return await firstAcknowledgedMs(
        killedAtMs,
        survivors.length,
        async (survivor, attempt) => {
          const path = `/v1/leases/failover-${attempt}/acquire`;
          const body = { holder: 'failover', ttlMs: LEASE_TTL_MS };
          const a = await clients[survivor]!.call('POST', path, body, ATTEMPT_TIMEOUT_MS);
          return a.status === 200;
        },
        deadlineMs,
      );
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  }

  async close(): Promise<void> {
    await this.#http.close();
  }

  /** Stops every node (SIGTERM, so profilers write their files) and removes the data directories. */
  async stop(): Promise<void> {
    await this.close();
    await Promise.all(this.#cluster.running().map((id) => this.#cluster.stop(id)));
    await this.#cluster.teardown();
  }
}

/** Runs `start` with NODE_OPTIONS loading the CPU-profile preload (for spawned servers only). */
async function withProfiler<T>(profileDir: string | null, start: () => Promise<T>): Promise<T> {
  if (profileDir === null) return start();
  mkdirSync(profileDir, { recursive: true });
  const preload = new URL('../cpu-profile-preload.js', import.meta.url).href;
  const saved = { nodeOptions: process.env.NODE_OPTIONS, dir: process.env.TENURE_CPU_PROF_DIR };
  process.env.NODE_OPTIONS = `${saved.nodeOptions ?? ''} --import=${preload}`.trim();
  process.env.TENURE_CPU_PROF_DIR = profileDir;
  try {
    return await start();
  } finally {
    if (saved.nodeOptions === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = saved.nodeOptions;
    if (saved.dir === undefined) delete process.env.TENURE_CPU_PROF_DIR;
    else process.env.TENURE_CPU_PROF_DIR = saved.dir;
  }
}

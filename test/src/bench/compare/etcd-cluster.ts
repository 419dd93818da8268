/**
 * A three-member etcd cluster of real `etcd` processes on loopback, allocated ports, fresh data
 * directories, fsync on (etcd's default; `--unsafe-no-fsync` is never passed), heartbeat 100 ms and
 * election timeout 1000 ms (etcd's defaults, the same as the Tenure cluster's). Nothing is
 * installed: the binary comes from $ETCD_BIN or the PATH (Debian: `apt-get install etcd-server`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '@tenure/testkit';
import { JsonHttp } from './json-http.js';

/** One member of the cluster. */
export interface EtcdMember {
  readonly name: string;
  /** Client URL, e.g. http://127.0.0.1:40123 (gRPC and the JSON gateway share it). */
  readonly clientUrl: string;
  readonly peerUrl: string;
}

/** How long start-up may take before the cluster counts as broken. */
const START_TIMEOUT_MS = 120_000;

/** Path of the etcd binary ($ETCD_BIN, else `etcd` on the PATH), or null when there is none. */
export function findEtcd(): string | null {
  const candidate = process.env.ETCD_BIN ?? 'etcd';
  const probe = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
  return probe.status === 0 ? candidate : null;
}

/** The `etcd --version` first line, for the result file. */
export function etcdVersion(binary: string): string {
  return spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0] ?? '?';
}

/** A running etcd cluster. Start with `EtcdCluster.start`, always `teardown()`. */
export class EtcdCluster {
  readonly members: readonly EtcdMember[];
  readonly #procs = new Map<string, ChildProcess>();
  readonly #baseDir: string;

  private constructor(members: EtcdMember[], baseDir: string) {
    this.members = members;
    this.#baseDir = baseDir;
  }

  /** Spawns three members and waits until every one reports the same leader. */
  static async start(binary: string): Promise<EtcdCluster> {
    const ports = await freePorts(6);
    const baseDir = mkdtempSync(join(tmpdir(), 'etcd-bench-'));
    const members = [0, 1, 2].map((i) => ({
      name: `e${i + 1}`,
      clientUrl: `http://127.0.0.1:${ports[i * 2]}`,
      peerUrl: `http://127.0.0.1:${ports[i * 2 + 1]}`,
    }));
    const cluster = new EtcdCluster(members, baseDir);
    try {
      for (const member of members) cluster.#spawn(binary, member);
      await cluster.leader(START_TIMEOUT_MS);
    } catch (err) {
      await cluster.teardown();
      throw err;
    }
    return cluster;
  }

  #spawn(binary: string, member: EtcdMember): void {
    const initialCluster = this.members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
    const args = [
      `--name=${member.name}`,
      `--data-dir=${join(this.#baseDir, member.name)}`,
      `--listen-client-urls=${member.clientUrl}`,
      `--advertise-client-urls=${member.clientUrl}`,
      `--listen-peer-urls=${member.peerUrl}`,
      `--initial-advertise-peer-urls=${member.peerUrl}`,
      `--initial-cluster=${initialCluster}`,
      '--initial-cluster-state=new',
      `--initial-cluster-token=bench-${process.pid}`,
      '--heartbeat-interval=100',
      '--election-timeout=1000',
      '--log-level=warn',
    ];
    const log = createWriteStream(join(this.#baseDir, `${member.name}.log`));
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    child.once('exit', () => this.#procs.delete(member.name));
    this.#procs.set(member.name, child);
  }

  /** Process ids of running members by name (`<name>-leader` for `leader`). */
  pids(leader: string): ReadonlyMap<string, number> {
    const pids = new Map<string, number>();
    for (const [name, child] of this.#procs)
      if (child.pid !== undefined) pids.set(name === leader ? `${name}-leader` : name, child.pid);
    return pids;
  }

  /** Polls /v3/maintenance/status on running members until all name the same leader; its name. */
  async leader(timeoutMs: number): Promise<string> {
    const until = performance.now() + timeoutMs;
    while (performance.now() < until) {
      const running = this.members.filter((m) => this.#procs.has(m.name));
      const views = await Promise.all(running.map((m) => memberStatus(m.clientUrl)));
      const leaders = new Set(views.map((v) => v?.leader ?? null));
      const leaderIndex = views.findIndex((v) => v !== null && v.leader === v.memberId);
      if (leaders.size === 1 && !leaders.has(null) && leaderIndex >= 0)
        return running[leaderIndex]!.name;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`etcd cluster has no agreed leader within ${timeoutMs} ms`);
  }

  /** SIGKILLs member `name` and waits for its exit. */
  async kill(name: string): Promise<void> {
    const child = this.#procs.get(name);
    if (child === undefined) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }

  /** Kills every member and removes the data directories. Idempotent. */
  async teardown(): Promise<void> {
    await Promise.all(this.members.map((m) => this.kill(m.name)));
    rmSync(this.#baseDir, { recursive: true, force: true });
  }
}

/** `{memberId, leader}` of one member (ids as decimal strings), or null when it does not answer. */
async function memberStatus(url: string): Promise<{ memberId: string; leader: string } | null> {
  const http = new JsonHttp(url, 1);
  try {
    const a = await http.call('POST', '/v3/maintenance/status', {}, 1_000);
    const memberId = a.body?.header?.member_id;
    const leader = a.body?.leader;
    if (a.status !== 200 || typeof memberId !== 'string' || typeof leader !== 'string') return null;
    return { memberId, leader };
  } catch {
    return null;
  } finally {
    await http.close();
  }
}

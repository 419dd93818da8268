/**
 * The netns backend: node processes, each in its own network namespace (topology/netns.ts),
 * started with `ip netns exec <ns> <command>` (which execs in place, so the child's pid is the
 * node's), stdout+stderr appended to `<runDir>/nodes/<id>.log`, data in `<runDir>/data/<id>`.
 * Same verbs as the loopback helper test/src/support/cluster.ts (start/stop/kill/pause/resume,
 * endpoints), plus the network faults of `ChaosBackend`.
 *
 * Clock faults use libfaketime (Debian `libfaketime`, installed by scripts/chaos-deps.sh): with
 * `wallClockFaults` every node runs under LD_PRELOAD with a per-node timestamp file and
 * DONT_FAKE_MONOTONIC=1, so `setWallClockOffset` steps only its wall clock at run time; a
 * `clockRate` start option runs the process with FAKETIME="+0 x<rate>", which (measured on this
 * machine, Node 20) scales performance.now(), hrtime and timers as well as Date.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  rmSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { ClientAddress, NodeEndpoint, NodeId, NodeProcessState } from '../types.js';
import type { BackendCapabilities, ChaosBackend, LinkBlock, NodeStartOptions } from './backend.js';
import type { MemberAddress, NodeCommandBuilder } from './node-command.js';
import { NetnsTopology, type NetemSpec } from './netns.js';

/** First HTTP / Raft ports (node i gets base + i, like docker-compose.yml's 7001-7003). */
export const httpPortBase = 7001;
export const raftPortBase = 7101;

/** How long `stopNode` waits after SIGTERM before SIGKILL. */
const stopGraceMs = 5_000;

/** Options of `NetnsCluster.create`. */
export interface NetnsClusterOptions {
  readonly nodeIds?: readonly NodeId[];
  /** The run folder (node logs and data go under it). Created if missing. */
  readonly runDir: string;
  readonly command: NodeCommandBuilder;
  /** Extra client addresses (beyond c0). Default 4. */
  readonly clientCount?: number;
  /** Start nodes under libfaketime so wall-clock steps work (needs libfaketime). Default false. */
  readonly wallClockFaults?: boolean;
  /** Called with one line per lifecycle event (start, exit, signal). */
  readonly log?: (line: string) => void;
}

/** Locates Debian's libfaketime preload library, or null. */
export function findLibfaketime(): string | null {
  for (const dir of ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib']) {
    const path = join(dir, 'faketime/libfaketime.so.1');
    if (existsSync(path)) return path;
  }
  try {
    for (const entry of readdirSync('/usr/lib')) {
      const path = join('/usr/lib', entry, 'faketime/libfaketime.so.1');
      if (existsSync(path)) return path;
    }
  } catch {
    // no /usr/lib
  }
  return null;
}

interface NodeSlot {
  readonly id: NodeId;
  readonly endpoint: NodeEndpoint;
  readonly dataDir: string;
  readonly logPath: string;
  readonly clockFile: string;
  state: NodeProcessState;
  /** Process starts so far (see `ChaosBackend.incarnation`). */
  starts: number;
  /** Data directory wipes so far (see `ChaosBackend.dataGeneration`). */
  wipes: number;
  child: ChildProcess | null;
  exited: Promise<void> | null;
}

/** Namespaced real-process cluster (root only). Make with `create`, then `up`. */
export class NetnsCluster implements ChaosBackend {
  readonly kind = 'netns' as const;
  readonly nodeIds: readonly NodeId[];
  readonly capabilities: BackendCapabilities;
  readonly topology: NetnsTopology;
  readonly clientAddresses: readonly ClientAddress[];
  readonly #slots = new Map<NodeId, NodeSlot>();
  readonly #options: NetnsClusterOptions;
  readonly #faketimeLib: string | null;
  #down = false;

  private constructor(
    topology: NetnsTopology,
    options: NetnsClusterOptions,
    faketimeLib: string | null,
  ) {
    this.topology = topology;
    this.#options = options;
    this.#faketimeLib = faketimeLib;
    this.nodeIds = [...topology.nodes.keys()];
    this.capabilities = {
      linkBlocks: true,
      netemLoss: true,
      netemDelay: topology.netemAvailable,
      clockRate: faketimeLib !== null,
      wallClockStep: faketimeLib !== null && options.wallClockFaults === true,
      membership: true,
    };
    this.clientAddresses = topology.clients.map((c, i) => ({
      id: c.id,
      localAddress: i === 0 ? null : c.address,
    }));
    mkdirSync(join(options.runDir, 'nodes'), { recursive: true });
    mkdirSync(join(options.runDir, 'data'), { recursive: true });
    this.nodeIds.forEach((id, i) => {
      const node = topology.node(id);
      const httpAddress = `${node.address}:${httpPortBase + i}`;
      const endpoint: NodeEndpoint = {
        id,
        httpUrl: `http://${httpAddress}`,
        httpAddress,
        raftAddress: `${node.address}:${raftPortBase + i}`,
      };
      this.#slots.set(id, {
        id,
        endpoint,
        dataDir: join(options.runDir, 'data', id),
        logPath: join(options.runDir, 'nodes', `${id}.log`),
        clockFile: join(options.runDir, 'nodes', `${id}.faketime`),
        state: 'stopped',
        starts: 0,
        wipes: 0,
        child: null,
        exited: null,
      });
    });
  }

  /** Builds the namespaces (not the processes). Throws when not root or a command fails. */
  static async create(options: NetnsClusterOptions): Promise<NetnsCluster> {
    if (process.getuid?.() !== 0) throw new Error('the netns backend needs root');
    const topology = await NetnsTopology.create({
      nodeIds: options.nodeIds ?? ['n1', 'n2', 'n3'],
      clientCount: options.clientCount ?? 4,
    });
    const faketimeLib = findLibfaketime();
    if (options.wallClockFaults === true && faketimeLib === null) {
      await topology.destroy();
      throw new Error('wallClockFaults needs libfaketime (run scripts/chaos-deps.sh)');
    }
    return new NetnsCluster(topology, options, faketimeLib);
  }

  #slot(id: NodeId): NodeSlot {
    const slot = this.#slots.get(id);
    if (slot === undefined) throw new Error(`unknown node ${id}`);
    return slot;
  }

  #log(line: string): void {
    this.#options.log?.(line);
  }

  endpoints(): readonly NodeEndpoint[] {
    return this.nodeIds.map((id) => this.#slot(id).endpoint);
  }

  endpoint(id: NodeId): NodeEndpoint {
    return this.#slot(id).endpoint;
  }

  nodeState(id: NodeId): NodeProcessState {
    return this.#slot(id).state;
  }

  logPath(id: NodeId): string {
    return this.#slot(id).logPath;
  }

  /** Pid of the node's process, or null when stopped. */
  pid(id: NodeId): number | null {
    return this.#slot(id).child?.pid ?? null;
  }

  incarnation(id: NodeId): number {
    return this.#slot(id).starts;
  }

  dataGeneration(id: NodeId): number {
    return this.#slot(id).wipes;
  }

  async wipeNode(id: NodeId): Promise<void> {
    const slot = this.#slot(id);
    if (slot.state !== 'stopped') throw new Error(`wipeNode ${id}: node is ${slot.state}`);
    slot.wipes++;
    rmSync(slot.dataDir, { recursive: true, force: true });
    appendFileSync(
      slot.logPath,
      `--- harness: wiped ${id} data (generation ${slot.wipes}) ${new Date().toISOString()}\n`,
    );
    this.#log(`node ${id} data wiped (generation ${slot.wipes})`);
  }

  async up(): Promise<void> {
    for (const id of this.nodeIds) await this.startNode(id);
  }

  async startNode(id: NodeId, options: NodeStartOptions = {}): Promise<void> {
    assert.ok(!this.#down, 'cluster is down');
    const slot = this.#slot(id);
    if (slot.state !== 'stopped') throw new Error(`startNode ${id}: node is ${slot.state}`);
    slot.starts++;
    mkdirSync(slot.dataDir, { recursive: true });
    const members: MemberAddress[] = this.nodeIds.map((m) => ({
      id: m,
      raftAddress: this.#slot(m).endpoint.raftAddress,
      httpAddress: this.#slot(m).endpoint.httpAddress,
    }));
    const command = this.#options.command({
      id,
      httpAddress: slot.endpoint.httpAddress,
      raftAddress: slot.endpoint.raftAddress,
      members,
      dataDir: slot.dataDir,
      ...(options.join !== undefined ? { join: options.join } : {}),
    });
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      ...command.env,
    };
    const rate = options.clockRate ?? 1;
    if (rate !== 1) {
      if (this.#faketimeLib === null)
        throw new Error('clockRate needs libfaketime (run scripts/chaos-deps.sh)');
      Object.assign(env, {
        LD_PRELOAD: this.#faketimeLib,
        FAKETIME: `+0 x${rate}`,
        DONT_FAKE_MONOTONIC: '0',
      });
    } else if (this.capabilities.wallClockStep) {
      if (!existsSync(slot.clockFile)) writeFileSync(slot.clockFile, '+0\n');
      Object.assign(env, {
        LD_PRELOAD: this.#faketimeLib!,
        FAKETIME_TIMESTAMP_FILE: slot.clockFile,
        FAKETIME_CACHE_DURATION: '1',
        DONT_FAKE_MONOTONIC: '1',
      });
    }
    const logFd = openSync(slot.logPath, 'a');
    appendFileSync(
      logFd,
      `--- harness: start ${id} ${new Date().toISOString()}${rate !== 1 ? ` clockRate=${rate}` : ''}${options.join !== undefined ? ` join=${options.join}` : ''}\n`,
    );
    const child = spawn('ip', this.topology.execArgv(id, [command.file, ...command.args]), {
      stdio: ['ignore', logFd, logFd],
      env,
      detached: true,
    });
    closeSync(logFd);
    slot.child = child;
    slot.state = 'running';
    slot.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        if (slot.child === child) {
          slot.child = null;
          slot.state = 'stopped';
        }
        try {
          appendFileSync(
            slot.logPath,
            `--- harness: exit ${id} code=${code} signal=${signal} ${new Date().toISOString()}\n`,
          );
        } catch {
          // run folder gone
        }
        this.#log(`node ${id} exited code=${code} signal=${signal}`);
        resolve();
      });
      child.once('error', (error) => {
        this.#log(`node ${id} spawn error: ${error.message}`);
      });
    });
    this.#log(`node ${id} started pid=${child.pid}${rate !== 1 ? ` clockRate=${rate}` : ''}`);
  }

  async stopNode(id: NodeId): Promise<void> {
    const slot = this.#slot(id);
    const child = slot.child;
    if (child === null || slot.state === 'stopped') return;
    child.kill('SIGTERM');
    if (slot.state === 'paused') child.kill('SIGCONT');
    const exited = slot.exited!;
    const timer = setTimeout(() => child.kill('SIGKILL'), stopGraceMs);
    await exited;
    clearTimeout(timer);
  }

  async killNode(id: NodeId): Promise<void> {
    const slot = this.#slot(id);
    const child = slot.child;
    if (child === null || slot.state === 'stopped') return;
    child.kill('SIGKILL');
    await slot.exited;
  }

  async pauseNode(id: NodeId): Promise<void> {
    const slot = this.#slot(id);
    if (slot.state !== 'running' || slot.child === null)
      throw new Error(`pauseNode ${id}: node is ${slot.state}`);
    slot.child.kill('SIGSTOP');
    slot.state = 'paused';
  }

  async resumeNode(id: NodeId): Promise<void> {
    const slot = this.#slot(id);
    if (slot.state !== 'paused' || slot.child === null) return;
    slot.child.kill('SIGCONT');
    slot.state = 'running';
  }

  #addressOf(endpointId: string): string {
    const node = this.topology.nodes.get(endpointId);
    if (node !== undefined) return node.address;
    const client = this.topology.clients.find((c) => c.id === endpointId);
    if (client === undefined) throw new Error(`unknown node or client ${endpointId}`);
    return client.address;
  }

  async setBlocks(blocks: readonly LinkBlock[]): Promise<void> {
    // A block from→to is enforced where it can be: on `to`'s INPUT when `to` is a node, else on
    // `from`'s OUTPUT (a client has no namespace of its own).
    const dropFrom = new Map<NodeId, string[]>(this.nodeIds.map((id) => [id, []]));
    const dropTo = new Map<NodeId, string[]>(this.nodeIds.map((id) => [id, []]));
    for (const block of blocks) {
      if (dropFrom.has(block.to)) dropFrom.get(block.to)!.push(this.#addressOf(block.from));
      else if (dropTo.has(block.from)) dropTo.get(block.from)!.push(this.#addressOf(block.to));
      else throw new Error(`block ${block.from}->${block.to}: one end must be a node`);
    }
    for (const id of this.nodeIds)
      await this.topology.setDropRules(id, {
        dropFrom: dropFrom.get(id)!,
        dropTo: dropTo.get(id)!,
      });
  }

  async setNetem(id: NodeId, spec: NetemSpec | null): Promise<void> {
    await this.topology.setNetem(id, spec);
  }

  async setWallClockOffset(id: NodeId, offsetSeconds: number): Promise<void> {
    if (!this.capabilities.wallClockStep)
      throw new Error('wall-clock steps need wallClockFaults: true and libfaketime');
    assert.ok(Number.isInteger(offsetSeconds), 'offsetSeconds: integer');
    writeFileSync(this.#slot(id).clockFile, `${offsetSeconds >= 0 ? '+' : ''}${offsetSeconds}\n`);
  }

  async down(): Promise<void> {
    if (this.#down) return;
    this.#down = true;
    await Promise.all(this.nodeIds.map((id) => this.killNode(id).catch(() => undefined)));
    await this.topology.destroy();
  }

  downSync(): void {
    if (this.#down) return;
    this.#down = true;
    for (const slot of this.#slots.values()) {
      try {
        slot.child?.kill('SIGKILL');
      } catch {
        // gone
      }
    }
    this.topology.destroySync();
  }
}

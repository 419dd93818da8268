/**
 * The compose backend: the same `ChaosBackend` over the repository's docker-compose.yml
 * (services n1..n3, HTTP published on 127.0.0.1:7001-7003). Process faults map to
 * `docker compose kill -s SIGKILL | stop | start | pause | unpause`; a partition can only isolate
 * whole nodes (`docker network disconnect/connect`), so peer-only, one-way and client cuts,
 * netem and clock faults are unsupported here (capabilities say so; the schedule skips them).
 *
 * Exercised where a container engine is ready (scripts/container-engine.sh sets one up): the
 * compose slice of the suite and `npm run chaos -- --backend compose`. Uses `docker compose` (v2
 * plugin) when present, else `docker-compose` (v1).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import type { ClientAddress, NodeEndpoint, NodeId, NodeProcessState } from '../types.js';
import {
  UnsupportedFaultError,
  type BackendCapabilities,
  type ChaosBackend,
  type LinkBlock,
  type NodeStartOptions,
} from './backend.js';
import type { NetemSpec } from './netns.js';
import { run, runSyncQuiet } from '../util/exec.js';

/**
 * Deadline of one compose or docker command, in ms: creating or stopping containers takes seconds,
 * and tens of seconds on a loaded machine.
 */
const composeCommandTimeoutMs = 120_000;

/** Options of `ComposeCluster.create`. */
export interface ComposeClusterOptions {
  readonly runDir: string;
  /** Folder holding docker-compose.yml. */
  readonly repoRoot: string;
  readonly nodeIds?: readonly NodeId[];
  readonly log?: (line: string) => void;
}

/** `[file, ...prefixArgs]` of the compose CLI available here. Throws when there is none. */
function composeCli(): [string, ...string[]] {
  try {
    execFileSync('docker', ['compose', 'version'], { stdio: 'ignore' });
    return ['docker', 'compose'];
  } catch {
    try {
      execFileSync('docker-compose', ['version'], { stdio: 'ignore' });
      return ['docker-compose'];
    } catch {
      throw new Error('no docker compose CLI found (docker compose or docker-compose)');
    }
  }
}

/** Docker compose cluster. */
export class ComposeCluster implements ChaosBackend {
  readonly kind = 'compose' as const;
  readonly nodeIds: readonly NodeId[];
  readonly capabilities: BackendCapabilities = {
    linkBlocks: false,
    netemLoss: false,
    netemDelay: false,
    clockRate: false,
    wallClockStep: false,
    membership: false,
  };
  readonly clientAddresses: readonly ClientAddress[] = [{ id: 'c0', localAddress: null }];
  readonly #options: ComposeClusterOptions;
  readonly #cli: [string, ...string[]];
  readonly #project: string;
  readonly #states = new Map<NodeId, NodeProcessState>();
  readonly #starts = new Map<NodeId, number>();
  readonly #disconnected = new Set<NodeId>();
  #down = false;

  private constructor(options: ComposeClusterOptions, cli: [string, ...string[]]) {
    this.#options = options;
    this.#cli = cli;
    this.nodeIds = options.nodeIds ?? ['n1', 'n2', 'n3'];
    this.#project = `tenure-chaos-${process.pid}`;
    for (const id of this.nodeIds) this.#states.set(id, 'stopped');
  }

  /** Checks the compose file and CLI exist. Throws otherwise. */
  static async create(options: ComposeClusterOptions): Promise<ComposeCluster> {
    if (!existsSync(join(options.repoRoot, 'docker-compose.yml')))
      throw new Error(`no docker-compose.yml in ${options.repoRoot}`);
    return new ComposeCluster(options, composeCli());
  }

  #compose(args: readonly string[]): Promise<string> {
    const [file, ...prefix] = this.#cli;
    return run(
      file,
      [
        ...prefix,
        '-p',
        this.#project,
        '-f',
        join(this.#options.repoRoot, 'docker-compose.yml'),
        ...args,
      ],
      composeCommandTimeoutMs,
    );
  }

  /** The service's container id (v1 and v2 name containers differently, so ask compose). */
  async #container(id: NodeId): Promise<string> {
    const out = (await this.#compose(['ps', '-q', id])).trim();
    if (out === '') throw new Error(`no container for service ${id}`);
    return out.split('\n')[0]!;
  }

  endpoints(): readonly NodeEndpoint[] {
    return this.nodeIds.map((id) => this.endpoint(id));
  }

  endpoint(id: NodeId): NodeEndpoint {
    const i = this.nodeIds.indexOf(id);
    if (i < 0) throw new Error(`unknown node ${id}`);
    return {
      id,
      httpUrl: `http://127.0.0.1:${7001 + i}`,
      httpAddress: `127.0.0.1:${7001 + i}`,
      raftAddress: `${id}:7100`,
    };
  }

  nodeState(id: NodeId): NodeProcessState {
    return this.#states.get(id) ?? 'stopped';
  }

  incarnation(id: NodeId): number {
    return this.#starts.get(id) ?? 0;
  }

  dataGeneration(): number {
    return 0;
  }

  async wipeNode(): Promise<void> {
    throw new UnsupportedFaultError('compose', 'wipe a data volume');
  }

  #started(id: NodeId): void {
    this.#starts.set(id, this.incarnation(id) + 1);
  }

  logPath(id: NodeId): string {
    return join(this.#options.runDir, 'nodes', `${id}.log`);
  }

  async up(): Promise<void> {
    for (const id of this.nodeIds) this.#started(id);
    await this.#compose(['up', '-d', ...this.nodeIds]);
    for (const id of this.nodeIds) this.#states.set(id, 'running');
  }

  async startNode(id: NodeId, options: NodeStartOptions = {}): Promise<void> {
    if (options.join !== undefined) throw new UnsupportedFaultError('compose', 'start with --join');
    this.#started(id);
    await this.#compose(['start', id]);
    this.#states.set(id, 'running');
  }

  async stopNode(id: NodeId): Promise<void> {
    if (this.nodeState(id) === 'paused') await this.resumeNode(id);
    await this.#compose(['stop', '-t', '5', id]);
    this.#states.set(id, 'stopped');
  }

  async killNode(id: NodeId): Promise<void> {
    await this.#compose(['kill', '-s', 'SIGKILL', id]);
    this.#states.set(id, 'stopped');
  }

  async pauseNode(id: NodeId): Promise<void> {
    await this.#compose(['pause', id]);
    this.#states.set(id, 'paused');
  }

  async resumeNode(id: NodeId): Promise<void> {
    if (this.nodeState(id) !== 'paused') return;
    await this.#compose(['unpause', id]);
    this.#states.set(id, 'running');
  }

  /** Only whole-node isolation: every block must belong to a node cut from all other nodes both ways. */
  async setBlocks(blocks: readonly LinkBlock[]): Promise<void> {
    const isolated = new Set<NodeId>();
    for (const id of this.nodeIds) {
      const others = this.nodeIds.filter((o) => o !== id);
      if (
        others.every(
          (o) =>
            blocks.some((b) => b.from === id && b.to === o) &&
            blocks.some((b) => b.from === o && b.to === id),
        )
      )
        isolated.add(id);
    }
    const explained = blocks.every((b) => isolated.has(b.from) || isolated.has(b.to));
    if (!explained)
      throw new UnsupportedFaultError('compose', 'block single links (only whole-node isolation)');
    const network = `${this.#project}_default`;
    for (const id of this.nodeIds) {
      if (isolated.has(id) && !this.#disconnected.has(id)) {
        await run(
          'docker',
          ['network', 'disconnect', network, await this.#container(id)],
          composeCommandTimeoutMs,
        );
        this.#disconnected.add(id);
      } else if (!isolated.has(id) && this.#disconnected.has(id)) {
        await run(
          'docker',
          ['network', 'connect', '--alias', id, network, await this.#container(id)],
          composeCommandTimeoutMs,
        );
        this.#disconnected.delete(id);
      }
    }
  }

  async setNetem(_id: NodeId, spec: NetemSpec | null): Promise<void> {
    if (spec !== null)
      throw new UnsupportedFaultError('compose', 'degrade links (no NET_ADMIN/tc in the image)');
  }

  async setWallClockOffset(): Promise<void> {
    throw new UnsupportedFaultError('compose', 'step clocks');
  }

  async down(): Promise<void> {
    if (this.#down) return;
    this.#down = true;
    for (const id of this.nodeIds) {
      await this.#compose(['logs', '--no-color', id])
        .then(async (text) => {
          const { mkdirSync, writeFileSync } = await import('node:fs');
          mkdirSync(join(this.#options.runDir, 'nodes'), { recursive: true });
          writeFileSync(this.logPath(id), text);
        })
        .catch(() => undefined);
    }
    await this.#compose(['down', '-v', '-t', '2']).catch((error: Error) =>
      this.#options.log?.(`compose down failed: ${error.message}`),
    );
  }

  downSync(): void {
    if (this.#down) return;
    this.#down = true;
    const [file, ...prefix] = this.#cli;
    runSyncQuiet(file, [
      ...prefix,
      '-p',
      this.#project,
      '-f',
      join(this.#options.repoRoot, 'docker-compose.yml'),
      'down',
      '-v',
      '-t',
      '2',
    ]);
  }
}

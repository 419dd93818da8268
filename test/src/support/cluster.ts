/**
 * Test support: a cluster of REAL `tenure-server` processes (packages/server/dist/main.js) on
 * allocated loopback ports with temporary data directories. Start, wait for a leader (polling
 * /v1/cluster), kill -9 / SIGSTOP / SIGCONT / restart single nodes, and a teardown that never
 * leaks processes (also on process exit). Used by cluster tests, the API bench and chaos tests.
 *
 * Build the server first (`npx tsc -b packages/server`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  type WriteStream,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts } from '@tenure/testkit';

/** Repository root (this file is test/src/support or test/dist/support). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
/** The server entry spawned for every node. */
export const SERVER_MAIN = join(REPO_ROOT, 'packages', 'server', 'dist', 'main.js');

export interface ClusterOptions {
  /** Number of nodes (default 3). */
  readonly nodes?: number;
  readonly heartbeatMs?: number;
  readonly electionTimeoutMs?: number;
  /** pino level of the node processes (default `warn`); logs go to `<baseDir>/<id>.log`. */
  readonly logLevel?: string;
  /** Extra `tenure-server` flags for every node. */
  readonly extraArgs?: readonly string[];
  /** Extra flags of one node, asked again at every (re)start (e.g. its certificate files). */
  readonly nodeArgs?: (node: NodeInfo) => readonly string[];
  /** `https` when the nodes serve TLS (default `http`); the URLs use it. */
  readonly scheme?: 'http' | 'https';
  /** fetch of the harness's own requests (default global fetch; TLS clusters pass one with their CA). */
  readonly fetch?: typeof fetch;
  /** Keep data and logs after teardown (debugging). */
  readonly keepFiles?: boolean;
  /** Extra environment of every node process (e.g. TENURE_ROOT_TOKEN). */
  readonly env?: Readonly<Record<string, string>>;
  /** Bearer token the harness itself sends (/v1/cluster polls; `request` default) with `--auth`. */
  readonly token?: string;
  /**
   * How long `start` waits for the spawned nodes to agree on a leader (ms, default 120,000): node
   * processes start slowly on a loaded 2-core machine, and only the leader is waited for.
   */
  readonly startTimeoutMs?: number;
  /** Server entry to spawn (default {@link SERVER_MAIN}; benches compare another build with it). */
  readonly serverMain?: string;
}

export interface NodeInfo {
  readonly id: string;
  readonly httpPort: number;
  readonly raftPort: number;
  readonly httpAddress: string;
  readonly raftAddress: string;
  /** `http://127.0.0.1:<port>` (`https://` with `scheme: 'https'`) */
  readonly url: string;
  readonly dataDir: string;
  readonly logFile: string;
}

/** HTTP answer of `LocalCluster.request`: status, lower-case headers, parsed JSON (or text). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test answers are read field by field
export interface HttpAnswer<T = any> {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: T;
}

export interface ClusterView {
  readonly id: string;
  readonly leader: string | null;
  readonly term: number;
  readonly commitIndex: number;
  readonly appliedIndex: number;
  readonly clusterTimeMs: number;
  readonly members: readonly {
    id: string;
    role: string;
    httpAddress: string;
    raftAddress: string;
  }[];
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const c of live) {
      try {
        c.kill('SIGCONT');
        c.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/**
 * Default bound of `restart` (ms): how long a restarted node may take to answer /healthz. Minutes,
 * not seconds: the bound only matters when the node is broken, and a loaded machine is slow.
 */
export const NODE_START_TIMEOUT_MS = 180_000;

/** Default bound of `waitForLeader` (ms): minutes, for the same reason as {@link NODE_START_TIMEOUT_MS}. */
export const LEADER_TIMEOUT_MS = 180_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A running local cluster of real node processes. */
/** A start that failed because a node could not bind its port (taken after it was allocated). */
class PortTakenError extends Error {
  constructor(cause: unknown) {
    super('a node could not bind its allocated port', { cause });
  }
}

/** How a node process is started (see LocalCluster.restart / start). */
export interface SpawnOptions {
  /** `--join <url>` with `--http`/`--raft` instead of `--peers` (a node joining the cluster). */
  readonly join?: string;
  /** `--peers` value (default: the cluster's bootstrap list). */
  readonly peers?: string;
}

export class LocalCluster {
  /** Every node the cluster ever had (the bootstrap ones, then those added by addNode). */
  readonly nodes: NodeInfo[];
  readonly baseDir: string;
  readonly #opts: ClusterOptions;
  readonly #procs = new Map<string, ChildProcess>();
  readonly #logs = new Map<string, WriteStream>();
  readonly #paused = new Set<string>();
  readonly #exitCodes = new Map<string, number | null>();
  /** The nodes the cluster was created with (their list is `--peers`). */
  readonly #bootstrap: readonly NodeInfo[];
  #tornDown = false;
  readonly #fetch: typeof fetch;

  private constructor(nodes: NodeInfo[], baseDir: string, opts: ClusterOptions) {
    this.nodes = nodes;
    this.#bootstrap = [...nodes];
    this.baseDir = baseDir;
    this.#opts = opts;
    this.#fetch = opts.fetch ?? fetch;
  }

  /**
   * Allocate ports and directories, spawn every node and wait until a leader is known everywhere.
   * Free ports are released before the nodes bind them, so another process (a parallel test's
   * outgoing connection, say) can take one in between; a start whose node failed to bind
   * (EADDRINUSE in its log) is retried once on new ports. Any other start failure is thrown.
   */
  static async start(opts: ClusterOptions = {}): Promise<LocalCluster> {
    try {
      return await LocalCluster.#startOnce(opts);
    } catch (err) {
      if (!(err instanceof PortTakenError)) throw err;
      return LocalCluster.#startOnce(opts);
    }
  }

  static async #startOnce(opts: ClusterOptions): Promise<LocalCluster> {
    const main = opts.serverMain ?? SERVER_MAIN;
    if (!existsSync(main))
      throw new Error(`${main} is missing: run npx tsc -b packages/server first`);
    installExitHook();
    const n = opts.nodes ?? 3;
    const ports = await freePorts(n * 2);
    const baseDir = mkdtempSync(join(tmpdir(), 'tenure-cluster-'));
    const nodes: NodeInfo[] = Array.from({ length: n }, (_, i) => {
      const id = `n${i + 1}`;
      const httpPort = ports[i * 2]!;
      const raftPort = ports[i * 2 + 1]!;
      return {
        id,
        httpPort,
        raftPort,
        httpAddress: `127.0.0.1:${httpPort}`,
        raftAddress: `127.0.0.1:${raftPort}`,
        url: `${opts.scheme ?? 'http'}://127.0.0.1:${httpPort}`,
        dataDir: join(baseDir, id),
        logFile: join(baseDir, `${id}.log`),
      };
    });
    const c = new LocalCluster(nodes, baseDir, opts);
    try {
      for (const node of nodes) c.#spawn(node.id);
      await c.waitForLeader(opts.startTimeoutMs ?? 120_000);
    } catch (err) {
      const portTaken = nodes.some(
        (node) =>
          existsSync(node.logFile) && readFileSync(node.logFile, 'utf8').includes('EADDRINUSE'),
      );
      await c.teardown();
      throw portTaken ? new PortTakenError(err) : err;
    }
    return c;
  }

  /** `--peers` value of this cluster: its bootstrap nodes (not those added by addNode). */
  get peers(): string {
    return this.#bootstrap.map((n) => `${n.id}=${n.raftAddress}@${n.httpAddress}`).join(',');
  }

  /** `--peers` value naming `ids` (any known nodes, e.g. to try a changed list). */
  peersOf(ids: readonly string[]): string {
    return ids
      .map((id) => this.node(id))
      .map((n) => `${n.id}=${n.raftAddress}@${n.httpAddress}`)
      .join(',');
  }

  /** Allocates ports and a data directory for a new node `id` (not started; see restart). */
  async addNode(id: string): Promise<NodeInfo> {
    if (this.nodes.some((n) => n.id === id)) throw new Error(`${id} exists`);
    const [httpPort, raftPort] = (await freePorts(2)) as [number, number];
    const node: NodeInfo = {
      id,
      httpPort,
      raftPort,
      httpAddress: `127.0.0.1:${httpPort}`,
      raftAddress: `127.0.0.1:${raftPort}`,
      url: `http://127.0.0.1:${httpPort}`,
      dataDir: join(this.baseDir, id),
      logFile: join(this.baseDir, `${id}.log`),
    };
    this.nodes.push(node);
    return node;
  }

  /** Deletes the data directory of a stopped node (a lost disk). */
  wipe(id: string): void {
    if (this.#procs.has(id)) throw new Error(`${id} is still running`);
    rmSync(this.node(id).dataDir, { recursive: true, force: true });
  }

  /**
   * Resolves with the exit code once the process of `id` has exited (null: killed by a signal);
   * rejects when it is still running after `timeoutMs`.
   */
  waitExit(id: string, timeoutMs = 120_000): Promise<number | null> {
    const child = this.#procs.get(id);
    if (!child) return Promise.resolve(this.#exitCodes.get(id) ?? null);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${id} did not exit within ${timeoutMs} ms`)),
        timeoutMs,
      );
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
  }

  node(id: string): NodeInfo {
    const n = this.nodes.find((x) => x.id === id);
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  /** Ids of nodes whose process is running (paused ones included). */
  running(): string[] {
    return this.nodes.map((n) => n.id).filter((id) => this.#procs.has(id));
  }

  pid(id: string): number | null {
    return this.#procs.get(id)?.pid ?? null;
  }

  #spawn(id: string, spawnOpts: SpawnOptions = {}): void {
    const node = this.node(id);
    const o = this.#opts;
    const membership =
      spawnOpts.join !== undefined
        ? ['--join', spawnOpts.join, '--http', node.httpAddress, '--raft', node.raftAddress]
        : ['--peers', spawnOpts.peers ?? this.peers];
    const args = [
      o.serverMain ?? SERVER_MAIN,
      '--id',
      id,
      ...membership,
      '--data-dir',
      node.dataDir,
      '--cluster-id',
      'tenure-test',
      '--heartbeat-ms',
      String(o.heartbeatMs ?? 100),
      '--election-timeout-ms',
      String(o.electionTimeoutMs ?? 1000),
      '--log-level',
      o.logLevel ?? 'warn',
      ...(o.extraArgs ?? []),
      ...(o.nodeArgs?.(node) ?? []),
    ];
    let log = this.#logs.get(id);
    if (!log) {
      log = createWriteStream(node.logFile, { flags: 'a' });
      this.#logs.set(id, log);
    }
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(o.env === undefined ? {} : { env: { ...process.env, ...o.env } }),
    });
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    live.add(child);
    this.#procs.set(id, child);
    child.once('exit', (code) => {
      this.#exitCodes.set(id, code);
      live.delete(child);
      if (this.#procs.get(id) === child) this.#procs.delete(id);
      this.#paused.delete(id);
    });
  }

  /**
   * Start a stopped node again with the same data; resolves once it answers /healthz, rejects at once
   * if the process exits first. `timeoutMs` (default {@link NODE_START_TIMEOUT_MS}) only bounds a
   * broken start: a node process starts slowly on a loaded 2-core machine.
   */
  async restart(
    id: string,
    timeoutMs = NODE_START_TIMEOUT_MS,
    spawnOpts: SpawnOptions = {},
  ): Promise<void> {
    if (this.#procs.has(id)) throw new Error(`${id} is still running`);
    this.#spawn(id, spawnOpts);
    const child = this.#procs.get(id)!;
    const gone = new AbortController();
    child.once('exit', () => gone.abort());
    const until = Date.now() + timeoutMs;
    while (Date.now() < until && !gone.signal.aborted) {
      try {
        const r = await this.#fetch(`${this.node(id).url}/healthz`, {
          signal: AbortSignal.any([gone.signal, AbortSignal.timeout(5000)]),
        });
        if (r.status === 200) return;
      } catch {
        // not listening yet (or exited: checked by the loop)
      }
      await sleep(50);
    }
    if (gone.signal.aborted)
      throw new Error(`${id} exited during start; see ${this.node(id).logFile}`);
    throw new Error(`${id} did not come up within ${timeoutMs} ms`);
  }

  /** Send `signal` (default SIGKILL) and wait for the process to exit. */
  async kill(id: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.#procs.get(id);
    if (!child) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    if (this.#paused.has(id)) child.kill('SIGCONT');
    child.kill(signal);
    await exited;
  }

  /** Graceful stop (SIGTERM), SIGKILL after `timeoutMs`. Resolves with the exit code (null if killed). */
  async stop(id: string, timeoutMs = 60_000): Promise<number | null> {
    const child = this.#procs.get(id);
    if (!child) return null;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await exited;
    clearTimeout(t);
    return code;
  }

  /** SIGSTOP the node (it keeps its sockets but answers nothing). */
  pause(id: string): void {
    const child = this.#procs.get(id);
    if (!child) throw new Error(`${id} is not running`);
    child.kill('SIGSTOP');
    this.#paused.add(id);
  }

  /** SIGCONT a paused node. */
  resume(id: string): void {
    const child = this.#procs.get(id);
    if (!child) return;
    child.kill('SIGCONT');
    this.#paused.delete(id);
  }

  /** GET /v1/cluster of one node, or null when it does not answer within `timeoutMs` (default 1 s). */
  async clusterView(id: string, timeoutMs = 1000): Promise<ClusterView | null> {
    try {
      const r = await this.#fetch(`${this.node(id).url}/v1/cluster`, {
        signal: AbortSignal.timeout(timeoutMs),
        headers: this.#authHeader(),
      });
      if (r.status !== 200) return null;
      return (await r.json()) as ClusterView;
    } catch {
      return null;
    }
  }

  /**
   * Poll /v1/cluster on every running, unpaused node until all of them (at least a majority of the
   * cluster) name the same leader, which is itself among them. Resolves with its id. `timeoutMs`
   * (default {@link LEADER_TIMEOUT_MS}) only bounds a broken cluster, never a slow machine.
   */
  async waitForLeader(
    timeoutMs = LEADER_TIMEOUT_MS,
    among: readonly string[] = this.running().filter((id) => !this.#paused.has(id)),
  ): Promise<string> {
    const until = Date.now() + timeoutMs;
    const majority = Math.floor(this.nodes.length / 2) + 1;
    while (Date.now() < until) {
      // A node that is only slow (loaded machine) gets 5 s per poll; paused ones are not among these.
      const views = await Promise.all(among.map((id) => this.clusterView(id, 5000)));
      const leaders = new Set(views.map((v) => v?.leader ?? null));
      const leader = views[0]?.leader ?? null;
      if (
        views.length >= majority &&
        views.every((v) => v !== null) &&
        leaders.size === 1 &&
        leader !== null &&
        among.includes(leader)
      ) {
        const lv = views[among.indexOf(leader)];
        if (lv && lv.members.find((m) => m.id === leader)?.role === 'leader') return leader;
      }
      await sleep(50);
    }
    throw new Error(`no leader agreed on by ${among.join(', ')} within ${timeoutMs} ms`);
  }

  /** The current leader (polling until known). */
  leader(timeoutMs?: number): Promise<string> {
    return this.waitForLeader(timeoutMs);
  }

  /** JSON request to one node. `body` undefined sends no body. Never throws on HTTP status. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test answers are read field by field
  async request<T = any>(
    id: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    timeoutMs = 30_000,
  ): Promise<HttpAnswer<T>> {
    const all = { ...this.#authHeader(), ...headers };
    const r = await this.#fetch(`${this.node(id).url}${path}`, {
      method,
      headers: body === undefined ? all : { 'content-type': 'application/json', ...all },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await r.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON (metrics, docs)
    }
    const h: Record<string, string> = {};
    r.headers.forEach((v, k) => (h[k] = v));
    return { status: r.status, headers: h, body: parsed as T };
  }

  /** `Authorization` of the harness's own requests (none without `token`). */
  #authHeader(): Record<string, string> {
    const token = this.#opts.token;
    return token === undefined ? {} : { authorization: `Bearer ${token}` };
  }

  /** Kill every process (SIGCONT first for paused ones) and delete the files. Idempotent. */
  async teardown(): Promise<void> {
    if (this.#tornDown) return;
    this.#tornDown = true;
    await Promise.all(this.running().map((id) => this.kill(id, 'SIGKILL')));
    for (const log of this.#logs.values()) log.end();
    if (!this.#opts.keepFiles) rmSync(this.baseDir, { recursive: true, force: true });
  }
}

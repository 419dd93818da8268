/**
 * The network of one chaos run on Linux network namespaces (root only).
 *
 * Shape: one bridge `<prefix>-br` in the root namespace carrying the run's /24 (10.77.K.0/24, K
 * allocated per run so parallel runs never share a subnet); each node in its own namespace
 * `<prefix>-<nodeId>` with `eth0` (the namespace end of a veth pair whose root end `<prefix>-<nodeId>`
 * is enslaved to the bridge) at 10.77.K.(11+i). Clients stay in the ROOT namespace on the bridge:
 * the bridge's own address 10.77.K.1 (`c0`) plus one extra address per client (10.77.K.(21+j),
 * `c1`…), so a fault can cut off one client by its source address.
 *
 * Faults act only inside node namespaces (iptables chains TENURE-IN/TENURE-OUT hooked from
 * INPUT/OUTPUT; tc netem on eth0), never on the root namespace's rules, so other suites and runs
 * are untouched.
 *
 * Ownership (concurrent runs on one machine): every run creates its state file
 * `/run/tenure-chaos/<prefix>.json` (owner = pid + process start time + boot id, run-owner.ts)
 * exclusively BEFORE taking a subnet lock or making any namespace or link, and removes it only
 * AFTER teardown left nothing of the prefix behind. A run's resources are removed only by the run
 * itself (`destroy`) or by `cleanupLeftovers` when the state file's owner is verifiably dead;
 * resources without a state file in the given state dir (a sibling run using another state dir, a
 * run mid-teardown) are never touched unless the caller asks for `unowned: true`.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { NodeId } from '../types.js';
import { run, runSyncQuiet, tryRun } from '../util/exec.js';
import { currentOwner, ownerLiveness, type OwnerLiveness, type RunOwner } from './run-owner.js';

/** Where run state files and subnet locks live (tmpfs, cleared on reboot). */
export const defaultStateDir = '/run/tenure-chaos';

/** Every run's prefix starts with this (and `cleanupLeftovers` only touches such names). */
export const prefixStem = 'tn';

/** The prefix pattern: stem + 6 hex digits (keeps interface names ≤ 15 bytes). */
const prefixPattern = /^tn[0-9a-f]{6}$/;

/** Subnet indices K of 10.77.K.0/24 a run may take. */
const subnetIndexMin = 1;
const subnetIndexMax = 250;

/** One node's place in the topology. */
export interface NetnsNode {
  readonly id: NodeId;
  /** Network namespace name, e.g. `tn1a2b3c-n1`. */
  readonly namespace: string;
  /** Root-namespace end of the veth pair (on the bridge). */
  readonly hostVeth: string;
  /** The node's IPv4 address (eth0 in its namespace). */
  readonly address: string;
}

/** One client source address in the root namespace. */
export interface NetnsClient {
  readonly id: string;
  readonly address: string;
}

/** What to drop on one node: addresses it must not receive from / send to. */
export interface DropRules {
  /** Drop packets arriving from these addresses (iptables INPUT -s). */
  readonly dropFrom: readonly string[];
  /** Drop packets leaving for these addresses (iptables OUTPUT -d). */
  readonly dropTo: readonly string[];
}

/**
 * Link degradation for one node's egress (eth0 in its namespace). All optional; an empty spec
 * clears it. Rates are percentages (0–100), durations ms.
 *
 * With the kernel's netem qdisc (CONFIG_NET_SCH_NETEM) everything goes through `tc … netem`.
 * Without it (this machine's kernel has no netem), `lossPercent` is done with iptables'
 * `statistic` match (random drop), `rateKbit` with the tbf qdisc, and delay/jitter/reorder/
 * duplicate are unsupported (`NetnsTopology.netemAvailable` is false and `setNetem` throws).
 */
export interface NetemSpec {
  readonly delayMs?: number;
  readonly jitterMs?: number;
  readonly lossPercent?: number;
  /** Needs `delayMs` > 0 (netem reorders by sending some packets without the delay). */
  readonly reorderPercent?: number;
  readonly duplicatePercent?: number;
  /** Bandwidth cap in kbit/s (tbf; queueing adds latency under load). */
  readonly rateKbit?: number;
}

/** True when the spec needs the netem qdisc (delay, jitter, reorder, duplicate). */
export function needsNetemQdisc(spec: NetemSpec): boolean {
  return (
    (spec.delayMs ?? 0) > 0 ||
    (spec.jitterMs ?? 0) > 0 ||
    (spec.reorderPercent ?? 0) > 0 ||
    (spec.duplicatePercent ?? 0) > 0
  );
}

/** Options of `NetnsTopology.create`. */
export interface NetnsTopologyOptions {
  /** Node ids (1–4 characters of [a-z0-9] each), e.g. `['n1','n2','n3']`. */
  readonly nodeIds: readonly NodeId[];
  /** Extra client addresses beyond `c0` (the bridge address). Default 4. */
  readonly clientCount?: number;
  readonly stateDir?: string;
}

/**
 * Contents of a run's state file. `startTicks`/`bootId` (run-owner.ts) may be absent in files of
 * older harness versions; then only the pid is checked (pid reuse then keeps, never removes).
 */
export interface RunStateFile {
  readonly prefix: string;
  readonly pid: number;
  readonly startTicks?: number | null;
  readonly bootId?: string | null;
  /** null until the run holds its subnet lock. */
  readonly subnetIndex: number | null;
  readonly createdAtIso: string;
}

/** Prefixes of runs this process created and has not finished destroying (never cleaned up). */
const liveInProcess = new Set<string>();

/** Builds the netem argument list for `tc qdisc replace … netem`. Pure; exported for tests. */
export function netemArgs(spec: NetemSpec): string[] {
  const args: string[] = [];
  const delayMs = spec.delayMs ?? 0;
  if (delayMs > 0 || (spec.reorderPercent ?? 0) > 0) {
    args.push('delay', `${Math.max(delayMs, 1)}ms`);
    if ((spec.jitterMs ?? 0) > 0) args.push(`${spec.jitterMs}ms`, 'distribution', 'normal');
  }
  if ((spec.lossPercent ?? 0) > 0) args.push('loss', `${spec.lossPercent}%`);
  if ((spec.reorderPercent ?? 0) > 0) args.push('reorder', `${spec.reorderPercent}%`, '50%');
  if ((spec.duplicatePercent ?? 0) > 0) args.push('duplicate', `${spec.duplicatePercent}%`);
  if ((spec.rateKbit ?? 0) > 0) args.push('rate', `${spec.rateKbit}kbit`);
  return args;
}

/**
 * A run's namespaces, veths, bridge and addresses. Make with `create`, end with `destroy` (or
 * `destroySync` from an exit handler). Throws `CommandError` when a system command fails.
 */
export class NetnsTopology {
  readonly prefix: string;
  readonly subnetIndex: number;
  readonly bridge: string;
  /** The bridge's address (client `c0`, the default source of root-namespace traffic). */
  readonly bridgeAddress: string;
  readonly nodes: ReadonlyMap<NodeId, NetnsNode>;
  /** `c0` (bridge address) then `c1`… (extra addresses). */
  readonly clients: readonly NetnsClient[];
  readonly #stateDir: string;
  #destroyed = false;
  #netemAvailable = false;

  /** True when the kernel has the netem qdisc (probed once at create). */
  get netemAvailable(): boolean {
    return this.#netemAvailable;
  }

  private constructor(
    prefix: string,
    subnetIndex: number,
    nodeIds: readonly NodeId[],
    clientCount: number,
    stateDir: string,
  ) {
    this.prefix = prefix;
    this.subnetIndex = subnetIndex;
    this.bridge = `${prefix}-br`;
    this.bridgeAddress = `10.77.${subnetIndex}.1`;
    this.#stateDir = stateDir;
    const nodes = new Map<NodeId, NetnsNode>();
    nodeIds.forEach((id, i) => {
      nodes.set(id, {
        id,
        namespace: `${prefix}-${id}`,
        hostVeth: `${prefix}-${id}`,
        address: `10.77.${subnetIndex}.${11 + i}`,
      });
    });
    this.nodes = nodes;
    const clients: NetnsClient[] = [{ id: 'c0', address: this.bridgeAddress }];
    for (let j = 1; j <= clientCount; j++)
      clients.push({ id: `c${j}`, address: `10.77.${subnetIndex}.${20 + j}` });
    this.clients = clients;
  }

  /**
   * Allocates a subnet and prefix, writes the state file, then builds bridge, namespaces and veths.
   * On failure it tears down what it made and rethrows.
   */
  static async create(options: NetnsTopologyOptions): Promise<NetnsTopology> {
    assert.ok(options.nodeIds.length >= 1 && options.nodeIds.length <= 9, 'nodeIds: 1..9 nodes');
    for (const id of options.nodeIds)
      assert.match(id, /^[a-z0-9]{1,4}$/, `node id ${id}: 1-4 chars [a-z0-9]`);
    const clientCount = options.clientCount ?? 4;
    assert.ok(clientCount >= 0 && clientCount <= 20, 'clientCount: 0..20');
    const stateDir = options.stateDir ?? defaultStateDir;
    mkdirSync(stateDir, { recursive: true });
    const prefix = claimPrefix(stateDir);
    let subnetIndex: number;
    try {
      subnetIndex = await allocateSubnet(stateDir, prefix);
    } catch (error) {
      releaseState(stateDir, prefix, null);
      throw error;
    }
    const topology = new NetnsTopology(prefix, subnetIndex, options.nodeIds, clientCount, stateDir);
    try {
      await topology.#build();
    } catch (error) {
      await topology.destroy();
      throw error;
    }
    return topology;
  }

  /** The node's entry. Throws when `id` is unknown. */
  node(id: NodeId): NetnsNode {
    const node = this.nodes.get(id);
    if (node === undefined) throw new Error(`unknown node ${id}`);
    return node;
  }

  /** `ip netns exec <ns> <command…>` as an argv (file `ip`). */
  execArgv(id: NodeId, command: readonly string[]): string[] {
    return ['netns', 'exec', this.node(id).namespace, ...command];
  }

  async #build(): Promise<void> {
    await run('ip', ['link', 'add', this.bridge, 'type', 'bridge']);
    await run('ip', ['addr', 'add', `${this.bridgeAddress}/24`, 'dev', this.bridge]);
    for (const client of this.clients.slice(1)) {
      await run('ip', ['addr', 'add', `${client.address}/32`, 'dev', this.bridge]);
    }
    await run('ip', ['link', 'set', this.bridge, 'up']);
    for (const node of this.nodes.values()) {
      await run('ip', ['netns', 'add', node.namespace]);
      await run('ip', [
        'link',
        'add',
        node.hostVeth,
        'type',
        'veth',
        'peer',
        'name',
        'eth0',
        'netns',
        node.namespace,
      ]);
      await run('ip', ['link', 'set', node.hostVeth, 'master', this.bridge, 'up']);
      const inNs = (args: string[]): Promise<string> =>
        run('ip', ['netns', 'exec', node.namespace, ...args]);
      await inNs(['ip', 'link', 'set', 'lo', 'up']);
      await inNs(['ip', 'addr', 'add', `${node.address}/24`, 'dev', 'eth0']);
      await inNs(['ip', 'link', 'set', 'eth0', 'up']);
      // Fault chains: INPUT/OUTPUT jump to them; healing flushes them.
      for (const [chain, hook] of [
        ['TENURE-IN', 'INPUT'],
        ['TENURE-OUT', 'OUTPUT'],
      ] as const) {
        await inNs(['iptables', '-w', '-N', chain]);
        await inNs(['iptables', '-w', '-A', hook, '-j', chain]);
      }
      await inNs(['iptables', '-w', '-N', 'TENURE-LOSS']);
      await inNs(['iptables', '-w', '-A', 'OUTPUT', '-o', 'eth0', '-j', 'TENURE-LOSS']);
    }
    const first = [...this.nodes.values()][0]!;
    this.#netemAvailable = await tryRun('ip', [
      'netns',
      'exec',
      first.namespace,
      'tc',
      'qdisc',
      'add',
      'dev',
      'eth0',
      'root',
      'netem',
      'delay',
      '1ms',
    ]);
    if (this.#netemAvailable)
      await tryRun('ip', [
        'netns',
        'exec',
        first.namespace,
        'tc',
        'qdisc',
        'del',
        'dev',
        'eth0',
        'root',
      ]);
  }

  /** Replaces the node's drop rules (empty lists heal it). */
  async setDropRules(id: NodeId, rules: DropRules): Promise<void> {
    const ns = this.node(id).namespace;
    const ipt = (args: string[]): Promise<string> =>
      run('ip', ['netns', 'exec', ns, 'iptables', '-w', ...args]);
    await ipt(['-F', 'TENURE-IN']);
    await ipt(['-F', 'TENURE-OUT']);
    for (const address of rules.dropFrom)
      await ipt(['-A', 'TENURE-IN', '-s', address, '-j', 'DROP']);
    for (const address of rules.dropTo)
      await ipt(['-A', 'TENURE-OUT', '-d', address, '-j', 'DROP']);
  }

  /** The node's current drop rules as `iptables -S` lines (for logs and tests). */
  async listDropRules(id: NodeId): Promise<string[]> {
    const ns = this.node(id).namespace;
    const out = await run('ip', ['netns', 'exec', ns, 'iptables', '-w', '-S']);
    return out.split('\n').filter((line) => line.startsWith('-A TENURE-'));
  }

  /**
   * Sets (or with null/empty clears) link degradation on the node's egress. Throws when the spec
   * needs netem and the kernel has none (see `NetemSpec`), or a command fails.
   */
  async setNetem(id: NodeId, spec: NetemSpec | null): Promise<void> {
    const ns = this.node(id).namespace;
    const inNs = (args: string[]): Promise<string> => run('ip', ['netns', 'exec', ns, ...args]);
    await tryRun('ip', ['netns', 'exec', ns, 'tc', 'qdisc', 'del', 'dev', 'eth0', 'root']);
    await inNs(['iptables', '-w', '-F', 'TENURE-LOSS']);
    if (spec === null) return;
    if (this.#netemAvailable) {
      const args = netemArgs(spec);
      if (args.length > 0)
        await inNs(['tc', 'qdisc', 'replace', 'dev', 'eth0', 'root', 'netem', ...args]);
      return;
    }
    if (needsNetemQdisc(spec))
      throw new Error(
        'this kernel has no netem qdisc (CONFIG_NET_SCH_NETEM): only lossPercent and rateKbit work',
      );
    const lossPercent = spec.lossPercent ?? 0;
    if (lossPercent > 0) {
      const probability = (lossPercent / 100).toFixed(4);
      await inNs([
        'iptables',
        '-w',
        '-A',
        'TENURE-LOSS',
        '-m',
        'statistic',
        '--mode',
        'random',
        '--probability',
        probability,
        '-j',
        'DROP',
      ]);
    }
    const rateKbit = spec.rateKbit ?? 0;
    if (rateKbit > 0) {
      await inNs([
        'tc',
        'qdisc',
        'replace',
        'dev',
        'eth0',
        'root',
        'tbf',
        'rate',
        `${rateKbit}kbit`,
        'burst',
        '16kb',
        'latency',
        '400ms',
      ]);
    }
  }

  /** Pids of every process inside the node's namespace. */
  async pids(id: NodeId): Promise<number[]> {
    const out = await run('ip', ['netns', 'pids', this.node(id).namespace]);
    return parsePids(out);
  }

  /**
   * Removes everything this run made: SIGKILLs processes left in its namespaces, deletes the
   * namespaces (which deletes their veth ends), the bridge, then — only when nothing named
   * `<prefix>-*` is left — the subnet lock and state file (otherwise they stay, and
   * `cleanupLeftovers` finishes the job once this process is dead). Idempotent.
   */
  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    this.#destroyed = true;
    for (const node of this.nodes.values()) {
      const out = await run('ip', ['netns', 'pids', node.namespace]).catch(() => '');
      for (const pid of parsePids(out)) killQuiet(pid);
      await tryRun('ip', ['netns', 'del', node.namespace]);
      await tryRun('ip', ['link', 'del', node.hostVeth]);
    }
    await tryRun('ip', ['link', 'del', this.bridge]);
    this.#releaseIfGone();
  }

  /** `destroy` for exit handlers: synchronous and never throws. */
  destroySync(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    destroyPrefixSync(
      this.prefix,
      [...this.nodes.values()].map((n) => n.namespace),
    );
    this.#releaseIfGone();
  }

  #releaseIfGone(): void {
    const left = [...listNamespacesSync(), ...listLinksSync()].filter((name) =>
      name.startsWith(`${this.prefix}-`),
    );
    if (left.length === 0) releaseState(this.#stateDir, this.prefix, this.subnetIndex);
    else liveInProcess.delete(this.prefix); // keep the state file: cleanup removes the rest after we exit
  }
}

function parsePids(out: string): number[] {
  return out
    .split(/\s+/)
    .filter((s) => /^\d+$/.test(s))
    .map(Number);
}

function killQuiet(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Kills processes in, and deletes, the given namespaces and every link named `<prefix>-*`. */
function destroyPrefixSync(prefix: string, namespaces: readonly string[]): void {
  for (const ns of namespaces) {
    for (const pid of parsePids(runSyncQuiet('ip', ['netns', 'pids', ns]))) killQuiet(pid);
    runSyncQuiet('ip', ['netns', 'del', ns]);
  }
  for (const link of listLinksSync().filter((name) => name.startsWith(`${prefix}-`))) {
    runSyncQuiet('ip', ['link', 'del', link]);
  }
}

function listLinksSync(): string[] {
  const out = runSyncQuiet('ip', ['-o', 'link', 'show']);
  // Lines look like `12: tn1a2b3c-n1@if3: <...>`.
  return out
    .split('\n')
    .map((line) => /^\d+:\s+([^:@\s]+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
}

function listNamespacesSync(): string[] {
  return runSyncQuiet('ip', ['netns', 'list'])
    .split('\n')
    .map((line) => line.split(/\s+/)[0] ?? '')
    .filter((name) => name.length > 0);
}

/**
 * Picks a fresh random prefix and creates its state file exclusively (O_EXCL), before any lock or
 * network object exists, and registers it as live in this process.
 */
function claimPrefix(stateDir: string): string {
  const owner = currentOwner();
  for (let attempt = 0; attempt < 100; attempt++) {
    const prefix = `${prefixStem}${randomBytes(3).toString('hex')}`;
    const inUse = [...listNamespacesSync(), ...listLinksSync()].some((name) =>
      name.startsWith(`${prefix}-`),
    );
    if (inUse) continue;
    const state: RunStateFile = {
      prefix,
      pid: owner.pid,
      startTicks: owner.startTicks,
      bootId: owner.bootId,
      subnetIndex: null,
      createdAtIso: new Date().toISOString(),
    };
    if (tryCreateFile(statePath(stateDir, prefix), JSON.stringify(state))) {
      liveInProcess.add(prefix);
      return prefix;
    }
  }
  throw new Error('could not claim a free chaos run prefix');
}

function statePath(stateDir: string, prefix: string): string {
  return join(stateDir, `${prefix}.json`);
}

/**
 * Takes the lowest free subnet index (lock file `subnet-K` made with O_EXCL, holding the prefix)
 * and records it in the run's state file (atomic rename). A held lock is never taken over here,
 * even when its owner looks dead: only `cleanupLeftovers` frees locks, and only of dead owners.
 */
async function allocateSubnet(stateDir: string, prefix: string): Promise<number> {
  const routes = await run('ip', ['-4', 'route', 'show']);
  for (let k = subnetIndexMin; k <= subnetIndexMax; k++) {
    if (routes.includes(`10.77.${k}.0/24`)) continue;
    if (tryCreateFile(join(stateDir, `subnet-${k}`), prefix)) {
      const state = readState(stateDir, prefix);
      assert.ok(state !== null && state !== 'unreadable', `state file of ${prefix} vanished`);
      const tmp = `${statePath(stateDir, prefix)}.tmp`;
      writeFileSync(tmp, JSON.stringify({ ...state, subnetIndex: k }));
      renameSync(tmp, statePath(stateDir, prefix));
      return k;
    }
  }
  throw new Error(
    `no free chaos subnet in 10.77.${subnetIndexMin}-${subnetIndexMax}.0/24 (run --cleanup)`,
  );
}

/** A subnet lock whose owner has no state file is only an orphan after this long. */
const lockGraceMs = 30_000;

function lockAgeMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function tryCreateFile(path: string, content: string): boolean {
  try {
    const fd = openSync(path, 'wx');
    writeSync(fd, content);
    closeSync(fd);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** The run's state file: null when absent, 'unreadable' when present but not parseable. */
function readState(stateDir: string, prefix: string): RunStateFile | null | 'unreadable' {
  if (!prefixPattern.test(prefix)) return null;
  let text: string;
  try {
    text = readFileSync(statePath(stateDir, prefix), 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : 'unreadable';
  }
  try {
    const state = JSON.parse(text) as RunStateFile;
    return state.prefix === prefix && Number.isSafeInteger(state.pid) ? state : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/**
 * Removes `path` only if it still holds `expected`: renames it aside first (atomic, so a lock
 * re-created by someone else in between is never the one deleted), checks, and puts a
 * non-matching file back.
 */
function removeIfContent(path: string, expected: string): void {
  const aside = `${path}.rm-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // gone already
  }
  if (readFileSafe(aside).trim() === expected) {
    rmSync(aside, { force: true });
    return;
  }
  try {
    linkSync(aside, path); // fails if a new lock appeared meanwhile; that one is kept
  } catch {
    // keep the newer lock
  }
  try {
    unlinkSync(aside);
  } catch {
    // gone
  }
}

function releaseState(stateDir: string, prefix: string, subnetIndex: number | null): void {
  // Lock first, then state: a crash in between leaves a state file whose dead owner cleanup
  // recognises, never a lock nobody can attribute.
  if (subnetIndex !== null) removeIfContent(join(stateDir, `subnet-${subnetIndex}`), prefix);
  rmSync(statePath(stateDir, prefix), { force: true });
  liveInProcess.delete(prefix);
}

/** Why `cleanupLeftovers` removes or keeps one run prefix. */
export type LeftoverDecision =
  'remove' | 'keep-own-live-run' | 'keep-owner-alive' | 'keep-owner-unknown' | 'keep-unowned';

/**
 * Decides one prefix (pure; exported for tests). `state` is the run's state file read AFTER its
 * resources were listed (a run writes it before making resources and deletes it after teardown,
 * so a listed resource of a live run always has one). Removes only: a run whose recorded owner is
 * verifiably dead, or, with `unowned`, resources no state file accounts for. Never a run this
 * process owns.
 */
export function decideLeftover(input: {
  readonly ownLiveRun: boolean;
  readonly state: RunStateFile | null | 'unreadable';
  readonly unowned: boolean;
  readonly liveness: (owner: RunOwner) => OwnerLiveness;
}): LeftoverDecision {
  if (input.ownLiveRun) return 'keep-own-live-run';
  if (input.state === 'unreadable') return 'keep-owner-unknown';
  if (input.state === null) return input.unowned ? 'remove' : 'keep-unowned';
  const liveness = input.liveness({
    pid: input.state.pid,
    startTicks: input.state.startTicks ?? null,
    bootId: input.state.bootId ?? null,
  });
  if (liveness === 'dead') return 'remove';
  return liveness === 'alive' ? 'keep-owner-alive' : 'keep-owner-unknown';
}

/** What `cleanupLeftovers` removed and what it left alone (with why). */
export interface CleanupReport {
  readonly prefixes: readonly string[];
  readonly namespaces: readonly string[];
  readonly links: readonly string[];
  readonly kept: readonly { readonly prefix: string; readonly reason: LeftoverDecision }[];
}

/**
 * Removes leftovers of chaos runs whose owner process is verifiably dead (run-owner.ts: pid, start
 * time and boot id, so pid reuse neither spares a dead run nor dooms a live one): processes in
 * their namespaces, namespaces, links, subnet locks, state files. With `unowned: true` it also
 * removes `tn<6 hex>-*` namespaces and links that no state file in `stateDir` accounts for (an
 * operator's `--cleanup --all`; never used by tests, since a sibling run with another state dir
 * looks exactly like that). Never touches a run this process owns or a run whose owner is alive
 * or unknown. Names that do not match `tn<6 hex>-` are never touched. Synchronous; never throws.
 */
export function cleanupLeftovers(
  options: { readonly unowned?: boolean; readonly stateDir?: string } = {},
): CleanupReport {
  const stateDir = options.stateDir ?? defaultStateDir;
  const prefixOf = (name: string): string | null => {
    const candidate = name.split('-')[0] ?? '';
    return prefixPattern.test(candidate) && name.startsWith(`${candidate}-`) ? candidate : null;
  };
  // Resources first, state files second: a live run's state file predates its resources.
  const allNamespaces = listNamespacesSync().filter((ns) => prefixOf(ns) !== null);
  const allLinks = listLinksSync().filter((link) => prefixOf(link) !== null);
  let stateFiles: string[] = [];
  try {
    stateFiles = readdirSync(stateDir).filter((f) => f.endsWith('.json'));
  } catch {
    stateFiles = [];
  }
  const candidates = new Set<string>();
  for (const name of [...allNamespaces, ...allLinks]) candidates.add(prefixOf(name)!);
  for (const file of stateFiles) {
    const p = file.slice(0, -'.json'.length);
    if (prefixPattern.test(p)) candidates.add(p);
  }
  const removed: string[] = [];
  const released = new Set<string>();
  const kept: { prefix: string; reason: LeftoverDecision }[] = [];
  for (const prefix of candidates) {
    const state = readState(stateDir, prefix);
    const decision = decideLeftover({
      ownLiveRun: liveInProcess.has(prefix),
      state,
      unowned: options.unowned === true,
      liveness: ownerLiveness,
    });
    if (decision !== 'remove') {
      kept.push({ prefix, reason: decision });
      continue;
    }
    removed.push(prefix);
    destroyPrefixSync(
      prefix,
      allNamespaces.filter((ns) => ns.startsWith(`${prefix}-`)),
    );
    const stillThere = [...listNamespacesSync(), ...listLinksSync()].some((name) =>
      name.startsWith(`${prefix}-`),
    );
    if (!stillThere && state !== null && state !== 'unreadable') {
      releaseState(stateDir, prefix, state.subnetIndex ?? null);
      released.add(prefix);
    }
  }
  // Subnet locks of removed runs (their subnet may be recorded nowhere else) and orphans whose
  // owner never had or no longer has a state file.
  try {
    for (const file of readdirSync(stateDir).filter((f) => /^subnet-\d+$/.test(f))) {
      const path = join(stateDir, file);
      const owner = readFileSafe(path).trim();
      const orphan =
        readState(stateDir, owner) === null &&
        !liveInProcess.has(owner) &&
        lockAgeMs(path) > lockGraceMs;
      if (released.has(owner) || orphan) removeIfContent(path, owner);
    }
  } catch {
    // no state dir
  }
  const ofRemoved = (name: string): boolean => removed.includes(prefixOf(name) ?? '');
  return {
    prefixes: removed,
    namespaces: allNamespaces.filter(ofRemoved),
    links: allLinks.filter(ofRemoved),
    kept,
  };
}

/**
 * The harness's control plane over one cluster: what faults may do to node processes and the
 * network. Two implementations share the runner: `NetnsCluster` (Linux namespaces, exercised here)
 * and `ComposeCluster` (docker compose; structure only, no engine on this machine). A backend that
 * cannot do something says so in `capabilities`, and the call throws `UnsupportedFaultError`.
 */
import type { ClientAddress, NodeEndpoint, NodeId, NodeProcessState } from '../types.js';
import type { NetemSpec } from './netns.js';

/** Thrown when a backend cannot perform a fault (see `capabilities`). */
export class UnsupportedFaultError extends Error {
  constructor(backend: string, what: string) {
    super(`${backend} backend cannot ${what}`);
    this.name = 'UnsupportedFaultError';
  }
}

/** A directed block: packets from `from` do not reach `to` (ids of nodes or clients). */
export interface LinkBlock {
  readonly from: string;
  readonly to: string;
}

/** How to (re)start a node process. */
export interface NodeStartOptions {
  /**
   * Clock rate factor for the whole process (libfaketime `x<rate>`, monotonic AND wall clock);
   * 1 or absent = real time. Only at start: a rate cannot change under a running process
   * without a jump.
   */
  readonly clockRate?: number;
  /**
   * Start with `--join <url>` (the HTTP URL of a live member) instead of `--peers`, as an operator
   * brings back a removed node with an empty data directory (docs/operations.md, "Replace a failed
   * node"). Only this start: later starts use `--peers` again (the node's data then holds the
   * membership, which wins over `--peers`).
   */
  readonly join?: string;
}

/** What a backend can do. */
export interface BackendCapabilities {
  /** Directed blocks between arbitrary nodes/clients (else only whole-node isolation). */
  readonly linkBlocks: boolean;
  /** Random loss and bandwidth caps (iptables statistic / tbf, or netem). */
  readonly netemLoss: boolean;
  /** Delay, jitter, reorder, duplicate (needs the kernel's netem qdisc). */
  readonly netemDelay: boolean;
  readonly clockRate: boolean;
  /** Runtime wall-clock steps (monotonic untouched). */
  readonly wallClockStep: boolean;
  /** Wiping a node's data directory and starting it with `--join` (membership faults). */
  readonly membership: boolean;
}

/** Control of one cluster's processes and network. Every method throws on a failed system call. */
export interface ChaosBackend {
  readonly kind: 'netns' | 'compose';
  readonly nodeIds: readonly NodeId[];
  readonly capabilities: BackendCapabilities;
  endpoints(): readonly NodeEndpoint[];
  endpoint(id: NodeId): NodeEndpoint;
  readonly clientAddresses: readonly ClientAddress[];
  nodeState(id: NodeId): NodeProcessState;
  /**
   * How many times the harness has started the node's process (0 before `up`). Counted before
   * the process is spawned, so any answer from a process started by the k-th start is read with
   * a count ≥ k. The Raft checker compares volatile state (commitIndex) only within one.
   */
  incarnation(id: NodeId): number;
  /**
   * How many times the harness has wiped the node's data directory (0 at first). A node started
   * on a wiped directory is a new Raft identity under the old id: its term and commit index start
   * from 0 again, so the checkers compare persistent state only within one generation.
   */
  dataGeneration(id: NodeId): number;
  /** Deletes a stopped node's data directory (a lost disk). Throws when the node is not stopped. */
  wipeNode(id: NodeId): Promise<void>;
  /** Builds the network and starts every node (does not wait for a leader). */
  up(): Promise<void>;
  /** Starts a stopped node from its own data dir. Throws when it is not stopped. */
  startNode(id: NodeId, options?: NodeStartOptions): Promise<void>;
  /** SIGTERM (after SIGCONT when paused); SIGKILL after a grace period; resolves once exited. */
  stopNode(id: NodeId): Promise<void>;
  /** SIGKILL; resolves once exited. No-op when stopped. */
  killNode(id: NodeId): Promise<void>;
  /** SIGSTOP. Throws unless running. */
  pauseNode(id: NodeId): Promise<void>;
  /** SIGCONT. No-op unless paused. */
  resumeNode(id: NodeId): Promise<void>;
  /** Replaces every network block by `blocks` (empty = healed). */
  setBlocks(blocks: readonly LinkBlock[]): Promise<void>;
  /** Sets or clears (null) netem on the node's egress. */
  setNetem(id: NodeId, spec: NetemSpec | null): Promise<void>;
  /** Steps the node's wall clock to real time + `offsetSeconds` (monotonic clock untouched). */
  setWallClockOffset(id: NodeId, offsetSeconds: number): Promise<void>;
  /** Path of the node's log file (stdout+stderr). */
  logPath(id: NodeId): string;
  /** Stops everything and removes the network; idempotent, never throws. */
  down(): Promise<void>;
  /** `down` for exit handlers: synchronous. */
  downSync(): void;
}

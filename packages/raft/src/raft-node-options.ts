/**
 * Options of RaftNode.open, their defaults, and the start-time checks of their relations
 * (TigerBeetle style: limits named, relations validated once).
 */
import type { Logger } from './logger.js';
import type { RaftObserver } from './observer.js';
import type { NodeId } from './core/types.js';
import type { PeerInfo } from './api.js';
import type { StateMachine } from './state-machine.js';
import type { RaftStorage } from './storage/raft-storage.js';
import type { Transport } from './transport/transport.js';
import type { PeerTlsOptions } from './transport/peer-tls.js';
import { InvalidArgumentError } from './errors.js';
import { readRequestsPendingMax } from './core/read-only.js';

/**
 * Everything RaftNode.open needs. Durations in ms; converted to ticks of `tickMs`. Defaults of the
 * optional fields: RAFT_NODE_DEFAULTS.
 */
export interface RaftNodeOptions<R> {
  /** This node's id; must appear in `peers`. */
  readonly id: NodeId;
  /** Cluster identity: checked against the data directory and in every peer handshake. */
  readonly clusterId: string;
  /**
   * Every voter of the cluster INCLUDING this node, with its Raft (`host:port`) address. Bootstraps
   * a NEW cluster only: once the data directory holds data, the membership recorded there and in
   * the log wins (a disagreeing list is logged as a warning, docs/operations.md). With `join`: this
   * node plus the members to reach while joining.
   */
  readonly peers: readonly PeerInfo[];
  /**
   * This node joins an existing cluster (docs/operations.md): it starts outside the membership and
   * learns it from the leader once a member added it as a learner. Until `admitted()` names the
   * membership that added it, no membership makes it removed (it may be replaying the log of an
   * earlier node of its id, removal included), and data whose membership does not name it yet
   * opens. Default false.
   */
  readonly join?: boolean;
  /** Raft listen address (`host:port`); default: this node's `raftAddress` in `peers`. */
  readonly listen?: string;
  /** Directory of this node's level database. Required unless `storage` is given. */
  readonly dataDir?: string;
  /** The replicated application; in-memory, rebuilt on open from the newest snapshot plus the log after it. */
  readonly stateMachine: StateMachine<R>;
  /** Ticker period. */
  readonly tickMs?: number;
  /** Leader heartbeat interval; the timing rule: raftTimingTicks. */
  readonly heartbeatMs?: number;
  /** Base election timeout (each drawn from [base, 2×base)). */
  readonly electionTimeoutMs?: number;
  /**
   * Where the node logs (logger.ts; a pino logger fits); default: nowhere. The node uses children
   * `{ component: 'raft' | 'raft-storage' | 'raft-transport', nodeId }`.
   */
  readonly logger?: Logger;
  /** Bounds on one AppendEntries. Defaults 512 entries, 1 MiB. */
  readonly entriesPerMessageMax?: number;
  readonly bytesPerMessageMax?: number;
  /** Pipelined AppendEntries per follower. Default 64. */
  readonly inflightMessagesMax?: number;
  /** Pre-vote (dissertation §9.6) and check-quorum (§6.2). Default true. */
  readonly preVote?: boolean;
  readonly checkQuorum?: boolean;
  /** Proposals awaiting commit before propose() rejects with ResourceExhaustedError. Default 65536. */
  readonly proposalsPendingMax?: number;
  /** Read barriers in flight before readBarrier() rejects with ResourceExhaustedError. Default and cap: the core's 65536. */
  readonly readsPendingMax?: number;
  /** Deadline for propose/readBarrier when the caller gives none. Default 30 000 ms. */
  readonly requestTimeoutMsDefault?: number;
  /**
   * Take a state-machine snapshot and compact the log every this many applied entries (Raft §7).
   * Default 10 000. Each snapshot is one StateMachine.snapshot() call plus one fsynced write.
   */
  readonly snapshotEntries?: number;
  /**
   * Entries kept in the log below each snapshot, so a follower only slightly behind gets
   * AppendEntries instead of the whole snapshot. Default 1 000; any integer ≥ 0
   * (0 = drop every entry the snapshot covers). Bounds the log at snapshotEntries + this.
   */
  readonly snapshotKeepEntries?: number;
  /**
   * Readiness lag: status().caughtUpIndex is the commit index this node heard from a leader at least
   * this long ago (commit-heard.ts, docs/architecture.md, Readiness). Default 1 000 ms; 0 = the
   * newest heard (a follower is then "behind" for the moment between hearing a commit and applying it).
   */
  readonly readyLagMs?: number;
  /** Seed of the election-jitter generator; default from crypto (logged). */
  readonly randomSeed?: number;
  /** Injected storage (tests); default LevelRaftStorage in `dataDir`. Closed by stop(). */
  readonly storage?: RaftStorage;
  /** Injected transport (tests); default TcpTransport on `listen`. Closed by stop(). */
  readonly transport?: Transport;
  /** Mutual TLS on the default TcpTransport's links (transport/peer-tls.ts); absent: plain TCP. */
  readonly peerTls?: PeerTlsOptions;
  /**
   * Called once when storage (or the state machine) fails inside the Ready loop (the node has
   * already stopped; Raft cannot go on without its disk). Default: rethrow asynchronously, crashing the process so a supervisor restarts it.
   */
  readonly onFatalError?: (err: unknown) => void;
  /** Timings for metrics (observer.ts): persist (fsync) durations and snapshots. Default: none. */
  readonly observer?: RaftObserver;
}

/** Options after defaults, with durations converted to ticks. */
export interface ResolvedOptions {
  readonly tickMs: number;
  readonly heartbeatTicks: number;
  readonly electionTimeoutTicks: number;
  readonly electionTimeoutMs: number;
  readonly entriesPerMessageMax: number;
  readonly bytesPerMessageMax: number;
  readonly inflightMessagesMax: number;
  readonly preVote: boolean;
  readonly checkQuorum: boolean;
  readonly proposalsPendingMax: number;
  readonly readsPendingMax: number;
  readonly requestTimeoutMsDefault: number;
  readonly snapshotEntries: number;
  readonly snapshotKeepEntries: number;
  readonly readyLagMs: number;
  readonly listen: string;
  readonly voters: readonly NodeId[];
}

/**
 * Defaults of the optional RaftNodeOptions fields: the one place they are written (the server's
 * settings table reads the timing and snapshot ones from here).
 */
export const RAFT_NODE_DEFAULTS = {
  tickMs: 10,
  heartbeatMs: 100,
  electionTimeoutMs: 1000,
  entriesPerMessageMax: 512,
  bytesPerMessageMax: 1024 * 1024,
  inflightMessagesMax: 64,
  proposalsPendingMax: 65536,
  readsPendingMax: 65536,
  requestTimeoutMsDefault: 30_000,
  snapshotEntries: 10_000,
  snapshotKeepEntries: 1_000,
  readyLagMs: 1_000,
} as const;

/**
 * The election timeout must span at least this many heartbeats, so a few delayed or lost heartbeats
 * do not start an election (Raft §5.6: broadcastTime ≪ electionTimeout).
 */
export const ELECTION_TIMEOUT_HEARTBEATS_MIN = 5;

/** Raft timing in milliseconds, as configured. */
export interface RaftTimingMs {
  readonly tickMs: number;
  readonly heartbeatMs: number;
  readonly electionTimeoutMs: number;
}

/** Raft timing in ticks, as the core runs it. */
export interface RaftTimingTicks {
  readonly heartbeatTicks: number;
  readonly electionTimeoutTicks: number;
}

function positiveInt(field: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new InvalidArgumentError(field, `must be a positive integer, got ${value}`);
  return value;
}

function nonNegativeInt(field: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new InvalidArgumentError(field, `must be a non-negative integer, got ${value}`);
  return value;
}

/**
 * The timing rule, the only one (the server checks its settings with it at start, RaftNode.open
 * again): every value a positive integer, heartbeatMs ≥ tickMs, and electionTimeoutMs ≥
 * ELECTION_TIMEOUT_HEARTBEATS_MIN × heartbeatMs (Raft §5.6). Returns the durations in whole ticks
 * (then 1 ≤ heartbeatTicks < electionTimeoutTicks, which the core asserts). Throws
 * InvalidArgumentError naming `tickMs` or `heartbeatMs`.
 */
export function raftTimingTicks(t: RaftTimingMs): RaftTimingTicks {
  const tickMs = positiveInt('tickMs', t.tickMs);
  const heartbeatMs = positiveInt('heartbeatMs', t.heartbeatMs);
  const electionTimeoutMs = positiveInt('electionTimeoutMs', t.electionTimeoutMs);
  if (heartbeatMs < tickMs)
    throw new InvalidArgumentError('heartbeatMs', `${heartbeatMs} must be ≥ tickMs (${tickMs})`);
  const heartbeatMsMax = Math.floor(electionTimeoutMs / ELECTION_TIMEOUT_HEARTBEATS_MIN);
  if (heartbeatMs > heartbeatMsMax)
    throw new InvalidArgumentError(
      'heartbeatMs',
      `${heartbeatMs} must be ≤ electionTimeoutMs / ${ELECTION_TIMEOUT_HEARTBEATS_MIN} (${heartbeatMsMax})`,
    );
  const heartbeatTicks = Math.max(1, Math.round(heartbeatMs / tickMs));
  const electionTimeoutTicks = Math.round(electionTimeoutMs / tickMs);
  return { heartbeatTicks, electionTimeoutTicks };
}

/**
 * Applies defaults (RAFT_NODE_DEFAULTS) and checks relations. Throws InvalidArgumentError naming
 * the field: the timing rule of raftTimingTicks, id among peers, unique peer ids.
 */
export function resolveOptions<R>(o: RaftNodeOptions<R>): ResolvedOptions {
  const d = RAFT_NODE_DEFAULTS;
  const tickMs = o.tickMs ?? d.tickMs;
  const electionTimeoutMs = o.electionTimeoutMs ?? d.electionTimeoutMs;
  const { heartbeatTicks, electionTimeoutTicks } = raftTimingTicks({
    tickMs,
    heartbeatMs: o.heartbeatMs ?? d.heartbeatMs,
    electionTimeoutMs,
  });
  if (o.clusterId.length === 0) throw new InvalidArgumentError('clusterId', 'must not be empty');
  const voters = o.peers.map((p) => p.id);
  if (new Set(voters).size !== voters.length)
    throw new InvalidArgumentError('peers', 'duplicate node id');
  const self = o.peers.find((p) => p.id === o.id);
  if (self === undefined)
    throw new InvalidArgumentError('peers', `must include this node "${o.id}"`);
  if (o.storage === undefined && o.dataDir === undefined)
    throw new InvalidArgumentError('dataDir', 'required unless storage is given');
  return {
    tickMs,
    heartbeatTicks,
    electionTimeoutTicks,
    electionTimeoutMs,
    entriesPerMessageMax: positiveInt(
      'entriesPerMessageMax',
      o.entriesPerMessageMax ?? d.entriesPerMessageMax,
    ),
    bytesPerMessageMax: positiveInt(
      'bytesPerMessageMax',
      o.bytesPerMessageMax ?? d.bytesPerMessageMax,
    ),
    inflightMessagesMax: positiveInt(
      'inflightMessagesMax',
      o.inflightMessagesMax ?? d.inflightMessagesMax,
    ),
    preVote: o.preVote ?? true,
    checkQuorum: o.checkQuorum ?? true,
    proposalsPendingMax: positiveInt(
      'proposalsPendingMax',
      o.proposalsPendingMax ?? d.proposalsPendingMax,
    ),
    readsPendingMax: Math.min(
      positiveInt('readsPendingMax', o.readsPendingMax ?? d.readsPendingMax),
      readRequestsPendingMax,
    ),
    requestTimeoutMsDefault: positiveInt(
      'requestTimeoutMsDefault',
      o.requestTimeoutMsDefault ?? d.requestTimeoutMsDefault,
    ),
    snapshotEntries: positiveInt('snapshotEntries', o.snapshotEntries ?? d.snapshotEntries),
    snapshotKeepEntries: nonNegativeInt(
      'snapshotKeepEntries',
      o.snapshotKeepEntries ?? d.snapshotKeepEntries,
    ),
    readyLagMs: nonNegativeInt('readyLagMs', o.readyLagMs ?? d.readyLagMs),
    listen: o.listen ?? self.raftAddress,
    voters,
  };
}

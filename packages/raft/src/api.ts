/**
 * Public API of a running Raft node, as the server uses it (implemented by raft-node.ts).
 */
import type { MemberAddress } from './core/membership.js';
import type { LogIndex, NodeId, Role, Term } from './core/types.js';

/**
 * Peer address book entry: Raft traffic goes to `raftAddress` (`host:port`); `httpAddress` is where
 * the node serves clients (carried in the membership so every node can list it; optional).
 */
export interface PeerInfo {
  readonly id: NodeId;
  readonly raftAddress: string;
  readonly httpAddress?: string;
}

/**
 * One member of the membership in effect on this node (voters, then learners). `role` is this
 * node's view: `learner` for a non-voting member, `unknown` for a voter this node knows nothing
 * about right now. Addresses come from the membership's address book (or the command line).
 */
export interface MemberStatus {
  readonly id: NodeId;
  readonly role: Role | 'learner' | 'unknown';
  readonly raftAddress?: string;
  readonly httpAddress?: string;
  /**
   * True when this node saw the member hold data: as leader, the member acknowledged entries; as a
   * follower, it followed the member as leader once something was committed. Durable.
   */
  readonly hadData?: boolean;
  /** Leader only: highest index known replicated on that member. */
  readonly matchIndex?: LogIndex;
  /** Leader only: ms since the leader last heard from that member. */
  readonly lastContactMs?: number;
}

export interface RaftStatus {
  readonly id: NodeId;
  readonly role: Role;
  readonly term: Term;
  readonly leaderId: NodeId | null;
  /**
   * The commit index this node has handed to its disk (written with its batch, or a lone commit
   * index within the storage's flush delay): never below an acknowledged write's index, never down
   * while the node runs (docs/api.md). Raft's in-memory commitIndex may be a little ahead.
   */
  readonly commitIndex: LogIndex;
  /**
   * What this node knows the cluster has committed: a leader its own commit index, a follower the
   * highest commit index its current leader told it in this term (may exceed what its log holds while
   * it catches up).
   */
  readonly leaderCommitIndex: LogIndex;
  /**
   * The commit index this node must have applied to count as caught up: the highest commit index
   * it heard from a leader at least `readyLagMs` ago (RaftNodeOptions), or the first one heard while
   * none is that old; 0 before any leader was heard (commit-heard.ts). `/readyz` is ready once `appliedIndex`
   * reaches it (docs/architecture.md, Readiness).
   */
  readonly caughtUpIndex: LogIndex;
  /**
   * Ms since this node last heard from the leader it knows (an AppendEntries or InstallSnapshot of
   * that leader's term): 0 on the leader, null without a leader or before hearing it. `/readyz`
   * refuses a follower whose leader is older than an election timeout (docs/operations.md).
   */
  readonly leaderHeardAgoMs: number | null;
  readonly appliedIndex: LogIndex;
  readonly lastLogIndex: LogIndex;
  /** Last log index covered by the newest snapshot in this node's storage (taken, installed or recovered at start); 0 without one. */
  readonly snapshotIndex: LogIndex;
  /** Size of that snapshot's state-machine bytes; 0 without one. */
  readonly snapshotBytes: number;
  /**
   * Leader: current cluster time; follower of a known leader: the latest reading of the newest leader
   * timeline it heard plus local elapsed time since (an estimate, docs/concepts.md; may go down when a
   * newer term is learned); no leader known: frozen (cluster-time-estimate.ts).
   * Display and stale reads only: it never feeds back into the log.
   */
  readonly clusterTimeMs: number;
  readonly members: readonly MemberStatus[];
  /** Index of the `config` entry that set the membership in effect (0: the bootstrap one). */
  readonly configIndex: LogIndex;
  /** True once that entry is committed (always true for the bootstrap membership). */
  readonly configCommitted: boolean;
}

/** The part of RaftStatus a request needs to route itself (RaftNodeApi.leadership). */
export type Leadership = Pick<RaftStatus, 'role' | 'term' | 'leaderId' | 'clusterTimeMs'>;

/**
 * A membership change as callers ask for it (docs/operations.md): add `id` as a learner at
 * `address`, promote the learner `id`, or remove the member `id`.
 */
export type MembershipRequest =
  | { readonly type: 'addLearner'; readonly id: NodeId; readonly address: PeerInfo }
  | { readonly type: 'promote' | 'remove'; readonly id: NodeId };

/** Options for one proposal or read. */
export interface RequestOptions {
  /** Give up (reject with TimeoutError) after this long; the outcome of a proposal is then unknown. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** A committed proposal's result: the state machine's return value and where it landed. */
export interface Applied<R> {
  readonly index: LogIndex;
  readonly clusterTimeMs: number;
  readonly result: R;
}

/**
 * A running node. Errors: proposals and reads reject with `NotLeaderError` (carries `leaderHint`)
 * or `TimeoutError` (outcome unknown); see errors.ts.
 */
export interface RaftNodeApi<R> {
  readonly id: NodeId;
  /**
   * Leader only: replicate `data`, resolve once applied locally with the state machine's result.
   * Pending when the node stops: rejects with TimeoutError (the entry may still commit elsewhere).
   */
  propose(data: Uint8Array, opts?: RequestOptions): Promise<Applied<R>>;
  /** Linearizable read barrier (ReadIndex, §6.4): resolves once this node has applied ≥ the read index. */
  readBarrier(opts?: RequestOptions): Promise<LogIndex>;
  /** Leader only: hand leadership to `to` (or the most up-to-date follower); resolves when done. */
  transferLeadership(to?: NodeId, opts?: RequestOptions): Promise<void>;
  status(): RaftStatus;
  /**
   * `role`, `term`, `leaderId` and `clusterTimeMs` as `status()` reports them, without building the
   * member list: O(1), for the checks every request and every apply makes.
   */
  leadership(): Leadership;
  /**
   * Where member `id` listens, from this node's address book: the book of each membership as it
   * takes effect (a `config` entry appended or rolled back, recovered on restart; dissertation
   * §4.1), over the recorded bootstrap and the command-line peers. So a member removed and added
   * again at a new address is found at the new one. Undefined for an id never seen. O(1), no
   * allocation: cheap enough for every forwarded request, unlike `status()`.
   */
  memberAddress(id: NodeId): MemberAddress | undefined;
  /**
   * Leader only: one single-server membership change (dissertation §4.1); resolves with the status
   * once the change is committed and applied here. A leader asked to remove itself hands
   * leadership over first and rejects with NotLeaderError(new leader) so the caller forwards.
   * Rejects: NotLeaderError, MembershipChangeError (refusal code), TimeoutError, StoppedError.
   */
  changeMembership(change: MembershipRequest, opts?: RequestOptions): Promise<RaftStatus>;
  /** Called once when this node learns it was removed from the cluster (§4.2.2). */
  onRemoved(listener: () => void): () => void;
  /**
   * A joining node (RaftNodeOptions.join) was added: `configIndex` is the index of a membership that
   * names it (the join answer's). Memberships before it are an earlier node's of the same id (a
   * wiped node rejoining replays its own removal) and never make this node removed; until this is
   * called a joining node is never removed. No effect without `join`.
   */
  admitted(configIndex: LogIndex): void;
  /**
   * Holds the state machine still: until the returned release is called (idempotent), committed
   * entries and installed snapshots wait in order instead of being applied, while the node goes on
   * replicating, voting, heartbeating and serving reads of what it had applied. Lets a caller read
   * the whole state in many event-loop turns at one applied index (a backup, a state hash). Holds
   * nest; the last release applies what waited. Writes and linearizable reads wait meanwhile.
   */
  holdApplies(): () => void;
  /** Called after each batch of applied entries (for long-poll wake-ups); returns an unsubscribe. */
  onApplied(listener: (lastApplied: LogIndex) => void): () => void;
  /** Called when the known leader or this node's role changes. */
  onLeaderChange(listener: (leaderId: NodeId | null, term: Term) => void): () => void;
  /** Stop timers and transport, flush and close storage. Idempotent. */
  stop(): Promise<void>;
}

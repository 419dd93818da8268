/**
 * Protocol types of the pure Raft core: branded numbers, log entries, messages, the Ready batch.
 *
 * Everything here is plain data (msgpackr-encodable, no classes) so the same values travel over the
 * TCP transport, sit in level storage and flow through the deterministic simulator.
 * Sources: Raft paper (Ongaro & Ousterhout 2014) and dissertation (Ongaro 2014); etcd-io/raft's Ready.
 */

/** Raft term (§5.1). Never decreases on a node. Only Raft's term is called `term`. */
export type Term = number & { readonly __brand: 'Term' };
/** Position in the replicated log, 1-based (§5.3). 0 means "before the first entry". */
export type LogIndex = number & { readonly __brand: 'LogIndex' };
/** Node identifier, e.g. `n1`. */
export type NodeId = string;

export const asTerm = (n: number): Term => n as Term;
export const asIndex = (n: number): LogIndex => n as LogIndex;

import type { ConfigurationState, Membership } from './membership.js';

/**
 * Kind of a log entry: a client command, the no-op a new leader appends (§8, dissertation §6.4), or a
 * membership change (`config`, dissertation §4.1: `data` is membership.ts encodeMembership; it takes
 * effect on append). The runtime applies `config` entries as no-ops for its state machine.
 */
export type EntryType = 'command' | 'noop' | 'config';

/**
 * One log entry. `clusterTimeMs` is docs/concepts.md cluster time stamped by the leader that created the
 * entry; it never decreases along the log. `data` is the opaque command (empty for `noop`).
 */
export interface Entry {
  readonly term: Term;
  readonly index: LogIndex;
  readonly type: EntryType;
  readonly clusterTimeMs: number;
  readonly data: Uint8Array;
}

/** State that must be on disk before any message that depends on it is sent (Figure 2). */
export interface HardState {
  readonly term: Term;
  readonly votedFor: NodeId | null;
  readonly commitIndex: LogIndex;
}

/** Where the log begins after compaction: the last index/term covered by a snapshot (§7). */
export interface SnapshotMeta {
  readonly index: LogIndex;
  readonly term: Term;
  readonly clusterTimeMs: number;
  /**
   * The membership in effect at `index` and the index of the `config` entry that set it (dissertation
   * §4.1, §5.4.1: snapshots carry the configuration). Absent on snapshots taken before any change:
   * the bootstrap membership (CoreConfig.voters, configIndex 0) is meant.
   */
  readonly membership?: Membership;
  readonly configIndex?: LogIndex;
}

/**
 * A state-machine snapshot (Raft §7): `data` is StateMachine.snapshot() taken with exactly the
 * entries 1..meta.index applied; `meta.clusterTimeMs` is the cluster time stamp of entry meta.index.
 */
export interface Snapshot {
  readonly meta: SnapshotMeta;
  readonly data: Uint8Array;
}

export type Role = 'follower' | 'precandidate' | 'candidate' | 'leader';

/** Fields common to every message. `term` is the sender's term (for PreVote: the term it would use). */
interface MessageBase {
  readonly from: NodeId;
  readonly to: NodeId;
  readonly term: Term;
}

/** Pre-vote request (dissertation §9.6): asks whether a real election could succeed, changes no term. */
export interface PreVoteMsg extends MessageBase {
  readonly type: 'PreVote';
  readonly lastLogIndex: LogIndex;
  readonly lastLogTerm: Term;
}
export interface PreVoteResponseMsg extends MessageBase {
  readonly type: 'PreVoteResponse';
  readonly granted: boolean;
}
/** RequestVote (§5.2). `transfer` marks a campaign started by TimeoutNow (§3.10): bypasses stickiness. */
export interface RequestVoteMsg extends MessageBase {
  readonly type: 'RequestVote';
  readonly lastLogIndex: LogIndex;
  readonly lastLogTerm: Term;
  readonly transfer: boolean;
}
export interface RequestVoteResponseMsg extends MessageBase {
  readonly type: 'RequestVoteResponse';
  readonly granted: boolean;
}
/**
 * AppendEntries (§5.3), also the heartbeat when `entries` is empty. `clusterTimeMs` is the leader's
 * current cluster time (docs/concepts.md), so followers keep the highest cluster time seen. `heartbeatSeq`
 * increases with every AppendEntries a leader sends in its term; the response echoes it, and a
 * majority of echoes ≥ s confirms leadership for ReadIndex requests issued at seq s (§6.4).
 */
export interface AppendEntriesMsg extends MessageBase {
  readonly type: 'AppendEntries';
  readonly prevLogIndex: LogIndex;
  readonly prevLogTerm: Term;
  readonly entries: readonly Entry[];
  readonly leaderCommit: LogIndex;
  readonly clusterTimeMs: number;
  readonly heartbeatSeq: number;
}
/**
 * Reply to AppendEntries. On success `matchIndex` is the last index known to match the leader.
 * On rejection `conflictIndex`/`conflictTerm` are the §5.3 fast-backtracking hints:
 * conflictTerm is the follower's term at prevLogIndex (0 if it has no entry there) and
 * conflictIndex the first index of that term in its log (or its lastIndex+1).
 */
export interface AppendEntriesResponseMsg extends MessageBase {
  readonly type: 'AppendEntriesResponse';
  readonly success: boolean;
  readonly matchIndex: LogIndex;
  readonly conflictIndex: LogIndex;
  readonly conflictTerm: Term;
  readonly heartbeatSeq: number;
}
/** Leadership transfer (§3.10): tells the target to start an election at once. */
export interface TimeoutNowMsg extends MessageBase {
  readonly type: 'TimeoutNow';
}

/**
 * InstallSnapshot (Raft §7, Figure 13; dissertation §5.4.1): sent instead of AppendEntries when the
 * follower needs entries the leader already compacted away. To the core it is one message with the
 * whole snapshot; the TCP transport carries it as bounded chunk frames and hands the receiver's core
 * one message again once every byte arrived and checked (transport/snapshot-sender.ts,
 * snapshot-receiver.ts; docs/architecture.md), so its size is not bounded by a frame.
 * `clusterTimeMs` is the leader's current cluster time (docs/concepts.md).
 */
export interface InstallSnapshotMsg extends MessageBase {
  readonly type: 'InstallSnapshot';
  readonly snapshot: SnapshotMeta;
  readonly data: Uint8Array;
  readonly clusterTimeMs: number;
}
/**
 * Reply to InstallSnapshot. `snapshotIndex` echoes the snapshot answered (so the leader can match it
 * to its pending send); `matchIndex` is the last index now known to match the leader's log
 * (≥ snapshotIndex when the snapshot or a newer commit covers it; 0 from a stale-term receiver).
 */
export interface InstallSnapshotResponseMsg extends MessageBase {
  readonly type: 'InstallSnapshotResponse';
  readonly snapshotIndex: LogIndex;
  readonly matchIndex: LogIndex;
}

/** Every message of the protocol, discriminated by `type`. */
export type Message =
  | PreVoteMsg
  | PreVoteResponseMsg
  | RequestVoteMsg
  | RequestVoteResponseMsg
  | AppendEntriesMsg
  | AppendEntriesResponseMsg
  | TimeoutNowMsg
  | InstallSnapshotMsg
  | InstallSnapshotResponseMsg;

/** A ReadIndex answer: reads tagged `requestId` are linearizable once appliedIndex ≥ `index` (§6.4). */
export interface ReadState {
  readonly requestId: number;
  readonly index: LogIndex;
}

/** A ReadIndex request the core could not serve (not leader, or leadership lost before confirmation). */
export interface ReadFailure {
  readonly requestId: number;
  readonly leaderHint: NodeId | null;
}

/**
 * Something the runtime should log (the core has no logger). `follower_log_shrank`: a follower
 * answered with a log shorter than the matchIndex the leader had recorded for it (its data was
 * wiped or lost); the leader reset that follower's progress to probe from its real log end and
 * counts it as lagging (matchIndex 0) until it catches up.
 */
export interface CoreWarning {
  readonly type: 'follower_log_shrank';
  readonly peer: NodeId;
  readonly recordedMatchIndex: LogIndex;
  readonly followerLastIndex: LogIndex;
}

/** Volatile state worth reporting to the runtime when it changes. */
export interface SoftState {
  readonly role: Role;
  readonly leaderId: NodeId | null;
  readonly term: Term;
}

/**
 * The output batch of the core (etcd-io/raft's Ready). The runtime must, in order:
 * 1. persist, durably (fsync) and atomically (one write): `snapshot` (if set: store it and discard
 *    every log entry after snapshot.meta.index — the whole old log is superseded, Raft §7), then
 *    `hardState` (if set) and `entries` (appending; an entry at an existing index replaces that
 *    index and everything after it);
 * 2. then send `messages` — or, when `mustPersistBeforeSend` is false, send them BEFORE step 1
 *    (or while its fsync runs), see below;
 * 3. if `snapshot` is set, restore the state machine from it (applied index becomes meta.index)
 *    BEFORE applying anything else;
 * 4. apply `committedEntries` in order (all are ≤ the persisted commit index and > any snapshot) —
 *    always after step 1 has completed, whatever the send order: a node applies only entries it has
 *    made durable itself;
 * 5. serve `readStates` once applied ≥ index, fail `readFailures`;
 * 6. call `advance(ready)`.
 *
 * Send before persist (dissertation §10.2.1, "the leader writes to its disk in parallel"): the core
 * sets `mustPersistBeforeSend = false` only when ALL of these hold when ready() is taken:
 * - the node is leader;
 * - `hardState` is null or changes only commitIndex (term and votedFor are the ones already handed
 *   out, hence durable: no message depends on an undurable term or vote);
 * - `snapshot` is null.
 * Then `messages` hold only AppendEntries (heartbeats included), InstallSnapshot, TimeoutNow and
 * refusals carrying the durable term (stale AppendEntriesResponse with success=false, denied
 * PreVote/RequestVote responses, InstallSnapshotResponse with matchIndex 0) — ready() asserts it.
 * Why this is safe: the leader counts its own log toward a commit only up to the last entry confirmed
 * durable by advance() (RaftLog.persistedIndex), so an entry commits only once a majority holds it
 * durably — that majority may consist of followers alone (each acknowledges only after its own fsync,
 * because every non-leader Ready has mustPersistBeforeSend = true). If the leader crashes before its
 * fsync, it forgets entries some followers may hold, but its durable term and vote keep it from leading
 * that term again, so no other entry of (index, term) can ever exist (Log Matching), and an entry
 * committed by followers is on a majority that every later leader's election quorum intersects (§5.4).
 * commitIndex need not be durable before leaderCommit is sent: it only names entries already stored
 * on a majority. In every other case (votes, term changes, follower acknowledgements of entries or
 * of a snapshot, candidates' requests) `mustPersistBeforeSend` is true (Raft Figure 2: "respond to
 * RPCs only after updating stable storage").
 */
export interface Ready {
  readonly softState: SoftState | null;
  readonly hardState: HardState | null;
  /** A snapshot received from the leader (InstallSnapshot) that replaces this node's log and state. */
  readonly snapshot: Snapshot | null;
  readonly entries: readonly Entry[];
  readonly messages: readonly Message[];
  /**
   * True: `messages` may leave only after `snapshot`/`hardState`/`entries` are durable. False (a
   * leader whose term and vote are already durable): they may leave before or during that write
   * (§10.2.1; rule above). Apply order is unaffected: `committedEntries` always wait for the write.
   */
  readonly mustPersistBeforeSend: boolean;
  readonly committedEntries: readonly Entry[];
  readonly readStates: readonly ReadState[];
  readonly readFailures: readonly ReadFailure[];
  /**
   * The configuration in effect changed since the last Ready (a `config` entry was appended, rolled
   * back by truncation, installed by a snapshot) or became committed; null otherwise. Informational:
   * the configuration itself is durable through `entries`/`snapshot`. The runtime updates its peer
   * list from it; a node that finds itself outside a committed membership was removed (§4.2.2).
   */
  readonly configuration: ConfigurationState | null;
  /** Events for the runtime's log (see CoreWarning). */
  readonly warnings: readonly CoreWarning[];
}

/** Result of `propose`: where the entry will sit if it commits, or why it was not accepted. */
export type ProposeResult =
  | {
      readonly ok: true;
      readonly index: LogIndex;
      readonly term: Term;
      readonly clusterTimeMs: number;
    }
  | {
      readonly ok: false;
      readonly reason: 'not_leader' | 'transferring';
      readonly leaderHint: NodeId | null;
    };

/** Monotonic clock in milliseconds (never decreases; arbitrary origin). Injected; sim clocks may drift. */
export interface Clock {
  nowMs(): number;
}

/** Seeded source of randomness: an integer in [0, n). Injected so the simulator can replay runs. */
export interface Random {
  intBelow(n: number): number;
}

/**
 * Deliberately broken behaviours, used only by tests to prove the simulator's checkers can fail.
 * Never set in production.
 */
export interface UnsafeVariants {
  /** Commit entries of earlier terms by counting replicas (violates §5.4.2, Figure 8). */
  readonly commitPreviousTermByCounting?: boolean;
  /** Grant votes without the §5.4.1 "candidate's log is at least as up-to-date" check. */
  readonly skipLogUpToDateCheck?: boolean;
  /** Leave votedFor out of the persisted hard state (so a crash forgets the vote). */
  readonly dontPersistVotedFor?: boolean;
  /** A follower truncates its log after prevLogIndex even when the incoming entries match (§5.3). */
  readonly truncateMatchingEntries?: boolean;
  /** Every Ready may send before persisting (votes and follower acknowledgements too; Figure 2). */
  readonly sendBeforePersistAlways?: boolean;
  /** Accept a membership change while another is uncommitted (violates §4.1 "one at a time"). */
  readonly concurrentConfigChanges?: boolean;
  /** A new leader changes membership before committing an entry of its term (the §4.1 bug). */
  readonly configChangeBeforeTermCommit?: boolean;
  /** Candidates ask removed members for votes and count their grants (§4.2.3). */
  readonly countRemovedVotes?: boolean;
  /** Candidates ask learners for votes and count their grants (§4.2.1). */
  readonly countLearnerVotes?: boolean;
  /** Keep a follower's matchIndex when it answers with a shorter log (never probe below it). */
  readonly keepMatchIndexOnShorterLog?: boolean;
}

/** Static configuration of one core. Tick-based: the runtime decides the tick length in ms. */
export interface CoreConfig {
  readonly id: NodeId;
  /**
   * Bootstrap voters: the membership used until the log or a snapshot holds a `config` entry
   * (membership.ts). May omit `id` (a node joining an existing cluster starts outside its membership
   * and learns it from the leader) and may be empty for such a node.
   */
  readonly voters: readonly NodeId[];
  /**
   * Promotion bound (dissertation §4.2.1): a learner may become a voter only if its matchIndex is at
   * most this many entries behind the leader's last index. Default 100.
   */
  readonly catchUpEntriesMax?: number;
  /** Base election timeout; each timeout is drawn uniformly from [base, 2 × base). */
  readonly electionTimeoutTicks: number;
  /** Leader heartbeat interval; must be < electionTimeoutTicks. */
  readonly heartbeatTicks: number;
  readonly preVote: boolean;
  readonly checkQuorum: boolean;
  /** Bounds on one AppendEntries message. */
  readonly entriesPerMessageMax: number;
  readonly bytesPerMessageMax: number;
  /** AppendEntries messages with entries in flight per follower (pipelining window). */
  readonly inflightMessagesMax: number;
  /**
   * Leader: ticks to wait for an InstallSnapshotResponse before sending the snapshot again
   * (the message or the install may have been lost). Default 2 × electionTimeoutTicks.
   */
  readonly snapshotRetryTicks?: number;
  /**
   * Leader: ticks a commit notice (an empty AppendEntries whose only news is a higher leaderCommit)
   * is held back so that it can ride on the next AppendEntries with entries instead (Raft §5.3:
   * leaderCommit travels on every AppendEntries). Followers then learn commits up to this many ticks
   * later (the heartbeat tells them anyway); the leader's own commit, answers and reads never wait.
   * Default 0: the notice goes out with the next ready(). docs/architecture.md, "Cost of a write".
   */
  readonly commitNoticeDelayTicks?: number;
  readonly unsafe?: UnsafeVariants;
}

/** What a core starts from: what storage recovered (all empty for a fresh node). */
export interface CoreInitialState {
  readonly hardState: HardState;
  readonly snapshot: SnapshotMeta | null;
  /**
   * The bytes of `snapshot` (Raft §7), kept by the core to send InstallSnapshot to lagging
   * followers. Absent: the core cannot catch up a follower that needs entries ≤ snapshot.index
   * until the runtime calls compact() with a newer snapshot.
   */
  readonly snapshotData?: Uint8Array;
  /** Persisted entries, contiguous, starting at snapshot.index + 1 (or 1). */
  readonly entries: readonly Entry[];
  /**
   * Highest index already applied to the state machine the runtime restored (default: snapshot.index,
   * or 0). Committed entries after it are handed out again in Ready.committedEntries.
   * Must satisfy snapshot.index ≤ appliedIndex ≤ hardState.commitIndex.
   */
  readonly appliedIndex?: LogIndex;
}

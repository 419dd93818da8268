/**
 * RaftCore: the pure, deterministic Raft state machine (Raft paper §5, dissertation §3, §6, §9.6).
 *
 * Driven only by its inputs: `tick()`, `step(msg)`, `propose(data)`, `readIndex(id)`,
 * `transferLeadership(to)`, `proposeMembershipChange(change)` (dissertation ch. 4, membership.ts),
 * `peerRefused(id)` (a transport hint, docs/architecture.md); time for cluster-time stamps comes from
 * the injected `Clock`, randomness from the injected `Random`. No timers, sockets, disk or
 * Date.now() here.
 *
 * Ready cycle (types.ts gives the order the runtime must follow):
 * - `ready()` hands out a batch; `advance(ready)` confirms it was persisted, sent and applied. They
 *   must alternate (assertion). tick/step/propose/readIndex/transferLeadership may be called while a
 *   Ready is outstanding; their output goes into the next one.
 * - AppendEntries for new proposals, commit notices and ReadIndex heartbeats are built in `ready()`,
 *   so every input since the last Ready shares one message per follower (batching).
 * - `entries`: every entry not handed out before; after a follower truncation the batch starts at
 *   the overwritten index. `committedEntries`: (last handed out, commitIndex], at most
 *   committedEntriesPerReadyMax, never beyond what this or an earlier Ready handed out for
 *   persistence (a follower may get an entry in `entries` and `committedEntries` of the same Ready:
 *   step 1 persists it before step 3 applies it).
 * - The leader counts its own log toward a commit only up to the last entry confirmed by `advance`,
 *   which is what lets its Ready's messages leave before its own write is durable
 *   (`Ready.mustPersistBeforeSend`, dissertation §10.2.1; rule and proof sketch in types.ts).
 * - Snapshots (Raft §7): the runtime snapshots its state machine, makes it durable, then calls
 *   `compact(meta, data, compactIndex)`; the core drops entries ≤ compactIndex and keeps the snapshot
 *   to send InstallSnapshot to followers that need compacted entries. A follower that installs one
 *   hands it out in `Ready.snapshot` (persist + restore before applying later entries).
 *
 * - Membership (dissertation ch. 4): single-server changes carried by `config` entries, in effect on
 *   append (config-log.ts). Only voters campaign and count in quorums; learners just receive the log.
 *   `Ready.configuration` reports every change of the membership in effect.
 *
 * Roles change only in the `#becomeX` methods. Peers are always iterated in membership order.
 */
import assert from 'node:assert/strict';
import { ClusterTime } from './cluster-time.js';
import type { ClusterTimeReference } from './cluster-time.js';
import {
  catchUpEntriesMaxDefault,
  committedEntriesPerReadyMax,
  validateCoreConfig,
} from './config.js';
import { bootstrapPoint, ConfigLog } from './config-log.js';
import type { ConfigPoint } from './config-log.js';
import type {
  ConfigurationState,
  MembershipChange,
  MembershipChangeResult,
  MembershipRefusal,
} from './membership.js';
import {
  applyChange,
  encodeMembership,
  isMember,
  replicationTargets,
  sameMembership,
} from './membership.js';
import { isWellFormedMessage } from './message-checks.js';
import { Progress } from './progress.js';
import { quorumSize, quorumValue, tallyVotes } from './quorum.js';
import { RaftLog } from './raft-log.js';
import { ReadOnlyQueue } from './read-only.js';
import type {
  AppendEntriesMsg,
  AppendEntriesResponseMsg,
  Clock,
  CoreConfig,
  CoreInitialState,
  CoreWarning,
  Entry,
  HardState,
  InstallSnapshotMsg,
  InstallSnapshotResponseMsg,
  LogIndex,
  Message,
  NodeId,
  PreVoteMsg,
  PreVoteResponseMsg,
  ProposeResult,
  Random,
  ReadFailure,
  ReadState,
  Ready,
  RequestVoteMsg,
  RequestVoteResponseMsg,
  Role,
  Snapshot,
  SnapshotMeta,
  SoftState,
  Term,
} from './types.js';
import { asIndex, asTerm } from './types.js';

/** A follower's replication progress as the leader sees it (see progress.ts for the states). */
export interface ProgressView {
  readonly matchIndex: LogIndex;
  readonly nextIndex: LogIndex;
  /** Core tick count of the last response from that follower; -1 if none in this term. */
  readonly lastAckTick: number;
  readonly state: 'probe' | 'replicate' | 'snapshot';
  readonly inflightMessages: number;
  /** The follower needs entries before the leader's firstIndex: it is (or will be) sent InstallSnapshot (§7). */
  readonly needsSnapshot: boolean;
}

const emptyData = new Uint8Array(0);

/**
 * One Raft voter as a pure state machine. Construct with CoreConfig (validated; throws on
 * inconsistent limits), the recovered CoreInitialState, a Clock and a Random. Public methods never
 * throw on bad peer input (malformed messages are ignored); assertion failures are bugs.
 */
export class RaftCore {
  readonly #config: CoreConfig;
  readonly #id: NodeId;
  /** Memberships along the log (dissertation §4.1: the newest one in the log is in effect). */
  readonly #configs: ConfigLog;
  /** Derived from the membership in effect: members other than this node (voters, then learners). */
  #peers: readonly NodeId[] = [];
  /** Derived: voters of the membership in effect (this node included if it is one). */
  #voters: ReadonlySet<NodeId> = new Set();
  /** Every node that was a member of some membership this core saw (UNSAFE countRemovedVotes only). */
  readonly #everMembers = new Set<NodeId>();
  readonly #random: Random;
  readonly #log: RaftLog;
  readonly #time: ClusterTime;
  /** Leader: ticks before an unanswered InstallSnapshot is sent again (CoreConfig.snapshotRetryTicks). */
  readonly #snapshotRetryTicks: number;
  /**
   * Newest durable snapshot of this node (taken locally via compact(), or installed from a leader),
   * sent to followers that need entries ≤ its index. meta.index ≥ the log's snapshotIndex.
   */
  #snapshot: Snapshot | null;
  /** Snapshot installed from the leader and not yet handed out in Ready.snapshot. */
  #pendingSnapshot: Snapshot | null = null;

  /** Current term (§5.1). Only increases; changed in #setTerm. */
  #term: Term;
  /** Candidate voted for in #term (§5.2), null if none; set at most once per term. */
  #votedFor: NodeId | null;
  #role: Role = 'follower';
  /** Leader of #term if known (self when leading). */
  #leaderId: NodeId | null = null;

  /** Ticks since the last reset: election timer (non-leaders), check-quorum/transfer timer (leader). */
  #electionElapsed = 0;
  /** Leader: ticks since the last heartbeat broadcast. */
  #heartbeatElapsed = 0;
  /** This round's election timeout, uniform in [electionTimeoutTicks, 2 × electionTimeoutTicks). */
  #randomizedElectionTimeoutTicks = 0;
  /** Total ticks since construction (for Progress.lastAckTick). */
  #tickCount = 0;
  /** Leader: #tickCount when it became leader (check-quorum grace for peers not heard from yet). */
  #leaderSinceTick = 0;

  /** The leader this node forgot on a refusal hint (peerRefused), until it hears a leader again. */
  #refusedLeader: NodeId | null = null;
  /** Term of the last split vote retried early (#retrySplitSoon: at most once per term). */
  #splitRetryTerm = 0;

  /** Pre-vote or vote responses of the current campaign (voter → granted), self included. */
  readonly #votes = new Map<NodeId, boolean>();
  /** Leader only: one Progress per peer. */
  readonly #progress = new Map<NodeId, Progress>();
  /** Leader only: heartbeatSeq of the last AppendEntries sent in this term (§6.4). */
  #heartbeatSeq = 0;
  readonly #reads = new ReadOnlyQueue();
  /** Leader only: target of an ongoing leadership transfer (§3.10), or null. */
  #transferTarget: NodeId | null = null;

  // Work deferred to the next ready() so one message per follower serves many inputs (batching).
  #appendPending = false;
  /** A commit some follower has not been told yet (sent on the next append, or when due). */
  #commitNoticePending = false;
  /** Leader ticks since #commitNoticePending was set. */
  #commitNoticeWaitTicks = 0;
  /** The notice waited COMMIT_NOTICE_DELAY_TICKS: send it at the next ready(). */
  #commitNoticeDue = false;
  #readBroadcastPending = false;

  // Output not yet handed out.
  #messages: Message[] = [];
  #readStates: ReadState[] = [];
  #readFailures: ReadFailure[] = [];
  #warnings: CoreWarning[] = [];
  /** Last configuration handed out in a Ready (or recovered), to emit only changes. */
  #handedConfiguration: ConfigurationState;
  /** Last hard/soft state handed out (or recovered), to emit only changes. */
  #handedHardState: HardState;
  #handedSoftState: SoftState;
  #readyOutstanding = false;

  /**
   * Highest leaderCommit heard in an AppendEntries of the leader of `term` (a follower's view of what
   * its leader last told it was committed; docs/architecture.md, Readiness).
   */
  #leaderCommitSeen: { term: Term; index: LogIndex } = { term: asTerm(0), index: asIndex(0) };

  // Watermarks for checkInvariants (values must never decrease).
  #checkedTerm: Term;
  #checkedCommitIndex: LogIndex;
  /** (refTerm, refMs) of ClusterTime: never decreases lexicographically (cluster-time.ts). */
  #checkedClusterTime: ClusterTimeReference;

  /**
   * Build a core from `config` (validated, throws on inconsistency) and what storage recovered.
   * `initial.entries` count as persisted. Starts as a follower with a fresh randomized timeout.
   */
  constructor(config: CoreConfig, initial: CoreInitialState, clock: Clock, random: Random) {
    validateCoreConfig(config);
    this.#config = config;
    this.#id = config.id;
    this.#random = random;
    this.#snapshotRetryTicks = config.snapshotRetryTicks ?? 2 * config.electionTimeoutTicks;
    const { hardState, snapshot, entries } = initial;
    if (snapshot !== null)
      assert.ok(snapshot.term <= hardState.term, 'snapshot term ≤ hard state term');
    this.#snapshot =
      snapshot !== null && initial.snapshotData !== undefined
        ? { meta: snapshot, data: initial.snapshotData }
        : null;
    this.#log = new RaftLog(snapshot, entries, hardState.commitIndex, initial.appliedIndex);
    assert.ok(this.#log.lastTerm() <= hardState.term, 'log terms ≤ hard state term');
    // Recovery (§4.1): the snapshot's membership (or the bootstrap one), then the log's config entries.
    this.#configs = new ConfigLog(
      snapshot === null ? bootstrapPoint(config.voters) : snapshotPoint(snapshot, config.voters),
    );
    this.#configs.noteAppended(entries);
    this.#onMembershipChanged();
    this.#handedConfiguration = this.configuration();
    this.#term = hardState.term;
    this.#votedFor = hardState.votedFor;
    // The log starts at the snapshot (if any), so its last entry covers both (docs/concepts.md).
    this.#time = new ClusterTime(clock, this.#log.lastTerm(), this.#log.lastClusterTimeMs());
    this.#handedHardState = this.hardState();
    this.#handedSoftState = this.softState();
    this.#resetElectionTimer();
    this.#checkedTerm = this.#term;
    this.#checkedCommitIndex = this.#log.commitIndex();
    this.#checkedClusterTime = this.#time.reference();
  }

  // ---------------------------------------------------------------------------------------------
  // Inputs

  /** Advance logical time by one tick (election / heartbeat / check-quorum / transfer timers). */
  tick(): void {
    this.#tickCount++;
    if (this.#role === 'leader') this.#tickLeader();
    else this.#tickElection();
    this.#maybeStepDownRemoved();
  }

  /**
   * Feed one message received from a peer. Messages not addressed to this node, from itself, or
   * malformed (message-checks.ts) are ignored; so are vote requests and vote answers from nodes that
   * are not voters of the membership in effect (a removed node never disrupts the cluster, §4.2.3;
   * learners never vote, §4.2.1). AppendEntries, InstallSnapshot and TimeoutNow are accepted from any
   * sender (a new member learns its membership from the leader). Term rules: Raft §5.1 plus pre-vote
   * (§9.6: PreVote and granted PreVoteResponse never change terms) and leader stickiness (§4.2.3 /
   * §9.6: while a live leader was heard within electionTimeoutTicks, PreVote/RequestVote are ignored
   * unless `transfer`).
   */
  step(msg: Message): void {
    if (msg.to !== this.#id || msg.from === this.#id) return;
    if (!isWellFormedMessage(msg)) return;
    if (this.#ignoresSender(msg)) return;
    if (msg.term > this.#term) {
      if (this.#ignoresCampaign(msg)) return;
      const keepsTerm = msg.type === 'PreVote' || (msg.type === 'PreVoteResponse' && msg.granted);
      if (!keepsTerm) this.#becomeFollower(msg.term, isFromLeader(msg) ? msg.from : null);
    } else if (msg.term < this.#term) {
      this.#stepStale(msg);
      return;
    }
    this.#dispatch(msg);
    this.#maybeStepDownRemoved();
  }

  #dispatch(msg: Message): void {
    switch (msg.type) {
      case 'PreVote':
        return this.#handlePreVote(msg);
      case 'RequestVote':
        return this.#handleRequestVote(msg);
      case 'PreVoteResponse':
        return this.#handlePreVoteResponse(msg);
      case 'RequestVoteResponse':
        return this.#handleVoteResponse(msg);
      case 'AppendEntries':
        return this.#handleAppendEntries(msg);
      case 'AppendEntriesResponse':
        return this.#handleAppendResponse(msg);
      case 'TimeoutNow':
        return this.#handleTimeoutNow(msg);
      case 'InstallSnapshot':
        return this.#handleInstallSnapshot(msg);
      case 'InstallSnapshotResponse':
        return this.#handleSnapshotResponse(msg);
    }
  }

  /**
   * The runtime made `snapshot` durable (StateMachine.snapshot() with exactly 1..snapshot.index
   * applied, meta from snapshotMetaAt) and deleted — or is about to delete — persisted entries
   * ≤ compactIndex. The core drops those entries from memory (Raft §7) and sends `data` to followers
   * that need entries ≤ snapshot.index. Entries in (compactIndex, snapshot.index] stay for slow
   * followers. Returns false (and changes nothing) when a newer snapshot is already known — e.g. one
   * installed from the leader while the runtime was writing this one.
   * Throws (assertion) if compactIndex > snapshot.index, snapshot.index > appliedIndex, or the meta
   * does not match the log.
   */
  compact(snapshot: SnapshotMeta, data: Uint8Array, compactIndex: LogIndex): boolean {
    if (this.#snapshot !== null && snapshot.index <= this.#snapshot.meta.index) return false;
    if (snapshot.index < this.#log.snapshotIndex()) return false;
    assert.ok(compactIndex <= snapshot.index, 'compactIndex ≤ snapshot index');
    assert.ok(snapshot.index <= this.#log.appliedIndex(), 'snapshot of entries not yet applied');
    assert.equal(this.#log.term(snapshot.index), snapshot.term, 'snapshot term matches the log');
    assert.equal(
      this.#log.clusterTimeAt(snapshot.index),
      snapshot.clusterTimeMs,
      'snapshot cluster time matches',
    );
    this.#snapshot = { meta: snapshot, data };
    this.#log.compactTo(compactIndex);
    this.#configs.compactTo(this.#log.snapshotIndex());
    return true;
  }

  /**
   * Meta of a snapshot taken at applied index `index` (its term, cluster time and the membership in
   * effect there, from the log — §4.1: snapshots carry the configuration), for the runtime to persist
   * before compact(). Throws (assertion) unless
   * log snapshotIndex ≤ index ≤ appliedIndex.
   */
  snapshotMetaAt(index: LogIndex): SnapshotMeta {
    assert.ok(index <= this.#log.appliedIndex(), 'snapshot beyond appliedIndex');
    const term = this.#log.term(index);
    const clusterTimeMs = this.#log.clusterTimeAt(index);
    assert.ok(term !== undefined && clusterTimeMs !== undefined, 'snapshot index compacted away');
    const config = this.#configs.at(index);
    return { index, term, clusterTimeMs, membership: config.membership, configIndex: config.index };
  }

  /**
   * Leader only: append a command entry stamped with the current cluster time (docs/concepts.md). Replication
   * is deferred to the next ready() so concurrent proposals share one AppendEntries per follower.
   * Returns not_leader (with leaderHint) on other roles, transferring during a transfer (§3.10).
   */
  propose(data: Uint8Array): ProposeResult {
    if (this.#role !== 'leader')
      return { ok: false, reason: 'not_leader', leaderHint: this.#leaderId };
    if (this.#transferTarget !== null)
      return { ok: false, reason: 'transferring', leaderHint: this.#id };
    const entry = this.#appendOwn('command', data);
    return { ok: true, index: entry.index, term: entry.term, clusterTimeMs: entry.clusterTimeMs };
  }

  /**
   * Request a linearizable read point (dissertation §6.4); answered in Ready.readStates (with the
   * read index) or Ready.readFailures (with a leader hint) under `requestId`.
   */
  readIndex(requestId: number): void {
    if (this.#role !== 'leader' || this.#reads.isFull()) {
      this.#readFailures.push({ requestId, leaderHint: this.#leaderId });
      return;
    }
    if (!this.#committedInTerm()) {
      this.#reads.addWaiting(requestId);
      return;
    }
    this.#reads.addConfirming(requestId, this.#log.commitIndex(), this.#heartbeatSeq + 1);
    this.#readBroadcastPending = true;
    this.#confirmReads();
  }

  /**
   * Leader only: transfer leadership to voter `to` (§3.10): stop accepting proposals, bring `to` up
   * to date, then send TimeoutNow. Aborted after electionTimeoutTicks. Ignored on non-leaders, for
   * `to` = self or a node that is not a voter of the membership in effect (learners and strangers
   * never lead, §4.2.1); a new target replaces an ongoing transfer.
   */
  transferLeadership(to: NodeId): void {
    if (this.#role !== 'leader' || to === this.#id || !this.#voters.has(to)) return;
    if (this.#transferTarget === to) return;
    this.#transferTarget = to;
    this.#electionElapsed = 0;
    const pr = this.#progress.get(to)!;
    if (pr.matchIndex === this.#log.lastIndex()) this.#sendTimeoutNow(to);
    else this.#sendAppends(to, pr);
  }

  /**
   * The transport's hint that `peer` refused a connection (ECONNREFUSED: nothing listens on its Raft
   * port, so its process is not running there). On a voting follower whose current leader is `peer`
   * it forgets that leader — so it grants other followers' pre-votes (leader stickiness, §4.2.3 /
   * §9.6, lapses) — and brings its election timer forward so that it campaigns in 1 to
   * ⌈electionTimeoutTicks / 4⌉ ticks (a seeded random draw, so two followers rarely collide).
   * Ignored on leaders and (pre)candidates, on learners, and when `peer` is not the current leader.
   * The follower remembers `peer` until it hears a leader: if the vote it then runs splits (another
   * follower campaigned in the same term), it retries within the same quarter (#retrySplitSoon).
   *
   * Safe because it only starts the ordinary election earlier (docs/architecture.md, Failover): the
   * campaign begins with a pre-vote that needs a majority which also lost the leader (a follower
   * still hearing it refuses), terms move only through that vote, and a leader's next AppendEntries
   * restores this follower (the full randomized timeout is kept for the next round). Leases rest on
   * cluster time, not on election timeouts, so an earlier election never ends a lease early.
   */
  peerRefused(peer: NodeId): void {
    if (this.#role !== 'follower' || !this.isVoter()) return;
    if (this.#leaderId === null || this.#leaderId !== peer) return;
    this.#leaderId = null;
    this.#refusedLeader = peer;
    this.#campaignSoon();
  }

  /** Brings the election timer forward: campaign in 1 to ⌈electionTimeoutTicks / 4⌉ ticks (a random draw). */
  #campaignSoon(): void {
    const delayTicks = 1 + this.#random.intBelow(Math.ceil(this.#config.electionTimeoutTicks / 4));
    this.#electionElapsed = Math.max(
      this.#electionElapsed,
      this.#randomizedElectionTimeoutTicks - delayTicks,
    );
  }

  /**
   * Candidate, after a refusal hint (peerRefused): the vote split when it cannot be won even if every
   * voter that has not answered, except the refused leader, grants — typically both followers of a
   * crashed three-node leader campaigned in the same term and each voted for itself. Without this the
   * split waits out a full randomized election timeout (1–2 s by default); with it, each candidate
   * draws again from the quarter, once per term. Timing only: the next round is an ordinary pre-vote
   * and vote (docs/architecture.md, Failover).
   */
  #retrySplitSoon(): void {
    const refused = this.#refusedLeader;
    if (refused === null || this.#splitRetryTerm === this.#term) return;
    let reachable = 0;
    for (const voter of this.#voters) {
      const vote = this.#votes.get(voter);
      if (vote === true || (vote === undefined && voter !== refused)) reachable++;
    }
    if (reachable >= quorumSize(this.#voters.size)) return;
    this.#splitRetryTerm = this.#term;
    this.#campaignSoon();
  }

  /**
   * Leader only: propose one single-server membership change (dissertation §4.1, §4.2.1): appends a
   * `config` entry that takes effect at once (on append) on this node and on each follower as it
   * appends it. Refused (MembershipRefusal codes, membership.ts) unless this node leads, no transfer
   * runs, an entry of this term is committed, the previous change is committed, the change applies
   * to the membership in effect, and — for `promote` — the learner is caught up (catchUpEntriesMax).
   * A leader that removes itself keeps leading (not counting itself in quorums, §4.2.2) until the
   * removal commits, then sends TimeoutNow to its most up-to-date voter and steps down for good.
   */
  proposeMembershipChange(change: MembershipChange): MembershipChangeResult {
    const refused = (reason: MembershipRefusal, detail?: string): MembershipChangeResult => ({
      ok: false,
      reason,
      leaderHint: this.#role === 'leader' ? this.#id : this.#leaderId,
      ...(detail === undefined ? {} : { detail }),
    });
    if (this.#role !== 'leader') return refused('not_leader');
    if (this.#transferTarget !== null) return refused('transferring');
    const unsafe = this.#config.unsafe;
    if (!this.#committedInTerm() && unsafe?.configChangeBeforeTermCommit !== true)
      return refused('leader_not_ready');
    const current = this.#configs.current();
    if (current.index > this.#log.commitIndex() && unsafe?.concurrentConfigChanges !== true)
      return refused('reconfiguration_in_progress');
    const next = applyChange(current.membership, change);
    if (typeof next === 'string') return refused(next);
    const lag = change.type === 'promote' ? this.#notCaughtUp(change.id) : null;
    if (lag !== null) return refused('not_caught_up', lag);
    const entry = this.#appendOwn('config', encodeMembership(next));
    return { ok: true, index: entry.index, term: entry.term, membership: next };
  }

  // ---------------------------------------------------------------------------------------------
  // Queries

  /**
   * The membership in effect (the newest `config` entry in the log, else the snapshot's or the
   * bootstrap one), the index of its entry, and whether it is committed (§4.1).
   */
  configuration(): ConfigurationState {
    const point = this.#configs.current();
    return {
      membership: point.membership,
      configIndex: point.index,
      committed: point.index <= this.#log.commitIndex(),
    };
  }
  /** True if this node is a voter of the membership in effect. */
  isVoter(): boolean {
    return this.#voters.has(this.#id);
  }
  #noteLeaderCommit(term: Term, leaderCommit: LogIndex): void {
    const seen = this.#leaderCommitSeen;
    if (term !== seen.term || leaderCommit > seen.index)
      this.#leaderCommitSeen = { term, index: leaderCommit };
  }

  /**
   * What this node knows the cluster has committed: a leader its own commitIndex; a follower the
   * highest leaderCommit its current leader sent in this term (≥ its own commitIndex while its log
   * lags); without a leader its own commitIndex. A node that has applied this much is caught up
   * (docs/architecture.md, Readiness).
   */
  leaderCommitIndex(): LogIndex {
    const own = this.#log.commitIndex();
    if (this.#role === 'leader' || this.#leaderId === null) return own;
    const seen = this.#leaderCommitSeen;
    return seen.term === this.#term && seen.index > own ? seen.index : own;
  }

  /**
   * Leader: current cluster time (docs/concepts.md), never decreasing within its term. Others: the latest
   * reading of the newest leader timeline seen — frozen while leaderless (docs/concepts.md), and it may go
   * down when a newer term's timeline is learned (cluster-time.ts).
   */
  clusterTimeMs(): number {
    return this.#time.nowMs();
  }
  softState(): SoftState {
    return { role: this.#role, leaderId: this.#leaderId, term: this.#term };
  }
  /** The hard state as it is now (including changes not yet handed out in a Ready). */
  hardState(): HardState {
    return { term: this.#term, votedFor: this.#votedFor, commitIndex: this.#log.commitIndex() };
  }
  /** Last index of the local log (persisted or not). */
  lastIndex(): LogIndex {
    return this.#log.lastIndex();
  }
  /** Index the in-memory log starts after (compaction point or installed snapshot); 0 without one. */
  firstIndex(): LogIndex {
    return this.#log.firstIndex();
  }
  /** Meta of the newest snapshot this node holds (local or installed), or null. */
  snapshotMeta(): SnapshotMeta | null {
    return this.#snapshot?.meta ?? null;
  }
  /** Highest index confirmed applied via advance() (starts at initial.appliedIndex or snapshot.index). */
  appliedIndex(): LogIndex {
    return this.#log.appliedIndex();
  }
  /** Ticks since construction; Progress.lastAckTick is on this scale. */
  tickCount(): number {
    return this.#tickCount;
  }
  /**
   * How many tick() calls from now until one may do more than count: start an election, send
   * heartbeats, step down (check-quorum, §6.2), abort a transfer, send a due commit notice or retry a
   * snapshot. ≥ 1. A runtime may sleep that long instead of ticking, provided it hands the core every
   * tick that passed before any other input (the counters, and leader stickiness, §4.2.3, read them).
   * A leader outside the voters (being removed) answers 1: it steps down on the next tick.
   */
  ticksUntilDue(): number {
    if (this.#role !== 'leader')
      return this.isVoter()
        ? Math.max(1, this.#randomizedElectionTimeoutTicks - this.#electionElapsed)
        : Number.POSITIVE_INFINITY; // learners and outsiders never campaign; ticks only count
    if (!this.isVoter()) return 1;
    const config = this.#config;
    let due = Math.min(
      config.heartbeatTicks - this.#heartbeatElapsed,
      config.electionTimeoutTicks - this.#electionElapsed,
    );
    if (this.#commitNoticePending)
      due = Math.min(due, (config.commitNoticeDelayTicks ?? 0) - this.#commitNoticeWaitTicks);
    for (const [peer, pr] of this.#progress) {
      // Check-quorum: a voter's answer expires electionTimeoutTicks after it (#quorumActive).
      if (config.checkQuorum && this.#voters.has(peer)) {
        const lastHeardTick = Math.max(pr.lastAckTick, pr.addedTick, this.#leaderSinceTick);
        const expiresIn = lastHeardTick + config.electionTimeoutTicks - this.#tickCount;
        if (expiresIn > 0) due = Math.min(due, expiresIn);
      }
      if (pr.state === 'snapshot')
        due = Math.min(due, pr.snapshotSentTick + this.#snapshotRetryTicks - this.#tickCount);
    }
    return Math.max(1, due);
  }
  /** Target of the ongoing leadership transfer, or null. */
  transferTarget(): NodeId | null {
    return this.#transferTarget;
  }
  /** Leader only: per-follower replication progress (followers only, config order); empty on others. */
  progress(): ReadonlyMap<NodeId, ProgressView> {
    const out = new Map<NodeId, ProgressView>();
    for (const [peer, pr] of this.#progress) {
      out.set(peer, {
        matchIndex: asIndex(pr.matchIndex),
        nextIndex: asIndex(pr.nextIndex),
        lastAckTick: pr.lastAckTick,
        state: pr.state,
        inflightMessages: pr.inflightCount(),
        needsSnapshot: pr.nextIndex < this.#log.firstIndex(),
      });
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Ready cycle

  /** True if ready() would return a non-empty batch. */
  hasReady(): boolean {
    return (
      this.#appendPending ||
      this.#commitNoticeDue ||
      this.#readBroadcastPending ||
      this.#messages.length > 0 ||
      this.#readStates.length > 0 ||
      this.#readFailures.length > 0 ||
      this.#warnings.length > 0 ||
      !sameConfiguration(this.configuration(), this.#handedConfiguration) ||
      this.#pendingSnapshot !== null ||
      this.#log.hasUnstable() ||
      this.#log.hasCommittedToHandOut() ||
      !sameHardState(this.hardState(), this.#handedHardState) ||
      !sameSoftState(this.softState(), this.#handedSoftState)
    );
  }

  /**
   * Collect pending output (types.ts documents the order the runtime must follow). Hands out each
   * entry, message, read state and failure exactly once. Throws (assertion) if the previous Ready
   * was not advanced yet.
   */
  ready(): Ready {
    assert.ok(!this.#readyOutstanding, 'ready() called before advance() of the previous Ready');
    this.#flushDeferred();
    const entries = this.#log.takeUnstable();
    const committedEntries = this.#log.takeCommitted(committedEntriesPerReadyMax);
    const hs = this.hardState();
    // §10.2.1 (types.ts Ready): only a leader whose term and vote are already durable sends first.
    const mustPersistBeforeSend =
      this.#config.unsafe?.sendBeforePersistAlways !== true &&
      (this.#role !== 'leader' ||
        this.#pendingSnapshot !== null ||
        hs.term !== this.#handedHardState.term ||
        hs.votedFor !== this.#handedHardState.votedFor);
    if (!mustPersistBeforeSend && this.#config.unsafe?.sendBeforePersistAlways !== true) {
      for (const msg of this.#messages) {
        assert.ok(
          isSendableBeforePersist(msg),
          `leader message ${msg.type} depends on unpersisted state`,
        );
      }
    }
    let hardState: HardState | null = null;
    if (!sameHardState(hs, this.#handedHardState)) {
      hardState =
        this.#config.unsafe?.dontPersistVotedFor === true ? { ...hs, votedFor: null } : hs;
      this.#handedHardState = hs;
    }
    const ss = this.softState();
    let softState: SoftState | null = null;
    if (!sameSoftState(ss, this.#handedSoftState)) {
      softState = ss;
      this.#handedSoftState = ss;
    }
    const cs = this.configuration();
    let configuration: ConfigurationState | null = null;
    if (!sameConfiguration(cs, this.#handedConfiguration)) {
      configuration = cs;
      this.#handedConfiguration = cs;
    }
    const rd: Ready = {
      softState,
      hardState,
      snapshot: this.#pendingSnapshot,
      entries,
      messages: this.#messages,
      mustPersistBeforeSend,
      committedEntries,
      readStates: this.#readStates,
      readFailures: this.#readFailures,
      configuration,
      warnings: this.#warnings,
    };
    this.#messages = [];
    this.#readStates = [];
    this.#readFailures = [];
    this.#warnings = [];
    this.#pendingSnapshot = null;
    this.#readyOutstanding = true;
    return rd;
  }

  /**
   * Confirm `rd` (the last Ready) was persisted, sent and applied. The leader counts its own log in
   * the commit quorum only up to what was persisted this way.
   */
  advance(rd: Ready): void {
    assert.ok(this.#readyOutstanding, 'advance() without an outstanding Ready');
    this.#readyOutstanding = false;
    const lastEntry = rd.entries[rd.entries.length - 1];
    if (lastEntry !== undefined) this.#log.stableTo(lastEntry.index, lastEntry.term);
    const lastApplied = rd.committedEntries[rd.committedEntries.length - 1];
    if (lastApplied !== undefined) this.#log.appliedTo(lastApplied.index);
    if (this.#role === 'leader') this.#maybeCommit();
    this.#maybeStepDownRemoved();
  }

  /** Throws (assertion) if an internal invariant is broken; tests and the simulator call it every step. */
  checkInvariants(): void {
    assert.ok(this.#term >= this.#checkedTerm, 'term never decreases');
    this.#checkedTerm = this.#term;
    const commitIndex = this.#log.commitIndex();
    assert.ok(commitIndex >= this.#checkedCommitIndex, 'commitIndex never decreases');
    this.#checkedCommitIndex = commitIndex;
    this.#checkClusterTime();
    this.#log.checkInvariants();
    assert.ok(this.#log.lastTerm() <= this.#term, 'log terms ≤ current term');
    if (this.#role === 'leader') {
      assert.equal(this.#leaderId, this.#id, 'leader knows itself');
      assert.equal(this.#progress.size, this.#peers.length, 'leader tracks every peer');
      for (const peer of this.#peers)
        assert.ok(this.#progress.has(peer), 'leader tracks every member');
      for (const pr of this.#progress.values()) pr.checkInvariants(this.#log.lastIndex());
    } else {
      assert.equal(this.#progress.size, 0, 'only the leader tracks progress');
      assert.equal(this.#reads.size(), 0, 'only the leader holds reads');
      assert.equal(this.#transferTarget, null, 'only the leader transfers');
    }
    if (this.#role === 'candidate')
      assert.equal(this.#votedFor, this.#id, 'candidate voted for itself');
    if (this.#role === 'candidate' || this.#role === 'precandidate')
      assert.ok(this.isVoter(), 'only voters campaign (§4.2.1)');
    this.#configs.checkInvariants((i) => this.#log.term(i));
    const configIndex = this.#configs.current().index;
    assert.ok(configIndex <= this.#log.lastIndex(), 'the membership in effect is in the log');
    if (this.#snapshot !== null) {
      assert.ok(
        this.#snapshot.meta.index >= this.#log.snapshotIndex(),
        'log starts at or before the snapshot',
      );
      assert.ok(
        this.#snapshot.meta.index <= this.#log.commitIndex(),
        'snapshots hold committed state only',
      );
      assert.ok(this.#snapshot.meta.term <= this.#term, 'snapshot term ≤ current term');
      assert.ok(
        this.#time.reference().ms >= this.#snapshot.meta.clusterTimeMs,
        'cluster time ≥ snapshot stamp',
      );
    }
  }

  /** Cluster-time invariants of checkInvariants (cluster-time.ts, docs/concepts.md). */
  #checkClusterTime(): void {
    const ref = this.#time.reference();
    const checked = this.#checkedClusterTime;
    assert.ok(
      ref.term > checked.term || (ref.term === checked.term && ref.ms >= checked.ms),
      'cluster time never decreases within a timeline; its reference term never decreases',
    );
    this.#checkedClusterTime = ref;
    assert.ok(ref.term <= this.#term, 'cluster time reference term ≤ current term');
    assert.ok(ref.term >= this.#log.lastTerm(), 'cluster time reference term ≥ last entry term');
    if (ref.term === this.#log.lastTerm()) {
      assert.ok(
        ref.ms >= this.#log.lastClusterTimeMs(),
        'cluster time ≥ last entry stamp of its term',
      );
    }
    const committedMs = this.#log.clusterTimeAt(this.#log.commitIndex());
    assert.ok(
      committedMs !== undefined && ref.ms >= committedMs,
      'cluster time ≥ last committed stamp',
    );
    if (this.#role === 'leader')
      assert.equal(ref.term, this.#term, "a leader's reference is its own term");
  }

  // ---------------------------------------------------------------------------------------------
  // Timers

  #tickElection(): void {
    this.#electionElapsed++;
    // Learners and nodes outside the membership never campaign (§4.2.1, §4.2.2).
    if (!this.isVoter()) return;
    if (this.#electionElapsed >= this.#randomizedElectionTimeoutTicks) this.#campaign(false);
  }

  #tickLeader(): void {
    this.#heartbeatElapsed++;
    this.#electionElapsed++;
    if (this.#config.checkQuorum && !this.#quorumActive()) {
      this.#becomeFollower(this.#term, null);
      return;
    }
    if (this.#electionElapsed >= this.#config.electionTimeoutTicks) {
      this.#electionElapsed = 0;
      this.#transferTarget = null; // §3.10: abort a transfer that did not finish in time
    }
    if (this.#heartbeatElapsed >= this.#config.heartbeatTicks) {
      this.#heartbeatElapsed = 0;
      for (const peer of this.#peers) this.#sendHeartbeat(peer, this.#progress.get(peer)!);
    }
    if (
      this.#commitNoticePending &&
      ++this.#commitNoticeWaitTicks >= (this.#config.commitNoticeDelayTicks ?? 0)
    )
      this.#commitNoticeDue = true;
    this.#retrySnapshots();
  }

  /** §7 / BC-25: an InstallSnapshot unanswered for snapshotRetryTicks is sent again (via probe). */
  #retrySnapshots(): void {
    for (const peer of this.#peers) {
      const pr = this.#progress.get(peer)!;
      if (
        pr.state !== 'snapshot' ||
        this.#tickCount - pr.snapshotSentTick < this.#snapshotRetryTicks
      )
        continue;
      pr.becomeProbe(pr.nextIndex);
      this.#sendAppends(peer, pr);
    }
  }

  /**
   * Check-quorum (dissertation §6.2): has a majority (self included) answered within the last
   * electionTimeoutTicks? Checked every tick, so a cut-off leader steps down exactly one election
   * timeout after the last answer that kept its quorum — before any follower's stickiness lapses.
   */
  #quorumActive(): boolean {
    let active = 0;
    for (const voter of this.#voters) {
      if (voter === this.#id) {
        active++;
        continue;
      }
      const pr = this.#progress.get(voter)!;
      const lastHeardTick = Math.max(pr.lastAckTick, pr.addedTick, this.#leaderSinceTick);
      if (this.#tickCount - lastHeardTick < this.#config.electionTimeoutTicks) active++;
    }
    return active >= quorumSize(this.#voters.size);
  }

  #resetElectionTimer(): void {
    this.#electionElapsed = 0;
    this.#heartbeatElapsed = 0;
    const base = this.#config.electionTimeoutTicks;
    this.#randomizedElectionTimeoutTicks = base + this.#random.intBelow(base);
  }

  // ---------------------------------------------------------------------------------------------
  // Role changes

  #setTerm(term: Term): void {
    assert.ok(term >= this.#term, 'term never decreases');
    if (term > this.#term) {
      this.#term = term;
      this.#votedFor = null;
    }
  }

  #becomeFollower(term: Term, leaderId: NodeId | null): void {
    const wasLeader = this.#role === 'leader';
    this.#setTerm(term);
    this.#role = 'follower';
    this.#leaderId = leaderId;
    if (wasLeader) this.#stopLeading();
    this.#votes.clear();
    this.#resetElectionTimer();
  }

  #stopLeading(): void {
    for (const requestId of this.#reads.drainAll()) {
      this.#readFailures.push({ requestId, leaderHint: this.#leaderId });
    }
    this.#progress.clear();
    this.#transferTarget = null;
    this.#appendPending = false;
    this.#clearCommitNotice();
    this.#readBroadcastPending = false;
    this.#time.stopLeading();
  }

  /** Start an election: a pre-vote round first when configured, unless forced by TimeoutNow. */
  #campaign(transfer: boolean): void {
    if (this.#config.preVote && !transfer) this.#becomePreCandidate();
    else this.#becomeCandidate(transfer);
  }

  /** Pre-vote (§9.6): ask for votes at term + 1 without changing any term. */
  #becomePreCandidate(): void {
    assert.notEqual(this.#role, 'leader');
    this.#role = 'precandidate';
    this.#leaderId = null;
    this.#votes.clear();
    this.#resetElectionTimer();
    this.#votes.set(this.#id, true);
    const term = asTerm(this.#term + 1);
    for (const peer of this.#campaignTargets()) {
      this.#send({ type: 'PreVote', from: this.#id, to: peer, term, ...this.#lastLogPosition() });
    }
    this.#checkPreVotes();
  }

  /** Candidate (§5.2): increment term, vote for self, request votes. */
  #becomeCandidate(transfer: boolean): void {
    assert.notEqual(this.#role, 'leader');
    this.#setTerm(asTerm(this.#term + 1));
    this.#role = 'candidate';
    this.#leaderId = null;
    this.#recordVote(this.#id);
    this.#votes.clear();
    this.#resetElectionTimer();
    this.#votes.set(this.#id, true);
    for (const peer of this.#campaignTargets()) {
      const msg: RequestVoteMsg = {
        type: 'RequestVote',
        from: this.#id,
        to: peer,
        term: this.#term,
        ...this.#lastLogPosition(),
        transfer,
      };
      this.#send(msg);
    }
    this.#checkVotes();
  }

  /** Leader (§5.2): reset progress, start cluster time for the term, append the no-op (§8). */
  #becomeLeader(): void {
    assert.equal(this.#role, 'candidate');
    this.#role = 'leader';
    this.#leaderId = this.#id;
    this.#refusedLeader = null;
    this.#votes.clear();
    this.#resetElectionTimer();
    this.#heartbeatSeq = 0;
    this.#transferTarget = null;
    this.#leaderSinceTick = this.#tickCount;
    const nextIndex = this.#log.lastIndex() + 1;
    for (const peer of this.#peers) {
      this.#progress.set(peer, new Progress(nextIndex, this.#config.inflightMessagesMax));
    }
    this.#time.startLeading(this.#term, this.#log.lastTerm(), this.#log.lastClusterTimeMs());
    this.#appendOwn('noop', emptyData);
  }

  #recordVote(candidate: NodeId): void {
    assert.ok(this.#votedFor === null || this.#votedFor === candidate, 'at most one vote per term');
    this.#votedFor = candidate;
  }

  #lastLogPosition(): { lastLogIndex: LogIndex; lastLogTerm: Term } {
    return { lastLogIndex: this.#log.lastIndex(), lastLogTerm: this.#log.lastTerm() };
  }

  // ---------------------------------------------------------------------------------------------
  // Membership (dissertation ch. 4)

  /** §4.2.3 / §4.2.1: vote traffic counts only between voters of the membership in effect. */
  #ignoresSender(msg: Message): boolean {
    switch (msg.type) {
      case 'PreVote':
      case 'RequestVote':
        return !this.#voters.has(msg.from);
      case 'PreVoteResponse':
      case 'RequestVoteResponse':
        return !this.#countsVoteOf(msg.from);
      default:
        return false;
    }
  }

  /** Whose vote a campaign counts: voters only (the UNSAFE variants add learners / removed nodes). */
  #countsVoteOf(id: NodeId): boolean {
    if (this.#voters.has(id)) return true;
    const unsafe = this.#config.unsafe;
    const membership = this.#configs.current().membership;
    if (unsafe?.countLearnerVotes === true && membership.learners.includes(id)) return true;
    return (
      unsafe?.countRemovedVotes === true && this.#everMembers.has(id) && !isMember(membership, id)
    );
  }

  /** Nodes a (pre-)candidate asks for votes: the other voters (plus what UNSAFE variants add). */
  #campaignTargets(): NodeId[] {
    const targets = [...this.#voters].filter((id) => id !== this.#id);
    for (const id of [...this.#peers, ...this.#everMembers]) {
      if (id !== this.#id && !targets.includes(id) && this.#countsVoteOf(id)) targets.push(id);
    }
    return targets;
  }

  /**
   * After entries were appended (leader or follower): roll back memberships whose entry was
   * truncated, record new `config` entries (§4.1: in effect on append), refresh what derives from it.
   */
  #syncConfigs(appended: readonly Entry[]): void {
    const before = this.#configs.current();
    this.#configs.dropInvalid((i) => this.#log.term(i));
    this.#configs.noteAppended(appended);
    if (this.#configs.current() !== before) this.#onMembershipChanged();
  }

  /** The membership in effect changed: recompute peers and voters; a leader adds/drops Progress. */
  #onMembershipChanged(): void {
    const membership = this.#configs.current().membership;
    this.#peers = replicationTargets(membership, this.#id);
    this.#voters = new Set(membership.voters);
    for (const id of [...membership.voters, ...membership.learners]) this.#everMembers.add(id);
    if (this.#role !== 'leader') return;
    for (const peer of [...this.#progress.keys()]) {
      if (!this.#peers.includes(peer)) this.#progress.delete(peer);
    }
    for (const peer of this.#peers) {
      if (this.#progress.has(peer)) continue;
      const pr = new Progress(this.#log.lastIndex() + 1, this.#config.inflightMessagesMax);
      pr.addedTick = this.#tickCount; // check-quorum grace for a new voter, as at election
      this.#progress.set(peer, pr);
      this.#appendPending = true;
    }
    if (this.#transferTarget !== null && !this.#voters.has(this.#transferTarget)) {
      this.#transferTarget = null;
    }
  }

  /**
   * §4.2.2: a leader outside the membership in effect leads until that membership commits, then hands
   * over (TimeoutNow to its most up-to-date voter, so no one waits for an election timeout) and
   * steps down for good: it never campaigns or heartbeats again.
   */
  #maybeStepDownRemoved(): void {
    if (this.#role !== 'leader' || this.isVoter()) return;
    if (this.#configs.current().index > this.#log.commitIndex()) return;
    let best: NodeId | null = null;
    let bestMatch = -1;
    for (const voter of this.#voters) {
      const match = this.#progress.get(voter)?.matchIndex ?? -1;
      if (match > bestMatch) {
        best = voter;
        bestMatch = match;
      }
    }
    if (best !== null && bestMatch === this.#log.lastIndex()) this.#sendTimeoutNow(best);
    this.#becomeFollower(this.#term, null);
  }

  /**
   * §4.2.1: a learner is caught up when it answered this leader within an election timeout, holds
   * the membership in effect (the entry that names it: it was reached at least once), and its
   * matchIndex is within catchUpEntriesMax of our log end — so a learner never reached, or gone
   * silent, is not made a voter on a young log (docs/operations.md, `not_caught_up`).
   * Returns null when caught up, else which of the three it missed, for the refusal's message.
   */
  #notCaughtUp(id: NodeId): string | null {
    const pr = this.#progress.get(id);
    if (pr === undefined || pr.lastAckTick < 0) return `${id} has never answered this leader`;
    if (this.#tickCount - pr.lastAckTick >= this.#config.electionTimeoutTicks)
      return `${id} has not answered this leader within an election timeout`;
    if (pr.matchIndex < this.#configs.current().index)
      return `${id} does not hold the membership that added it yet`;
    const lagMax = this.#config.catchUpEntriesMax ?? catchUpEntriesMaxDefault;
    const behind = this.#log.lastIndex() - pr.matchIndex;
    return behind <= lagMax ? null : `${id} is ${behind} entries behind (at most ${lagMax})`;
  }

  // ---------------------------------------------------------------------------------------------
  // Elections

  /** Leader stickiness: a campaign message at a higher term while a live leader was heard recently. */
  #ignoresCampaign(msg: Message): boolean {
    const campaign = msg.type === 'PreVote' || (msg.type === 'RequestVote' && !msg.transfer);
    return campaign && this.#inLease();
  }

  /** Heard from a live leader (or is one) within the minimum election timeout. */
  #inLease(): boolean {
    return this.#leaderId !== null && this.#electionElapsed < this.#config.electionTimeoutTicks;
  }

  #voteLogOk(lastLogIndex: LogIndex, lastLogTerm: Term): boolean {
    return (
      this.#config.unsafe?.skipLogUpToDateCheck === true ||
      this.#log.isUpToDate(lastLogIndex, lastLogTerm)
    );
  }

  /** Grant a pre-vote iff the requested term is ahead of ours and its log is up to date (§9.6). */
  #handlePreVote(msg: PreVoteMsg): void {
    const granted =
      msg.term > this.#term &&
      !this.#inLease() &&
      this.#voteLogOk(msg.lastLogIndex, msg.lastLogTerm);
    const term = granted ? msg.term : this.#term;
    this.#send({ type: 'PreVoteResponse', from: this.#id, to: msg.from, term, granted });
  }

  /** §5.2, §5.4.1: one vote per term, only for an up-to-date log; granting resets the election timer. */
  #handleRequestVote(msg: RequestVoteMsg): void {
    const canVote =
      this.#votedFor === msg.from || (this.#votedFor === null && this.#leaderId === null);
    const granted = canVote && this.#voteLogOk(msg.lastLogIndex, msg.lastLogTerm);
    if (granted) {
      this.#recordVote(msg.from);
      this.#electionElapsed = 0;
    }
    this.#send({
      type: 'RequestVoteResponse',
      from: this.#id,
      to: msg.from,
      term: this.#term,
      granted,
    });
  }

  #handlePreVoteResponse(msg: PreVoteResponseMsg): void {
    if (this.#role !== 'precandidate') return;
    // Grants carry the proposed term (ours + 1); rejections our own term (higher ones made us follower).
    const forThisRound = msg.granted ? msg.term === this.#term + 1 : msg.term === this.#term;
    if (!forThisRound) return;
    this.#votes.set(msg.from, msg.granted);
    this.#checkPreVotes();
  }

  #checkPreVotes(): void {
    const result = tallyVotes(this.#votes, this.#voters.size);
    if (result === 'won') this.#becomeCandidate(false);
    else if (result === 'lost') this.#becomeFollower(this.#term, null);
  }

  #handleVoteResponse(msg: RequestVoteResponseMsg): void {
    if (this.#role !== 'candidate') return;
    this.#votes.set(msg.from, msg.granted);
    this.#checkVotes();
  }

  #checkVotes(): void {
    const result = tallyVotes(this.#votes, this.#voters.size);
    if (result === 'won') this.#becomeLeader();
    else if (result === 'lost') this.#becomeFollower(this.#term, null);
    else this.#retrySplitSoon();
  }

  /** TimeoutNow (§3.10): campaign at once, bypassing pre-vote and the receivers' stickiness. */
  #handleTimeoutNow(msg: Message): void {
    if (this.#role !== 'follower' || msg.from !== this.#leaderId || !this.isVoter()) return;
    this.#becomeCandidate(true);
  }

  /**
   * A message from an older term (§5.1): tell stale leaders and (pre)candidates our term so they step
   * down; ignore the rest.
   */
  #stepStale(msg: Message): void {
    switch (msg.type) {
      case 'AppendEntries':
        this.#send(this.#appendResponse(msg.from, false, 0, 0, 0, msg.heartbeatSeq));
        return;
      case 'PreVote':
        this.#send({
          type: 'PreVoteResponse',
          from: this.#id,
          to: msg.from,
          term: this.#term,
          granted: false,
        });
        return;
      case 'RequestVote':
        this.#send({
          type: 'RequestVoteResponse',
          from: this.#id,
          to: msg.from,
          term: this.#term,
          granted: false,
        });
        return;
      case 'InstallSnapshot':
        this.#send(this.#snapshotResponse(msg.from, msg.snapshot.index, 0));
        return;
      default:
        return;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Follower side of replication

  /**
   * AppendEntries at our term (§5.3): accept the sender as leader, check the log matches at
   * prevLogIndex, append, and commit up to min(leaderCommit, last index verified by this message).
   */
  #handleAppendEntries(msg: AppendEntriesMsg): void {
    assert.notEqual(this.#role, 'leader', 'two leaders in one term');
    if (this.#role !== 'follower') this.#becomeFollower(msg.term, msg.from);
    this.#leaderId = msg.from;
    this.#refusedLeader = null;
    this.#electionElapsed = 0;
    this.#time.observe(msg.term, msg.clusterTimeMs);
    this.#noteLeaderCommit(msg.term, msg.leaderCommit);
    const commitIndex = this.#log.commitIndex();
    let prevLogIndex: number = msg.prevLogIndex;
    let entries = msg.entries;
    if (prevLogIndex < commitIndex) {
      // Entries up to our commitIndex are committed, hence identical in the leader's log (§5.4).
      const atCommit = entries[commitIndex - prevLogIndex - 1];
      assert.ok(
        atCommit === undefined || atCommit.term === this.#log.term(commitIndex),
        'leader lacks a committed entry',
      );
      entries = entries.slice(Math.min(entries.length, commitIndex - prevLogIndex));
      prevLogIndex = commitIndex;
    } else if (!this.#log.matchTerm(prevLogIndex, msg.prevLogTerm)) {
      this.#rejectAppend(msg);
      return;
    }
    if (entries.length > 0) {
      this.#log.appendFromLeader(
        prevLogIndex,
        entries,
        this.#config.unsafe?.truncateMatchingEntries === true,
      );
      this.#syncConfigs(entries);
      this.#time.observe(this.#log.lastTerm(), this.#log.lastClusterTimeMs());
    }
    const lastNewIndex = prevLogIndex + entries.length;
    this.#log.commitTo(Math.min(msg.leaderCommit, lastNewIndex));
    this.#send(this.#appendResponse(msg.from, true, lastNewIndex, 0, 0, msg.heartbeatSeq));
  }

  /**
   * InstallSnapshot at our term (Raft §7, Figure 13): a snapshot we already cover by commitIndex is
   * ignored; if our log holds the snapshot's last entry (same index and term) the suffix is kept and
   * only committed up to it; otherwise the whole log is discarded and replaced by the snapshot,
   * handed out in Ready.snapshot. The reply (sent after the Ready is persisted) carries matchIndex.
   */
  #handleInstallSnapshot(msg: InstallSnapshotMsg): void {
    assert.notEqual(this.#role, 'leader', 'two leaders in one term');
    if (this.#role !== 'follower') this.#becomeFollower(msg.term, msg.from);
    this.#leaderId = msg.from;
    this.#refusedLeader = null;
    this.#electionElapsed = 0;
    this.#time.observe(msg.term, msg.clusterTimeMs); // ≥ the snapshot's stamp: the leader's log holds it
    const meta = msg.snapshot;
    const commitIndex = this.#log.commitIndex();
    if (meta.index <= commitIndex) {
      // Stale or duplicate: our committed prefix (identical to the leader's, §5.4) already covers it.
      this.#send(this.#snapshotResponse(msg.from, meta.index, commitIndex));
      return;
    }
    if (this.#log.matchTerm(meta.index, meta.term)) {
      this.#log.commitTo(meta.index);
    } else {
      this.#log.restore(meta);
      this.#configs.restore(snapshotPoint(meta, this.#config.voters));
      this.#onMembershipChanged();
      this.#snapshot = { meta, data: msg.data };
      this.#pendingSnapshot = this.#snapshot;
    }
    this.#send(this.#snapshotResponse(msg.from, meta.index, meta.index));
  }

  #snapshotResponse(
    to: NodeId,
    snapshotIndex: number,
    matchIndex: number,
  ): InstallSnapshotResponseMsg {
    return {
      type: 'InstallSnapshotResponse',
      from: this.#id,
      to,
      term: this.#term,
      snapshotIndex: asIndex(snapshotIndex),
      matchIndex: asIndex(matchIndex),
    };
  }

  /** Reject with the §5.3 fast-backtracking hints (conflictIndex stays above our commitIndex). */
  #rejectAppend(msg: AppendEntriesMsg): void {
    const conflictTerm = this.#log.term(msg.prevLogIndex);
    if (conflictTerm === undefined) {
      this.#send(
        this.#appendResponse(msg.from, false, 0, this.#log.lastIndex() + 1, 0, msg.heartbeatSeq),
      );
      return;
    }
    const conflictIndex = this.#log.firstIndexOfTermAt(
      msg.prevLogIndex,
      this.#log.commitIndex() + 1,
    );
    this.#send(
      this.#appendResponse(msg.from, false, 0, conflictIndex, conflictTerm, msg.heartbeatSeq),
    );
  }

  #appendResponse(
    to: NodeId,
    success: boolean,
    matchIndex: number,
    conflictIndex: number,
    conflictTerm: number,
    heartbeatSeq: number,
  ): AppendEntriesResponseMsg {
    return {
      type: 'AppendEntriesResponse',
      from: this.#id,
      to,
      term: this.#term,
      success,
      matchIndex: asIndex(matchIndex),
      conflictIndex: asIndex(conflictIndex),
      conflictTerm: asTerm(conflictTerm),
      heartbeatSeq,
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Leader side of replication

  /** Append an entry created by this leader, stamped with its cluster time (docs/concepts.md). */
  #appendOwn(type: Entry['type'], data: Uint8Array): Entry {
    const entry: Entry = {
      term: this.#term,
      index: asIndex(this.#log.lastIndex() + 1),
      type,
      clusterTimeMs: this.#time.nowMs(),
      data,
    };
    this.#log.append(entry);
    this.#appendPending = true;
    if (type === 'config') this.#syncConfigs([entry]);
    if (this.#peers.length === 0) this.#maybeCommit();
    return entry;
  }

  #handleAppendResponse(msg: AppendEntriesResponseMsg): void {
    if (this.#role !== 'leader') return;
    // A match beyond our log cannot come from a correct follower of this term: drop it.
    if (msg.success && msg.matchIndex > this.#log.lastIndex()) return;
    const pr = this.#progress.get(msg.from);
    if (pr === undefined) return; // not a member (any more): nothing to track
    pr.lastAckTick = this.#tickCount;
    if (msg.heartbeatSeq > pr.ackedHeartbeatSeq) pr.ackedHeartbeatSeq = msg.heartbeatSeq;
    if (msg.success) this.#onAppendAccepted(msg, pr);
    else this.#onAppendRejected(msg, pr);
    this.#confirmReads();
  }

  #onAppendAccepted(msg: AppendEntriesResponseMsg, pr: Progress): void {
    if (pr.state === 'snapshot') {
      // Heartbeat answers while a snapshot is in flight: only a match covering it ends the wait.
      if (pr.maybeUpdate(msg.matchIndex)) this.#onMatchRaised(msg.from, pr);
      if (pr.matchIndex < pr.pendingSnapshotIndex) return;
      // The follower's log matches ours up to matchIndex (covering the snapshot): stream from there.
      pr.becomeReplicate();
      this.#sendAppends(msg.from, pr);
      return;
    }
    if (pr.maybeUpdate(msg.matchIndex)) {
      pr.matchSeq = msg.heartbeatSeq;
      if (pr.state === 'probe') pr.becomeReplicate();
      this.#onMatchRaised(msg.from, pr);
    } else if (pr.state === 'probe') {
      pr.probeSent = false;
    } else if (msg.heartbeatSeq > pr.lastEntriesSeq && pr.matchIndex < pr.nextIndex - 1) {
      // The follower answered a message sent after our last entries yet lacks them: they were lost.
      pr.becomeProbe(pr.matchIndex + 1);
    }
    this.#sendAppends(msg.from, pr);
  }

  /** matchIndex of `peer` rose: commit, finish a transfer, and tell it a commit it can now verify. */
  #onMatchRaised(peer: NodeId, pr: Progress): void {
    this.#maybeCommit();
    if (this.#transferTarget === peer && pr.matchIndex === this.#log.lastIndex()) {
      this.#sendTimeoutNow(peer);
    }
    // The follower can now learn a commit index it could not verify before: notify at next ready().
    if (Math.min(this.#log.commitIndex(), pr.matchIndex) > pr.commitSentIndex) {
      this.#noteCommitUntold();
    }
  }

  /**
   * Answer to our InstallSnapshot (Raft §7): record the match; the answer to the pending send (or any
   * match covering it) moves the follower to `replicate` from matchIndex + 1 when the snapshot is
   * covered, else back to `probe`.
   */
  #handleSnapshotResponse(msg: InstallSnapshotResponseMsg): void {
    if (this.#role !== 'leader') return;
    if (msg.matchIndex > this.#log.lastIndex()) return; // cannot come from a correct follower of this term
    const pr = this.#progress.get(msg.from);
    if (pr === undefined) return; // not a member (any more)
    pr.lastAckTick = this.#tickCount;
    if (pr.maybeUpdate(msg.matchIndex)) this.#onMatchRaised(msg.from, pr);
    const answersPending =
      msg.snapshotIndex === pr.pendingSnapshotIndex || pr.matchIndex >= pr.pendingSnapshotIndex;
    if (pr.state !== 'snapshot' || !answersPending) return;
    if (msg.matchIndex >= msg.snapshotIndex) {
      // Installed (or already covered): the follower matches us up to matchIndex — stream from there.
      pr.becomeReplicate();
    } else {
      pr.becomeProbe(pr.nextIndex); // not installed (e.g. stale-term receiver): probe, which resends
    }
    this.#sendAppends(msg.from, pr);
  }

  /** §5.3 fast backtracking from conflictIndex/conflictTerm; stale rejections are ignored. */
  #onAppendRejected(msg: AppendEntriesResponseMsg, pr: Progress): void {
    if (pr.state === 'snapshot') return; // an answer to a message sent before the snapshot: stale
    if (msg.heartbeatSeq < pr.rejectFloorSeq) return;
    this.#checkLogShrank(msg, pr);
    let nextIndex: number = msg.conflictIndex;
    if (msg.conflictTerm > 0) {
      const last = this.#log.lastIndexOfTerm(msg.conflictTerm, pr.nextIndex - 1, pr.matchIndex);
      if (last !== null) nextIndex = last + 1;
    }
    pr.becomeProbe(Math.min(nextIndex, pr.nextIndex, this.#log.lastIndex() + 1));
    pr.rejectFloorSeq = this.#heartbeatSeq + 1;
    this.#sendAppends(msg.from, pr);
  }

  /**
   * A follower answering a message sent after its last acknowledgement with a log that ends below its
   * recorded matchIndex has lost data (wiped disk). Probing is clamped above matchIndex, so without a
   * reset the leader would never send it the entries it lost: forget the match (it counts as lagging),
   * probe from its real log end, and warn the runtime (Ready.warnings).
   */
  #checkLogShrank(msg: AppendEntriesResponseMsg, pr: Progress): void {
    const followerLastIndex = msg.conflictIndex - 1;
    if (msg.conflictTerm !== 0 || followerLastIndex >= pr.matchIndex) return;
    if (msg.heartbeatSeq <= pr.matchSeq) return; // answers a message older than the acknowledgement
    if (this.#config.unsafe?.keepMatchIndexOnShorterLog === true) return;
    this.#warnings.push({
      type: 'follower_log_shrank',
      peer: msg.from,
      recordedMatchIndex: asIndex(pr.matchIndex),
      followerLastIndex: asIndex(followerLastIndex),
    });
    pr.resetMatch();
  }

  /** Send AppendEntries to `peer` while flow control allows and entries remain (probe: one). */
  #sendAppends(peer: NodeId, pr: Progress): boolean {
    let sent = false;
    while (this.#sendAppend(peer, pr)) {
      sent = true;
      if (pr.state === 'probe') break;
    }
    return sent;
  }

  /** One AppendEntries from pr.nextIndex, bounded by entriesPerMessageMax / bytesPerMessageMax. */
  #sendAppend(peer: NodeId, pr: Progress): boolean {
    if (pr.isPaused()) return false;
    const lastIndex = this.#log.lastIndex();
    if (pr.state === 'replicate' && pr.nextIndex > lastIndex) return false;
    const prevLogIndex = pr.nextIndex - 1;
    const prevLogTerm = this.#log.term(prevLogIndex);
    // Entries before our firstIndex are compacted away: the follower needs the snapshot (§7).
    if (pr.nextIndex < this.#log.firstIndex() || prevLogTerm === undefined)
      return this.#sendSnapshot(peer, pr);
    const entries =
      pr.nextIndex > lastIndex
        ? []
        : this.#log.slice(
            pr.nextIndex,
            this.#config.entriesPerMessageMax,
            this.#config.bytesPerMessageMax,
          );
    const last = prevLogIndex + entries.length;
    this.#sendAppendMsg(peer, pr, asIndex(prevLogIndex), prevLogTerm, entries);
    if (entries.length > 0) pr.lastEntriesSeq = this.#heartbeatSeq;
    pr.onSent(last, entries.length > 0);
    return true;
  }

  /**
   * Heartbeat: an empty AppendEntries at prevLogIndex = matchIndex (verified, so the follower can
   * safely commit up to min(leaderCommit, matchIndex)). Falls back to index 0 when matchIndex's term
   * is compacted away.
   */
  #sendHeartbeat(peer: NodeId, pr: Progress): void {
    let prevLogIndex = pr.matchIndex;
    let prevLogTerm = this.#log.term(prevLogIndex);
    if (prevLogTerm === undefined) {
      prevLogIndex = 0;
      prevLogTerm = asTerm(0);
    }
    this.#sendAppendMsg(peer, pr, asIndex(prevLogIndex), prevLogTerm, []);
  }

  #sendAppendMsg(
    peer: NodeId,
    pr: Progress,
    prevLogIndex: LogIndex,
    prevLogTerm: Term,
    entries: readonly Entry[],
  ): void {
    const leaderCommit = this.#log.commitIndex();
    this.#heartbeatSeq++;
    this.#send({
      type: 'AppendEntries',
      from: this.#id,
      to: peer,
      term: this.#term,
      prevLogIndex,
      prevLogTerm,
      entries,
      leaderCommit,
      clusterTimeMs: this.#time.nowMs(),
      heartbeatSeq: this.#heartbeatSeq,
    });
    pr.lastSentSeq = this.#heartbeatSeq;
    pr.commitSentIndex = Math.max(
      pr.commitSentIndex,
      Math.min(leaderCommit, prevLogIndex + entries.length),
    );
  }

  /**
   * InstallSnapshot of our newest snapshot to `peer` (Raft §7); `pr` goes to `snapshot` state, so
   * nothing else but heartbeats is sent until the answer or the retry timeout. False if this node
   * holds no snapshot bytes (restarted without them: it cannot catch the follower up yet).
   */
  #sendSnapshot(peer: NodeId, pr: Progress): boolean {
    const snapshot = this.#snapshot;
    if (snapshot === null) return false;
    assert.ok(
      snapshot.meta.index >= this.#log.snapshotIndex(),
      'snapshot covers the compacted prefix',
    );
    this.#send({
      type: 'InstallSnapshot',
      from: this.#id,
      to: peer,
      term: this.#term,
      snapshot: snapshot.meta,
      data: snapshot.data,
      clusterTimeMs: this.#time.nowMs(),
    });
    pr.becomeSnapshot(snapshot.meta.index, this.#tickCount);
    // Rejections of AppendEntries sent before this are stale once the snapshot lands.
    pr.rejectFloorSeq = this.#heartbeatSeq + 1;
    return true;
  }

  #sendTimeoutNow(peer: NodeId): void {
    this.#send({ type: 'TimeoutNow', from: this.#id, to: peer, term: this.#term });
  }

  /**
   * §5.3/§5.4.2: commit the highest index stored on a majority of the voters in effect (self counted
   * up to what was persisted, and only if it is a voter — §4.2.2), but only if it is of the current term — unless the UNSAFE variant is on.
   */
  #maybeCommit(): void {
    const matches: number[] = [];
    for (const voter of this.#voters) {
      matches.push(
        voter === this.#id
          ? Math.min(this.#log.persistedIndex(), this.#log.lastIndex())
          : this.#progress.get(voter)!.matchIndex,
      );
    }
    if (matches.length === 0) return;
    const index = quorumValue(matches);
    if (index <= this.#log.commitIndex()) return;
    const currentTerm = this.#log.term(index) === this.#term;
    if (!currentTerm && this.#config.unsafe?.commitPreviousTermByCounting !== true) return;
    const wasCommittedInTerm = this.#committedInTerm();
    this.#log.commitTo(index);
    if (this.#peers.length > 0) this.#noteCommitUntold();
    if (!wasCommittedInTerm && this.#committedInTerm()) {
      // §6.4: reads that arrived before the first commit of this term get today's commitIndex.
      if (this.#reads.admitWaiting(this.#log.commitIndex(), this.#heartbeatSeq + 1) > 0) {
        this.#readBroadcastPending = true;
        this.#confirmReads();
      }
    }
  }

  #committedInTerm(): boolean {
    return this.#log.term(this.#log.commitIndex()) === this.#term;
  }

  /** §6.4: release reads whose heartbeatSeq a majority (self included) has echoed. */
  #confirmReads(): void {
    if (this.#reads.size() === 0) return;
    const acked: number[] = [];
    for (const voter of this.#voters) {
      acked.push(
        voter === this.#id ? Number.MAX_SAFE_INTEGER : this.#progress.get(voter)!.ackedHeartbeatSeq,
      );
    }
    if (acked.length === 0) return;
    for (const rs of this.#reads.confirm(quorumValue(acked))) this.#readStates.push(rs);
  }

  /**
   * Deferred broadcasts, run at the start of ready(): new entries, read heartbeats, and commit
   * notices once due (CoreConfig.commitNoticeDelayTicks); a pending notice that every follower got on an
   * append meanwhile is dropped.
   */
  #flushDeferred(): void {
    if (this.#role !== 'leader') return;
    const readSeq = this.#readBroadcastPending ? this.#reads.maxPendingSeq() : 0;
    let untold = false;
    for (const peer of this.#peers) {
      const pr = this.#progress.get(peer)!;
      if (this.#appendPending) this.#sendAppends(peer, pr);
      const commitKnown = Math.min(this.#log.commitIndex(), pr.matchIndex);
      const needsCommit = this.#commitNoticeDue && commitKnown > pr.commitSentIndex;
      if (needsCommit || pr.lastSentSeq < readSeq) this.#sendHeartbeat(peer, pr);
      if (commitKnown > pr.commitSentIndex) untold = true;
    }
    this.#appendPending = false;
    if (this.#commitNoticeDue || !untold) this.#clearCommitNotice();
    this.#readBroadcastPending = false;
  }

  /**
   * A follower may now learn a higher commit index: tell it on the next AppendEntries, or by a
   * notice once CoreConfig.commitNoticeDelayTicks passed (at once when 0).
   */
  #noteCommitUntold(): void {
    this.#commitNoticePending = true;
    if ((this.#config.commitNoticeDelayTicks ?? 0) === 0) this.#commitNoticeDue = true;
  }

  #clearCommitNotice(): void {
    this.#commitNoticePending = false;
    this.#commitNoticeWaitTicks = 0;
    this.#commitNoticeDue = false;
  }

  #send(msg: Message): void {
    this.#messages.push(msg);
  }
}

/** Only a leader sends AppendEntries and InstallSnapshot (§5.3, §7). */
function isFromLeader(msg: Message): boolean {
  return msg.type === 'AppendEntries' || msg.type === 'InstallSnapshot';
}

/**
 * May `msg` leave before the Ready that produced it is durable (types.ts Ready, §10.2.1)? Leader
 * traffic (AppendEntries, InstallSnapshot, TimeoutNow) and refusals that carry only the durable
 * term; never a granted vote, an acknowledgement of entries or a snapshot, or a campaign message.
 */
function isSendableBeforePersist(msg: Message): boolean {
  switch (msg.type) {
    case 'AppendEntries':
    case 'InstallSnapshot':
    case 'TimeoutNow':
      return true;
    case 'AppendEntriesResponse':
      return !msg.success;
    case 'InstallSnapshotResponse':
      return msg.matchIndex === 0;
    case 'PreVoteResponse':
    case 'RequestVoteResponse':
      return !msg.granted;
    case 'PreVote':
    case 'RequestVote':
      return false;
  }
}

function sameHardState(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.votedFor === b.votedFor && a.commitIndex === b.commitIndex;
}

function sameSoftState(a: SoftState, b: SoftState): boolean {
  return a.role === b.role && a.leaderId === b.leaderId && a.term === b.term;
}

function sameConfiguration(a: ConfigurationState, b: ConfigurationState): boolean {
  return (
    a.configIndex === b.configIndex &&
    a.committed === b.committed &&
    sameMembership(a.membership, b.membership)
  );
}

/** The membership a snapshot carries (SnapshotMeta.membership), else the bootstrap one. */
function snapshotPoint(meta: SnapshotMeta, bootstrapVoters: readonly NodeId[]): ConfigPoint {
  if (meta.membership === undefined) return bootstrapPoint(bootstrapVoters);
  return { index: meta.configIndex ?? asIndex(0), term: asTerm(0), membership: meta.membership };
}

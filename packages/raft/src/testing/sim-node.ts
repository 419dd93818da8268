/**
 * One simulated node: a RaftCore, its drifting clock, its storage, its ticker and the runtime loop
 * that processes Ready batches exactly as the real runtime must (types.ts `Ready`):
 * persist + fsync, then send, then apply, then serve reads, then advance — except that a Ready with
 * `mustPersistBeforeSend` false (a leader, dissertation §10.2.1) sends its messages as soon as its
 * writes are staged, before the fsync (with a slow disk, responses can arrive while it runs).
 *
 * Crashes can strike between events or at a chosen point inside Ready processing: before the fsync
 * (the batch's writes are lost — for a leader that already sent, the messages are out), right after
 * a leader sent entries it has not synced yet, after the fsync but before sending, or after sending
 * but before applying. A restart builds a fresh RaftCore from the durable state only.
 */
import assert from 'node:assert/strict';
import type {
  ConfigurationState,
  MembershipChange,
  MembershipChangeResult,
} from '../core/membership.js';
import type { ProgressView } from '../core/raft-core.js';
import { RaftCore } from '../core/raft-core.js';
import type {
  CoreConfig,
  Entry,
  Message,
  NodeId,
  ProposeResult,
  ReadFailure,
  Ready,
  SoftState,
  Term,
} from '../core/types.js';
import { asIndex, asTerm } from '../core/types.js';
import type { SafetyChecker } from './checkers.js';
import { SimViolation } from './checkers.js';
import { describeEntry, sameEntry } from './entry-identity.js';
import type { EventQueue } from './event-queue.js';
import type { SimRandom } from './prng.js';
import type { SimClock } from './sim-clock.js';
import { SimStorage } from './sim-storage.js';

/**
 * Where inside Ready processing a scheduled crash strikes: before the fsync (a leader that sends
 * first has sent), after it, after sending, after sending a Ready that grants a vote (the moment a
 * forgotten vote would matter, Figure 2), or after the fsync of a Ready that advances the commit
 * index (before followers hear of it), or after the fsync of the Ready in which the node became
 * leader (before its first AppendEntries leave), or right after a leader sent AppendEntries for
 * entries it has staged but not synced (`afterEarlySend`, dissertation §10.2.1: the followers may
 * hold — and commit — entries the leader forgets). The three "after the fsync" points also lose a
 * leader's early messages (still in the dying process's send buffers), so they model "durable but
 * not sent" as before.
 */
export type CrashPoint =
  | 'beforeFsync'
  | 'afterFsync'
  | 'afterSend'
  | 'afterVoteGranted'
  | 'afterCommitAdvance'
  | 'afterElected'
  | 'afterEarlySend';

/** Messages a paused node buffers; later ones are dropped (a full socket buffer). */
export const BACKLOG_MESSAGES_MAX = 10_000;

/** Bound on Ready batches processed after one input; more means the core never settles (a bug). */
export const READY_ROUNDS_MAX = 64;

/** What a node needs from the simulation around it. */
export interface SimNodeHost {
  readonly queue: EventQueue;
  readonly checker: SafetyChecker;
  send(msg: Message): void;
  /** `entry` was applied on `node` (after the checker accepted it). */
  onApplied(node: SimNode, entry: Entry): void;
  /** A ReadIndex read completed on `node`, observing the state applied up to `observedIndex`. */
  onReadServed(node: SimNode, requestId: number, observedIndex: number): void;
  onReadFailed(node: SimNode, failure: ReadFailure): void;
  onCrashed(node: SimNode): void;
  /** Role, term or known leader changed (for traces). */
  onSoftState(node: SimNode, ss: SoftState): void;
  /** The membership in effect on `node` changed (Ready.configuration, dissertation §4.1). */
  onConfiguration(node: SimNode, cs: ConfigurationState): void;
}

/** A node of the simulated cluster. All methods are synchronous; none may be called re-entrantly. */
export class SimNode {
  readonly id: NodeId;
  readonly clock: SimClock;
  readonly storage = new SimStorage();
  readonly #host: SimNodeHost;
  /** Replaced by `wipe` (a wiped node rejoins with no bootstrap voters, as `--join` does). */
  #config: CoreConfig;
  readonly #tickMs: number;
  #core: RaftCore | null = null;
  /** Bumped at every crash; events of an earlier incarnation are ignored. */
  #incarnation = 0;
  /** Highest index applied to this incarnation's state machine (0 after a restart). */
  #applied = 0;
  /** ReadIndex answers waiting for `#applied` to reach their index: requestId → index. */
  readonly #pendingReads = new Map<number, number>();
  #lastSoftState: SoftState | null = null;
  /** Core's lastIndex after the previous input: a leader's entries beyond it were stamped just now. */
  #lastIndexSeen = 0;
  #pausedUntilMs = 0;
  #diskStallUntilMs = 0;
  #backlog: Message[] = [];
  #readyToken = 0;
  #inFlightComplete: (() => void) | null = null;
  /** Slow-disk mode: a Ready is staged and its fsync has not completed yet. */
  #readyInFlight = false;
  readonly #fsyncMsMax: number;
  readonly #random: SimRandom;
  /** Readies whose messages left before their fsync (Ready.mustPersistBeforeSend false). */
  readonly #sentEarly = new WeakSet<Ready>();
  /** A crash armed to strike at the next Ready batch. */
  pendingCrash: CrashPoint | null = null;
  crashes = 0;
  /** Readies whose messages left before their fsync (§10.2.1). */
  earlySends = 0;
  /** Crashes that struck after such a Ready's messages left and before its fsync. */
  crashesBetweenSendAndFsync = 0;

  /**
   * @param tickMs length of one core tick on this node's own clock (ms).
   * @param fsyncMsMax 0 for a synchronous disk; else each fsync takes uniform [0, fsyncMsMax] ms.
   * @param random the node's stream for disk latency.
   */
  constructor(
    host: SimNodeHost,
    config: CoreConfig,
    clock: SimClock,
    tickMs: number,
    fsyncMsMax: number,
    random: SimRandom,
  ) {
    this.id = config.id;
    this.#fsyncMsMax = fsyncMsMax;
    this.#random = random;
    this.#host = host;
    this.#config = config;
    this.clock = clock;
    this.#tickMs = tickMs;
  }

  /** CoreConfig.voters this node starts from when its log holds no config entry. */
  get bootstrapVoters(): readonly NodeId[] {
    return this.#config.voters;
  }

  get up(): boolean {
    return this.#core !== null;
  }

  get incarnation(): number {
    return this.#incarnation;
  }

  get applied(): number {
    return this.#applied;
  }

  /** The role/term/leader of the running core, or null while crashed. */
  softState(): SoftState | null {
    return this.#core?.softState() ?? null;
  }

  /** Start (or restart) from durable storage, with an optional term bump (fault injection). */
  start(random: SimRandom, termBump = 0): void {
    assert.ok(this.#core === null, `${this.id} started twice`);
    if (termBump > 0) {
      const hs = this.storage.hardState;
      this.storage.forceHardState({
        term: asTerm(hs.term + termBump),
        votedFor: null,
        commitIndex: hs.commitIndex,
      });
    }
    const initial = this.storage.initialState();
    this.#core = new RaftCore(this.#config, initial, this.clock, random);
    this.#applied = 0;
    this.#lastIndexSeen = this.#core.lastIndex();
    this.#host.checker.observeRestart(this.id, initial.hardState.commitIndex);
    const inc = this.#incarnation;
    this.#host.queue.after(random.between(0, this.clock.realDurationMs(this.#tickMs)), () =>
      this.#tick(inc),
    );
    this.#afterInput();
  }

  /** Crash now: lose unsynced writes, the state machine and every pending request. */
  crash(): void {
    if (this.#core === null) return;
    this.#core = null;
    this.#pausedUntilMs = 0;
    this.#backlog = [];
    this.#incarnation++;
    this.#lastSoftState = null;
    this.#readyInFlight = false;
    this.#inFlightComplete = null;
    this.crashes++;
    this.pendingCrash = null;
    this.storage.dropUnsynced();
    this.#pendingReads.clear();
    this.#host.checker.observeCrash(this.id);
    this.#host.onCrashed(this);
  }

  /** A message arrives from the network (dropped while crashed). */
  deliver(msg: Message): void {
    if (this.#core === null) return;
    if (this.paused) {
      if (this.#backlog.length < BACKLOG_MESSAGES_MAX) this.#backlog.push(msg);
      return;
    }
    this.#core.step(msg);
    this.#afterInput();
  }

  /** The transport saw `peer` refuse a connection (RaftCore.peerRefused); lost while crashed or paused. */
  peerRefused(peer: NodeId): void {
    if (this.#core === null || this.paused) return;
    this.#core.peerRefused(peer);
    this.#afterInput();
  }

  /** Propose a command; null while crashed. */
  propose(data: Uint8Array): ProposeResult | null {
    if (this.#core === null || this.paused) return null;
    const result = this.#core.propose(data);
    this.#afterInput();
    return result;
  }

  /** Ask for a ReadIndex read point; false while crashed. */
  readIndex(requestId: number): boolean {
    if (this.#core === null || this.paused) return false;
    this.#core.readIndex(requestId);
    this.#afterInput();
    return true;
  }

  /** Propose a membership change (dissertation §4.1); null while crashed or paused. */
  changeMembership(change: MembershipChange): MembershipChangeResult | null {
    if (this.#core === null || this.paused) return null;
    const result = this.#core.proposeMembershipChange(change);
    this.#afterInput();
    return result;
  }

  /** The membership in effect on the running core; null while crashed. */
  configuration(): ConfigurationState | null {
    return this.#core?.configuration() ?? null;
  }

  /** Leader: its view of each member's replication; empty otherwise. */
  progress(): ReadonlyMap<NodeId, ProgressView> {
    return this.#core?.progress() ?? new Map();
  }

  /** Commit index of the running core (0 while crashed). */
  commitIndex(): number {
    return this.#core?.hardState().commitIndex ?? 0;
  }

  /** Last index of the running core's log (0 while crashed). */
  lastIndex(): number {
    return this.#core?.lastIndex() ?? 0;
  }

  /**
   * Crash, erase the disk and start again empty and outside every membership (bootstrap voters
   * empty), as an operator does before re-adding a removed node with `--join`.
   */
  wipe(random: SimRandom): void {
    this.crash();
    this.storage.wipe();
    this.#config = { ...this.#config, voters: [] };
    this.#host.checker.observeWipe(this.id);
    this.start(random);
  }

  /** Ask the core to hand leadership to `to` (ignored unless leader). */
  transferLeadership(to: NodeId): void {
    if (this.#core === null || this.paused) return;
    this.#core.transferLeadership(to);
    this.#afterInput();
  }

  #tick(inc: number): void {
    if (this.#core === null || inc !== this.#incarnation) return;
    if (!this.paused) {
      // A paused process misses its ticks (a Node.js interval does not catch up after a stall).
      this.#core.tick();
      this.#afterInput();
    }
    if (this.#core !== null && inc === this.#incarnation) {
      this.#host.queue.after(this.clock.realDurationMs(this.#tickMs), () => this.#tick(inc));
    }
  }

  /**
   * Process Ready batches, then run the per-step checks. With a synchronous disk every Ready is
   * handled at once; with a slow one (fsyncMsMax > 0) one Ready is in flight at a time and inputs keep
   * reaching the core while its fsync runs, as in the real runtime.
   */
  #afterInput(): void {
    this.#noteStamps();
    if (this.#readyInFlight) {
      // One Ready at a time: the next is taken when this one's fsync completes.
    } else if (this.#fsyncMsMax === 0 && this.#host.queue.nowMs >= this.#diskStallUntilMs) {
      let rounds = 0;
      while (this.#core !== null && this.#core.hasReady()) {
        assert.ok(
          ++rounds <= READY_ROUNDS_MAX,
          `${this.id}: core still has Ready after ${READY_ROUNDS_MAX} rounds`,
        );
        const core = this.#core;
        const rd = core.ready();
        if (!this.#stageReady(rd)) return;
        if (!this.#completeReady(core, rd)) return;
      }
    } else if (this.#core !== null && this.#core.hasReady()) {
      this.#startReady(this.#core);
    }
    const core = this.#core;
    if (core === null) return;
    this.#serveReads();
    try {
      core.checkInvariants();
    } catch (err) {
      throw new SimViolation(
        'core-invariant',
        `${this.id}: ${(err as Error).message}`,
        this.#host.queue.nowMs,
        {
          cause: err,
        },
      );
    }
    const ss = core.softState();
    const last = this.#lastSoftState;
    if (
      last === null ||
      last.role !== ss.role ||
      last.term !== ss.term ||
      last.leaderId !== ss.leaderId
    ) {
      this.#lastSoftState = ss;
      this.#host.onSoftState(this, ss);
    }
    // The core's log is the durable log plus what is staged for the fsync in flight.
    this.#host.checker.observeRole(this.id, ss.role, ss.term, this.storage.volatileView);
    this.#host.checker.observeCommitIndex(this.id, core.hardState().commitIndex);
  }

  /**
   * Report the entries the core appended as leader during the last input, with the sim (real) time
   * they were stamped at (the checker's cluster-time rate property, docs/concepts.md/§2). One input never
   * both appends as follower and as leader, so every index beyond the last one seen is ours.
   */
  #noteStamps(): void {
    const core = this.#core;
    if (core === null) return;
    const last = core.lastIndex();
    const ss = core.softState();
    if (ss.role === 'leader') {
      for (let i = this.#lastIndexSeen + 1; i <= last; i++) {
        this.#host.checker.observeStamped(asIndex(i), ss.term, this.#host.queue.nowMs);
      }
    }
    this.#lastIndexSeen = last;
  }

  /**
   * Slow disk: stage a Ready now (a leader's messages leave now, §10.2.1), finish it (fsync, send,
   * apply, advance) after the fsync latency.
   */
  #startReady(core: RaftCore): void {
    const rd = core.ready();
    if (!this.#stageReady(rd)) return;
    this.#readyInFlight = true;
    const inc = this.#incarnation;
    const nowMs = this.#host.queue.nowMs;
    const latencyMs = Math.max(
      this.#random.between(0, this.#fsyncMsMax),
      this.#diskStallUntilMs - nowMs,
    );
    const token = ++this.#readyToken;
    const complete = (): void => {
      if (inc !== this.#incarnation || token !== this.#readyToken || !this.#readyInFlight) return;
      if (this.paused) {
        this.#host.queue.at(this.#pausedUntilMs, complete);
        return;
      }
      this.#readyInFlight = false;
      this.#inFlightComplete = null;
      if (this.#completeReady(core, rd)) this.#afterInput();
    };
    this.#inFlightComplete = complete;
    this.#host.queue.after(latencyMs, complete);
  }

  /** True while the process is paused (SIGSTOP, GC, VM freeze): it handles no input at all. */
  get paused(): boolean {
    return this.#host.queue.nowMs < this.#pausedUntilMs;
  }

  /**
   * Pause the process until sim time `untilMs`: ticks are missed, arriving messages wait in the socket
   * buffer (up to BACKLOG_MESSAGES_MAX) and are handled in arrival order on resume, clients get no answer.
   */
  pause(untilMs: number): void {
    if (this.#core === null || untilMs <= this.#pausedUntilMs) return;
    this.#pausedUntilMs = untilMs;
    const inc = this.#incarnation;
    this.#host.queue.at(untilMs, () => {
      if (inc !== this.#incarnation || this.paused) return;
      const backlog = this.#backlog;
      this.#backlog = [];
      for (const msg of backlog) this.deliver(msg);
    });
  }

  /** End any pause or disk stall now (the liveness heal); buffered input and a waiting fsync proceed. */
  endStalls(): void {
    const nowMs = this.#host.queue.nowMs;
    this.#diskStallUntilMs = 0;
    const wasPaused = this.paused;
    this.#pausedUntilMs = Math.min(this.#pausedUntilMs, nowMs);
    if (wasPaused) {
      const backlog = this.#backlog;
      this.#backlog = [];
      for (const msg of backlog) this.#host.queue.after(0, () => this.deliver(msg));
    }
    const complete = this.#inFlightComplete;
    if (complete !== null)
      this.#host.queue.after(this.#random.between(0, this.#fsyncMsMax), complete);
  }

  /** Stall the disk until sim time `untilMs`: every fsync started before then completes no earlier. */
  stallDisk(untilMs: number): void {
    this.#diskStallUntilMs = Math.max(this.#diskStallUntilMs, untilMs);
  }

  /** The rest of one staged Ready, in the required order. Returns false if the node crashed part-way. */
  #completeReady(core: RaftCore, rd: Ready): boolean {
    if (this.pendingCrash === 'beforeFsync') {
      if (this.#sentEarly.has(rd)) this.crashesBetweenSendAndFsync++;
      this.crash();
      return false;
    }
    const strikesAfterFsync = this.#strikesAfterFsync(rd);
    this.#fsync(core, rd);
    if (strikesAfterFsync) {
      this.crash();
      return false;
    }
    if (!this.#sentEarly.has(rd)) this.#sendMessages(rd);
    if (
      this.pendingCrash === 'afterSend' ||
      (this.pendingCrash === 'afterVoteGranted' &&
        rd.messages.some((m) => m.type === 'RequestVoteResponse' && m.granted))
    ) {
      this.crash();
      return false;
    }
    this.#apply(core.softState().term, rd.committedEntries);
    for (const rs of rd.readStates) this.#pendingReads.set(rs.requestId, rs.index);
    for (const failure of rd.readFailures) this.#host.onReadFailed(this, failure);
    core.advance(rd);
    return true;
  }

  /**
   * Stage the Ready's writes; if the core allows it (types.ts Ready.mustPersistBeforeSend false),
   * send its messages now, before the fsync. Returns false if an `afterEarlySend` crash struck.
   */
  #stageReady(rd: Ready): boolean {
    // Reported when staged: the checker must know a leader's membership before any commit it counts.
    if (rd.configuration !== null) this.#host.onConfiguration(this, rd.configuration);
    this.#persist(rd);
    // A crash armed to strike right after this Ready's fsync also loses the messages: they were
    // still in the dying process's send buffers (so those points keep modelling "durable, not sent").
    if (rd.mustPersistBeforeSend || this.#strikesAfterFsync(rd)) return true;
    this.#sendMessages(rd);
    this.#sentEarly.add(rd);
    this.earlySends++;
    if (this.pendingCrash === 'afterEarlySend' && rd.entries.length > 0 && rd.messages.length > 0) {
      this.crashesBetweenSendAndFsync++;
      this.crash();
      return false;
    }
    return true;
  }

  /** Will the armed crash strike right after `rd`'s fsync (afterFsync / afterCommitAdvance / afterElected)? */
  #strikesAfterFsync(rd: Ready): boolean {
    return (
      this.pendingCrash === 'afterFsync' ||
      (this.pendingCrash === 'afterCommitAdvance' &&
        rd.hardState !== null &&
        rd.hardState.commitIndex > this.storage.hardState.commitIndex) ||
      (this.pendingCrash === 'afterElected' && rd.softState?.role === 'leader')
    );
  }

  #sendMessages(rd: Ready): void {
    for (const msg of rd.messages) {
      this.#assertReady(msg.from === this.id, `message from ${msg.from} in ${this.id}'s Ready`);
      this.#host.send(msg);
    }
  }

  #persist(rd: Ready): void {
    // The simulator never calls compact(), so no leader may ever send InstallSnapshot (types.ts Ready).
    this.#assertReady(
      rd.snapshot === null,
      `Ready.snapshot at ${rd.snapshot?.meta.index} though nothing was compacted`,
    );
    this.storage.stage(rd.hardState, rd.entries);
  }

  /** fsync, then the storage-side checks: log matching, no rewrite of committed entries, durable commit. */
  #fsync(core: RaftCore, rd: Ready): void {
    const commitBefore = this.storage.hardState.commitIndex;
    const first = rd.entries[0]?.index;
    const termsBefore: Term[] = [];
    if (first !== undefined) {
      for (let i = first; i <= Math.min(commitBefore, this.storage.lastIndex); i++)
        termsBefore.push(this.storage.termAt(i)!);
    }
    let firstWritten;
    try {
      firstWritten = this.storage.fsync();
    } catch (err) {
      throw new SimViolation(
        'ready-contract',
        `${this.id}: ${(err as Error).message}`,
        this.#host.queue.nowMs,
      );
    }
    const checker = this.#host.checker;
    const hs = this.storage.hardState;
    if (firstWritten !== null) {
      checker.observePersisted(this.id, this.storage, firstWritten);
      if (firstWritten <= commitBefore) {
        checker.observeRewrite(this.id, this.storage, firstWritten, commitBefore, termsBefore);
      }
    }
    this.#assertReady(
      hs.commitIndex <= this.storage.lastIndex,
      `durable commitIndex ${hs.commitIndex} beyond durable last index ${this.storage.lastIndex}`,
    );
    checker.observeDurableCommit(this.id, hs.commitIndex, this.storage, core.softState().term);
  }

  #apply(term: Term, entries: readonly Entry[]): void {
    const checker = this.#host.checker;
    for (const e of entries) {
      this.#assertReady(
        e.index <= this.storage.hardState.commitIndex,
        `applies ${describeEntry(e)} beyond its durable commitIndex ${this.storage.hardState.commitIndex}`,
      );
      const stored = this.storage.entryAt(e.index);
      this.#assertReady(
        stored !== undefined && sameEntry(stored, e),
        `applies ${describeEntry(e)} but its durable log holds ${describeEntry(stored)}`,
      );
      checker.observeApply(this.id, e, term, this.#applied);
      this.#applied = e.index;
      this.#host.onApplied(this, e);
    }
  }

  #serveReads(): void {
    if (this.#pendingReads.size === 0) return;
    for (const [requestId, index] of this.#pendingReads) {
      if (index > this.#applied) continue;
      this.#pendingReads.delete(requestId);
      this.#host.onReadServed(this, requestId, this.#applied);
    }
  }

  #assertReady(ok: boolean, message: string): void {
    if (!ok)
      throw new SimViolation('ready-contract', `${this.id}: ${message}`, this.#host.queue.nowMs);
  }
}

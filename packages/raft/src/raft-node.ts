/**
 * RaftNode: the runtime around the pure RaftCore — level storage, TCP transport, a ticker, the
 * Ready loop, proposal / read / transfer tracking — implementing RaftNodeApi (api.ts).
 *
 * Requests waiting on Raft are tracked beside it: proposals (proposal-tracker.ts), read barriers
 * (read-tracker.ts) and leadership transfers (transfer-tracker.ts). It logs through the Logger
 * interface (logger.ts).
 *
 * Ready loop (types.ts, etcd-io/raft's RawNode): persist snapshot + hardState + entries (one
 * fsynced write) → send messages → restore an installed snapshot → apply committedEntries → serve
 * readStates / fail readFailures → advance → maybe take a snapshot. When Ready.mustPersistBeforeSend
 * is false (a leader whose term and vote are durable) the messages go out first, so the leader's
 * fsync runs in parallel with the followers' (dissertation §10.2.1). It runs on setImmediate after
 * any input, never re-entrantly; inputs arriving while a write is in flight pile up in the core and
 * leave in the NEXT Ready as one write (group commit).
 *
 * Snapshots (Raft §7): every `snapshotEntries` applied entries, inside the loop (so no Ready is
 * processed meanwhile): StateMachine.snapshot() → storage.saveSnapshot (fsynced) → storage.compactLog
 * (entries ≤ applied − snapshotKeepEntries, older snapshots) → core.compact. The snapshot is durable
 * before any entry it covers is deleted, so a kill at any point leaves a recoverable disk (see
 * level-storage.ts). On open: restore the newest snapshot, then replay committed entries after it.
 */
import assert from 'node:assert/strict';
import { ClusterTimeEstimate } from './cluster-time-estimate.js';
import { RaftCore } from './core/raft-core.js';
import type {
  CoreConfig,
  Entry,
  LogIndex,
  Message,
  NodeId,
  Ready,
  Snapshot,
  SnapshotMeta,
  SoftState,
  Term,
} from './core/types.js';
import { asIndex } from './core/types.js';
import type { Applied, MemberStatus, RaftNodeApi, RaftStatus, RequestOptions } from './api.js';
import type { StateMachine } from './state-machine.js';
import type { RaftObserver } from './observer.js';
import { InvalidArgumentError, NotLeaderError, StoppedError } from './errors.js';
import { NOOP_LOGGER, type Logger } from './logger.js';
import { ProposalTracker } from './proposal-tracker.js';
import { ReadTracker } from './read-tracker.js';
import { TransferTracker } from './transfer-tracker.js';
import { cryptoSeed, SeededRandom } from './random.js';
import { resolveOptions, type RaftNodeOptions, type ResolvedOptions } from './raft-node-options.js';
import { LevelRaftStorage } from './storage/level-storage.js';
import type { RaftStorage } from './storage/raft-storage.js';
import { TcpTransport } from './transport/tcp-transport.js';
import type { Transport } from './transport/transport.js';

/** Monotonic clock of the runtime (core/types.ts Clock). */
const monotonicClock = { nowMs: (): number => performance.now() };

export class RaftNode<R> implements RaftNodeApi<R> {
  readonly id: NodeId;
  readonly #core: RaftCore;
  readonly #storage: RaftStorage;
  readonly #transport: Transport;
  readonly #sm: StateMachine<R>;
  readonly #o: ResolvedOptions;
  readonly #log: Logger;
  readonly #onFatalError: (err: unknown) => void;
  readonly #observer: RaftObserver;

  /**
   * Last entry applied to the state machine. Raised by #applyEntry and #restoreSnapshot;
   * snapshotIndex ≤ appliedIndex ≤ commitIndex.
   */
  #appliedIndex: LogIndex;
  /** Index of the newest snapshot on disk (taken or installed); 0 without one. */
  #snapshotIndex: LogIndex;
  readonly #proposals: ProposalTracker<R>;
  readonly #reads: ReadTracker;
  readonly #transfers = new TransferTracker();
  readonly #appliedListeners = new Set<(lastApplied: LogIndex) => void>();
  readonly #leaderListeners = new Set<(leaderId: NodeId | null, term: Term) => void>();
  /** Last soft state reported to listeners. */
  #softState: SoftState;
  /** Ticks since start (for lastContactMs). */
  #ticks = 0;
  #ticker: NodeJS.Timeout | null = null;
  #loopScheduled = false;
  #loopRunning = false;
  #loopDone: Promise<void> = Promise.resolve();
  #stopped = false;
  #stopPromise: Promise<void> | null = null;
  /** The reported cluster time (frozen while leaderless; cluster-time-estimate.ts). */
  readonly #clusterTime: ClusterTimeEstimate;
  /**
   * commitIndex of the last hard state made durable (docs/api.md: a node never reports a commit index it
   * could lose in a crash, so what /v1/cluster shows never goes down, across restarts too).
   */
  #durableCommitIndex: LogIndex;

  private constructor(
    options: RaftNodeOptions<R>,
    resolved: ResolvedOptions,
    parts: {
      core: RaftCore;
      storage: RaftStorage;
      transport: Transport;
      appliedIndex: LogIndex;
      snapshotIndex: LogIndex;
      durableCommitIndex: LogIndex;
      log: Logger;
    },
  ) {
    this.id = options.id;
    this.#o = resolved;
    this.#sm = options.stateMachine;
    this.#core = parts.core;
    this.#storage = parts.storage;
    this.#transport = parts.transport;
    this.#appliedIndex = parts.appliedIndex;
    this.#snapshotIndex = parts.snapshotIndex;
    this.#durableCommitIndex = parts.durableCommitIndex;
    this.#clusterTime = new ClusterTimeEstimate(resolved.electionTimeoutTicks * resolved.tickMs);
    this.#log = parts.log;
    this.#proposals = new ProposalTracker(resolved.proposalsPendingMax);
    this.#reads = new ReadTracker(resolved.readsPendingMax);
    this.#onFatalError =
      options.onFatalError ??
      ((err) =>
        setImmediate(() => {
          throw err;
        }));
    this.#softState = this.#core.softState();
    this.#observer = options.observer ?? {};
  }

  /**
   * Opens storage (checking its identity), recovers the log, replays committed entries into the
   * state machine, starts the transport and the ticker.
   * Errors: InvalidArgumentError (bad options, names the field); StorageIdentityError (dataDir of
   * another cluster/node); Error with `cause` if the directory is locked or the address is in use.
   */
  static async open<R>(options: RaftNodeOptions<R>): Promise<RaftNode<R>> {
    const resolved = resolveOptions(options);
    const root = options.logger ?? NOOP_LOGGER;
    const log = root.child({ component: 'raft', nodeId: options.id });
    const storage =
      options.storage ??
      (await LevelRaftStorage.open({
        dataDir: options.dataDir!,
        clusterId: options.clusterId,
        nodeId: options.id,
        logger: root.child({ component: 'raft-storage', nodeId: options.id }),
      }));
    try {
      const initial = await storage.recover();
      const snapshotIndex = asIndex(initial.snapshot?.index ?? 0);
      if (initial.snapshot !== null) {
        assert.ok(initial.snapshotData !== undefined, 'recovered snapshot without its bytes');
        options.stateMachine.restore(initial.snapshotData);
      }
      const appliedIndex = replay(
        options.stateMachine,
        initial.entries,
        snapshotIndex,
        initial.hardState.commitIndex,
      );
      const seed = options.randomSeed ?? cryptoSeed();
      // The core hands out only entries after what the replay applied.
      const core = new RaftCore(
        coreConfig(options.id, resolved),
        { ...initial, appliedIndex },
        monotonicClock,
        new SeededRandom(seed),
      );
      const transport =
        options.transport ??
        new TcpTransport({
          id: options.id,
          clusterId: options.clusterId,
          peers: options.peers,
          listen: resolved.listen,
          logger: root.child({ component: 'raft-transport', nodeId: options.id }),
          ...(options.peerTls === undefined ? {} : { tls: options.peerTls }),
        });
      const node = new RaftNode(options, resolved, {
        core,
        storage,
        transport,
        appliedIndex,
        snapshotIndex,
        durableCommitIndex: initial.hardState.commitIndex,
        log,
      });
      await node.#start();
      log.info(
        {
          term: initial.hardState.term,
          commitIndex: initial.hardState.commitIndex,
          snapshotIndex,
          lastIndex: snapshotIndex + initial.entries.length,
          appliedIndex,
          seed,
        },
        'raft node started',
      );
      return node;
    } catch (err) {
      await storage.close();
      throw err;
    }
  }

  async #start(): Promise<void> {
    this.#transport.onMessage((msg) => this.#onMessage(msg));
    await this.#transport.start();
    this.#ticker = setInterval(() => this.#tick(), this.#o.tickMs);
    this.#schedule();
  }

  #onMessage(msg: Message): void {
    if (this.#stopped) return;
    this.#core.step(msg);
    this.#schedule();
  }

  #tick(): void {
    if (this.#stopped) return;
    this.#ticks++;
    this.#core.tick();
    this.#schedule();
  }

  /** Runs the Ready loop on the next turn unless it is queued or running (it re-checks on exit). */
  #schedule(): void {
    if (this.#loopScheduled || this.#loopRunning || this.#stopped) return;
    this.#loopScheduled = true;
    setImmediate(() => {
      this.#loopScheduled = false;
      this.#loopDone = this.#runLoop();
    });
  }

  async #runLoop(): Promise<void> {
    if (this.#loopRunning || this.#stopped) return;
    this.#loopRunning = true;
    try {
      while (!this.#stopped && this.#core.hasReady()) {
        await this.#handleReady(this.#core.ready());
        if (this.#appliedIndex - this.#snapshotIndex >= this.#o.snapshotEntries && !this.#stopped)
          await this.#takeSnapshot();
      }
    } catch (err) {
      this.#fatal(err);
    } finally {
      this.#loopRunning = false;
    }
  }

  /**
   * One Ready, in the order types.ts prescribes. A leader's messages leave before its own fsync when
   * the core allows it (Ready.mustPersistBeforeSend false, dissertation §10.2.1), so the leader's and
   * the followers' fsyncs overlap; everything else (apply, reads, advance) still waits for the write.
   */
  async #handleReady(ready: Ready): Promise<void> {
    if (ready.softState !== null) this.#onSoftState(ready.softState);
    if (!ready.mustPersistBeforeSend) this.#sendAll(ready.messages);
    if (ready.hardState !== null || ready.entries.length > 0 || ready.snapshot !== null) {
      const startMs = performance.now();
      await this.#storage.persist({
        hardState: ready.hardState,
        entries: ready.entries,
        snapshot: ready.snapshot,
      });
      if (this.#stopped) return;
      if (ready.hardState !== null)
        this.#durableCommitIndex = asIndex(
          Math.max(this.#durableCommitIndex, ready.hardState.commitIndex),
        );
      const durationMs = performance.now() - startMs;
      this.#callListener(() => this.#observer.persisted?.(durationMs, ready.entries.length));
    }
    if (ready.mustPersistBeforeSend) this.#sendAll(ready.messages);
    const appliedBefore = this.#appliedIndex;
    if (ready.snapshot !== null) this.#restoreSnapshot(ready.snapshot);
    for (const entry of ready.committedEntries) this.#applyEntry(entry);
    this.#reads.answered(ready.readStates, ready.readFailures);
    this.#reads.serve(this.#appliedIndex);
    this.#core.advance(ready);
    if (this.#appliedIndex !== appliedBefore) this.#notifyApplied();
  }

  #sendAll(messages: readonly Message[]): void {
    for (const msg of messages) this.#transport.send(msg);
  }

  /** Applies one committed entry (skipping those replayed on open) and settles its proposal. */
  #applyEntry(entry: Entry): void {
    if (entry.index <= this.#appliedIndex) return; // already replayed from disk on open
    assert.equal(
      entry.index,
      this.#appliedIndex + 1,
      'committed entries must be applied in order without gaps',
    );
    const result = this.#sm.apply({
      index: entry.index,
      term: entry.term,
      clusterTimeMs: entry.clusterTimeMs,
      type: entry.type,
      data: entry.data,
    });
    this.#appliedIndex = entry.index;
    this.#proposals.applied(entry, result, this.#softState.leaderId);
  }

  /**
   * A snapshot from the leader replaced our log (Ready.snapshot, already durable): restore the state
   * machine from it. Proposals at indices it covers cannot be matched to their entries any more:
   * they fail with TimeoutError (ProposalTracker.compacted).
   */
  #restoreSnapshot(snapshot: Snapshot): void {
    const meta = snapshot.meta;
    assert.ok(
      meta.index > this.#appliedIndex,
      'installed snapshot must be ahead of the state machine',
    );
    const startMs = performance.now();
    this.#sm.restore(snapshot.data);
    const info = {
      index: meta.index,
      sizeBytes: snapshot.data.byteLength,
      durationMs: performance.now() - startMs,
    };
    this.#callListener(() => this.#observer.snapshotInstalled?.(info));
    this.#appliedIndex = meta.index;
    this.#snapshotIndex = meta.index;
    this.#proposals.compacted(meta.index);
    this.#log.info(
      { snapshotIndex: meta.index, term: meta.term, sizeBytes: snapshot.data.byteLength },
      'installed snapshot',
    );
  }

  /**
   * Local snapshot + compaction (Raft §7), in the crash-safe order of level-storage.ts: snapshot
   * durable first, then old entries deleted, then the core told. Runs inside the Ready loop, right
   * after advance(), so the core's appliedIndex equals ours.
   */
  async #takeSnapshot(): Promise<void> {
    const startMs = performance.now();
    const meta: SnapshotMeta = this.#core.snapshotMetaAt(this.#appliedIndex);
    const data = this.#sm.snapshot();
    await this.#storage.saveSnapshot({ meta, data });
    if (this.#stopped) return;
    const compactIndex = asIndex(Math.max(0, meta.index - this.#o.snapshotKeepEntries));
    await this.#storage.compactLog(compactIndex, meta.index);
    if (this.#stopped) return;
    this.#snapshotIndex = asIndex(Math.max(this.#snapshotIndex, meta.index));
    const used = this.#core.compact(meta, data, compactIndex);
    const info = {
      index: meta.index,
      sizeBytes: data.byteLength,
      durationMs: performance.now() - startMs,
    };
    this.#callListener(() => this.#observer.snapshotTaken?.(info));
    this.#log.info(
      { snapshotIndex: meta.index, compactIndex, sizeBytes: data.byteLength, used },
      'took snapshot',
    );
  }

  #onSoftState(next: SoftState): void {
    const previous = this.#softState;
    this.#softState = next;
    if (
      next.role === previous.role &&
      next.leaderId === previous.leaderId &&
      next.term === previous.term
    )
      return;
    if (next.role === 'leader' && previous.role !== 'leader')
      this.#log.info({ term: next.term }, 'became leader');
    else if (previous.role === 'leader' && next.role !== 'leader')
      this.#log.info({ term: next.term, leaderId: next.leaderId }, 'lost leadership');
    if (next.leaderId !== previous.leaderId)
      this.#log.info({ term: next.term, leaderId: next.leaderId }, 'leader changed');
    // Proposals stay pending on losing leadership: their entries may still commit under the next
    // leader; they settle when their index is applied or at their deadline.
    if (next.role !== 'leader') this.#reads.failUnconfirmed(next.leaderId);
    this.#transfers.leaderSeen(next.leaderId, next.role === 'leader');
    if (next.leaderId !== previous.leaderId || next.role !== previous.role) {
      for (const listener of this.#leaderListeners)
        this.#callListener(() => listener(next.leaderId, next.term));
    }
  }

  #notifyApplied(): void {
    const applied = this.#appliedIndex;
    for (const listener of this.#appliedListeners) this.#callListener(() => listener(applied));
  }

  #callListener(call: () => void): void {
    try {
      call();
    } catch (err) {
      this.#log.error({ err }, 'listener threw');
    }
  }

  /** See RaftNodeApi.propose. Rejects: NotLeaderError, TimeoutError, ResourceExhaustedError, StoppedError. */
  propose(data: Uint8Array, opts: RequestOptions = {}): Promise<Applied<R>> {
    if (this.#stopped) return Promise.reject(new StoppedError());
    const full = this.#proposals.full();
    if (full !== null) return Promise.reject(full);
    const result = this.#core.propose(data);
    if (!result.ok) {
      // While handing leadership over (§3.10) this node is still leader but accepts nothing; no
      // node can take the write right now, so no hint (the server answers 503 no_leader + Retry-After).
      if (result.reason === 'transferring')
        return Promise.reject(new NotLeaderError(null, 'leadership transfer in progress'));
      return Promise.reject(new NotLeaderError(result.leaderHint));
    }
    const applied = this.#proposals.track(
      result.index,
      result.term,
      this.id,
      opts.timeoutMs ?? this.#o.requestTimeoutMsDefault,
      opts.signal,
    );
    this.#schedule();
    return applied;
  }

  /**
   * See RaftNodeApi.readBarrier. Leader only: on a follower (or a candidate) it rejects at once with
   * NotLeaderError(leaderHint) — forward linearizable reads to the leader. Resolves with the read
   * index once this node applied it (ReadIndex, §6.4). Rejects: NotLeaderError (also if
   * leadership is lost before confirmation), TimeoutError, ResourceExhaustedError, StoppedError.
   */
  readBarrier(opts: RequestOptions = {}): Promise<LogIndex> {
    if (this.#stopped) return Promise.reject(new StoppedError());
    const soft = this.#core.softState();
    if (soft.role !== 'leader') return Promise.reject(new NotLeaderError(soft.leaderId));
    const full = this.#reads.full();
    if (full !== null) return Promise.reject(full);
    const read = this.#reads.start(opts.timeoutMs ?? this.#o.requestTimeoutMsDefault, opts.signal);
    this.#core.readIndex(read.requestId);
    this.#schedule();
    return read.promise;
  }

  /**
   * See RaftNodeApi.transferLeadership (§3.10). `to` defaults to the follower with the highest
   * matchIndex. Resolves when `to` is known as leader. Rejects: NotLeaderError (not leader, or
   * another node won), InvalidArgumentError (unknown `to`), TimeoutError (default deadline
   * 2 × electionTimeoutMs; the core gives up a transfer after an election timeout), StoppedError.
   */
  transferLeadership(to?: NodeId, opts: RequestOptions = {}): Promise<void> {
    if (this.#stopped) return Promise.reject(new StoppedError());
    const soft = this.#core.softState();
    if (soft.role !== 'leader') return Promise.reject(new NotLeaderError(soft.leaderId));
    if (to !== undefined && !this.#o.voters.includes(to))
      return Promise.reject(new InvalidArgumentError('to', `unknown node "${to}"`));
    if (to === this.id) return Promise.resolve();
    const target = to ?? this.#bestFollower();
    if (target === null)
      return Promise.reject(new InvalidArgumentError('to', 'no other voter to transfer to'));
    const transferred = this.#transfers.start(
      target,
      opts.timeoutMs ?? 2 * this.#o.electionTimeoutMs,
      opts.signal,
    );
    this.#log.info({ term: soft.term, target }, 'transferring leadership');
    this.#core.transferLeadership(target);
    this.#schedule();
    return transferred;
  }

  #bestFollower(): NodeId | null {
    let best: NodeId | null = null;
    let bestMatch = -1;
    for (const [id, p] of this.#core.progress()) {
      if (id !== this.id && p.matchIndex > bestMatch) {
        best = id;
        bestMatch = p.matchIndex;
      }
    }
    return best;
  }

  /** See RaftNodeApi.status. Cheap; safe to call often. */
  status(): RaftStatus {
    const soft = this.#core.softState();
    const progress = this.#core.progress();
    const members: MemberStatus[] = this.#o.voters.map((id) => {
      if (id === this.id) return { id, role: soft.role };
      const p = progress.get(id);
      if (soft.role === 'leader' && p !== undefined) {
        if (p.lastAckTick < 0) return { id, role: 'follower', matchIndex: p.matchIndex }; // no answer this term
        return {
          id,
          role: 'follower',
          matchIndex: p.matchIndex,
          lastContactMs: Math.max(0, this.#ticks - p.lastAckTick) * this.#o.tickMs,
        };
      }
      return { id, role: id === soft.leaderId ? 'leader' : 'unknown' };
    });
    return {
      id: this.id,
      role: soft.role,
      term: soft.term,
      leaderId: soft.leaderId,
      commitIndex: this.#durableCommitIndex,
      leaderCommitIndex: this.#core.leaderCommitIndex(),
      appliedIndex: this.#appliedIndex,
      lastLogIndex: this.#core.lastIndex(),
      clusterTimeMs: this.#clusterTime.read(
        this.#core.clusterTimeMs(),
        soft.role,
        soft.leaderId !== null,
        monotonicClock.nowMs(),
      ),
      members,
    };
  }

  /** Throws (assertion) if a runtime invariant is broken (tests call it); also checks the core's. */
  checkInvariants(): void {
    assert.ok(
      this.#appliedIndex <= this.#core.hardState().commitIndex,
      'appliedIndex ≤ commitIndex',
    );
    assert.ok(this.#snapshotIndex <= this.#appliedIndex, 'snapshotIndex ≤ appliedIndex');
    this.#proposals.checkInvariants(this.#appliedIndex);
    this.#reads.checkInvariants();
    this.#core.checkInvariants();
  }

  onApplied(listener: (lastApplied: LogIndex) => void): () => void {
    this.#appliedListeners.add(listener);
    return () => this.#appliedListeners.delete(listener);
  }

  onLeaderChange(listener: (leaderId: NodeId | null, term: Term) => void): () => void {
    this.#leaderListeners.add(listener);
    return () => this.#leaderListeners.delete(listener);
  }

  /** Storage (or the state machine) failed inside the Ready loop: Raft cannot go on safely. Stop, then report. */
  #fatal(err: unknown): void {
    this.#log.error({ err }, 'raft runtime failed; stopping node');
    void this.stop().finally(() => this.#onFatalError(err));
  }

  /** See RaftNodeApi.stop: stops ticker and transport, fails waiters with StoppedError, closes storage. */
  stop(): Promise<void> {
    if (this.#stopPromise !== null) return this.#stopPromise;
    this.#stopped = true;
    if (this.#ticker !== null) clearInterval(this.#ticker);
    const stopped = new StoppedError();
    this.#proposals.failAll(stopped);
    this.#reads.failAll(stopped);
    this.#transfers.failAll(stopped);
    this.#stopPromise = (async () => {
      await this.#transport.close();
      await this.#loopDone;
      await this.#storage.close();
      this.#log.info({ appliedIndex: this.#appliedIndex }, 'raft node stopped');
    })();
    return this.#stopPromise;
  }
}

/**
 * Applies the recovered entries (snapshotIndex, commitIndex] to a state machine already restored
 * to `snapshotIndex`; returns the applied index.
 */
function replay<R>(
  sm: StateMachine<R>,
  entries: readonly Entry[],
  snapshotIndex: LogIndex,
  commitIndex: LogIndex,
): LogIndex {
  let applied = snapshotIndex;
  for (const entry of entries) {
    if (entry.index > commitIndex) break;
    assert.equal(entry.index, applied + 1, 'replay must be contiguous after the snapshot');
    sm.apply({
      index: entry.index,
      term: entry.term,
      clusterTimeMs: entry.clusterTimeMs,
      type: entry.type,
      data: entry.data,
    });
    applied = entry.index;
  }
  return applied;
}

function coreConfig(id: NodeId, o: ResolvedOptions): CoreConfig {
  return {
    id,
    voters: o.voters,
    electionTimeoutTicks: o.electionTimeoutTicks,
    heartbeatTicks: o.heartbeatTicks,
    preVote: o.preVote,
    checkQuorum: o.checkQuorum,
    entriesPerMessageMax: o.entriesPerMessageMax,
    bytesPerMessageMax: o.bytesPerMessageMax,
    inflightMessagesMax: o.inflightMessagesMax,
  };
}

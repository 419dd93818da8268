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
 * Snapshots (Raft §7): every `snapshotEntries` applied entries. A state machine with
 * `snapshotSlices` is encoded beside the loop, slice by slice with a turn of the event loop between
 * slices (slice-driver.ts), applies held meanwhile (holdApplies), so Readies — heartbeats, votes,
 * replication — go on; one without it is encoded inside the loop in one step. Then, inside the loop
 * (no Ready processed meanwhile): storage.saveSnapshot (fsynced) → storage.compactLog (entries ≤
 * applied − snapshotKeepEntries, older snapshots) → core.compact. An encoding overtaken by a
 * snapshot installed from the leader is dropped. The snapshot is durable before any entry it covers
 * is deleted, so a kill at any point leaves a recoverable disk (see level-storage.ts). On open:
 * restore the newest snapshot, then replay committed entries after it.
 *
 * Membership (dissertation ch. 4, docs/operations.md): the bootstrap membership is recorded in the
 * data on first open and wins over `peers` afterwards (member-book.ts); `config` entries carry the
 * address book, so on every Ready.configuration the transport is pointed at exactly the members in
 * effect. A node that sees a committed membership without itself (after having been a member) was
 * removed: it tells its onRemoved listeners (the server exits). Data of a removed member refuses
 * to open (RemovedMemberError). A joining node (`join`) may replay the log of an earlier node of its
 * id, removal included: memberships before the one that admitted it (`admitted`) do not count, and
 * its data opens while the membership it has replicated so far does not name it yet.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { ClusterTimeEstimate } from './cluster-time-estimate.js';
import { CommitHeard } from './commit-heard.js';
import { LazyTicker } from './lazy-ticker.js';
import { RaftCore } from './core/raft-core.js';
import { runtimeCommitNoticeDelayTicks } from './core/config.js';
import type {
  CoreConfig,
  CoreWarning,
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
import { asIndex, asTerm } from './core/types.js';
import type {
  Applied,
  Leadership,
  MembershipRequest,
  MemberStatus,
  RaftNodeApi,
  RaftStatus,
  RequestOptions,
} from './api.js';
import type { StateMachine } from './state-machine.js';
import { driveSlices, joinSlices } from './slice-driver.js';
import type { RaftObserver } from './observer.js';
import {
  InvalidArgumentError,
  MembershipChangeError,
  NotLeaderError,
  RemovedMemberError,
  StoppedError,
  TimeoutError,
} from './errors.js';
import {
  isMember,
  type ConfigurationState,
  type MemberAddress,
  type MemberAddresses,
  type MembershipChangeResult,
  type Membership,
} from './core/membership.js';
import {
  bootstrapFromPeers,
  MemberBook,
  ownAddressDrift,
  peersDisagreement,
} from './member-book.js';
import { NOOP_LOGGER, type Logger } from './logger.js';
import { ProposalTracker } from './proposal-tracker.js';
import { ReadTracker } from './read-tracker.js';
import { TransferTracker } from './transfer-tracker.js';
import { cryptoSeed, SeededRandom } from './random.js';
import { resolveOptions, type RaftNodeOptions, type ResolvedOptions } from './raft-node-options.js';
import { LevelRaftStorage } from './storage/level-storage.js';
import type { RaftStorage } from './storage/raft-storage.js';
import type { PeerInfo } from './api.js';
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
  /** Size of that snapshot's state-machine bytes; 0 without one (RaftStatus.snapshotBytes). */
  #snapshotBytes: number;
  readonly #proposals: ProposalTracker<R>;
  readonly #reads: ReadTracker;
  readonly #transfers = new TransferTracker();
  readonly #appliedListeners = new Set<(lastApplied: LogIndex) => void>();
  readonly #leaderListeners = new Set<(leaderId: NodeId | null, term: Term) => void>();
  readonly #removedListeners = new Set<() => void>();
  /** Where members listen (member-book.ts); grows with every membership that takes effect. */
  readonly #book: MemberBook;
  /**
   * Index of the newest membership in effect here that included this node; null before any. With
   * `memberSinceIndex`, it tells this node's own membership from an earlier node's of the same id.
   */
  #memberAtIndex: LogIndex | null;
  /**
   * Memberships before this index belong to an earlier node of this id (a wiped node that rejoins
   * replays the log of its removal): they never make this node "removed". 0 without `join`; with
   * `join` infinite until `admitted()` gives the membership index that added this node.
   */
  #memberSinceIndex: number;
  /** Set once, when a committed membership without this node took effect (§4.2.2). */
  #removed = false;
  /** Peers seen (as leader) acknowledging entries; recorded durably (RaftStorage). */
  readonly #peersWithData: Set<NodeId>;
  /** Last soft state reported to listeners. */
  #softState: SoftState;
  /** Ticks handed to the core since start (for lastContactMs). */
  #ticks = 0;
  /** Outstanding holdApplies() holds; while > 0, #heldBack collects what would be applied. */
  #applyHolds = 0;
  /** Installed snapshots and committed entries that arrived while applies were held, in order. */
  #heldBack: (Snapshot | Entry)[] = [];
  /** True from the start of a local snapshot until it is saved or dropped. */
  #snapshotting = false;
  /** A snapshot encoded beside the loop, waiting for the loop to save it. */
  #encoded: { meta: SnapshotMeta; data: Uint8Array; startMs: number } | null = null;
  /** Aborts a sliced snapshot encoding on stop. */
  readonly #stopSignal = new AbortController();
  /** Runs the core's ticks when something is due, and before every input (lazy-ticker.ts). */
  readonly #ticker: LazyTicker;
  #loopScheduled = false;
  #loopRunning = false;
  #loopDone: Promise<void> = Promise.resolve();
  #stopped = false;
  #stopPromise: Promise<void> | null = null;
  /** The reported cluster time (frozen while leaderless; cluster-time-estimate.ts). */
  readonly #clusterTime: ClusterTimeEstimate;
  /**
   * commitIndex of the last hard state handed to storage (recovered at open): written with its
   * batch, or — a lone commit index — flushed within the storage's delay. What the node shows
   * (docs/api.md), so an acknowledged write's index is never above it.
   */
  #persistedCommitIndex: LogIndex;
  /** Commit indexes heard from leaders, by time: the readiness target (commit-heard.ts). */
  readonly #commitHeard: CommitHeard;
  /** The leader last heard, in which term, at which monotonic ms (#noteLeaderHeard). */
  #leaderHeard: { readonly id: NodeId; readonly term: Term; readonly atMs: number } | null = null;

  private constructor(
    options: RaftNodeOptions<R>,
    resolved: ResolvedOptions,
    parts: {
      core: RaftCore;
      storage: RaftStorage;
      transport: Transport;
      appliedIndex: LogIndex;
      snapshotIndex: LogIndex;
      snapshotBytes: number;
      durableCommitIndex: LogIndex;
      log: Logger;
      book: MemberBook;
      peersWithData: readonly NodeId[];
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
    this.#snapshotBytes = parts.snapshotBytes;
    this.#persistedCommitIndex = parts.durableCommitIndex;
    this.#clusterTime = new ClusterTimeEstimate(resolved.electionTimeoutTicks * resolved.tickMs);
    this.#commitHeard = new CommitHeard(resolved.readyLagMs);
    this.#ticker = new LazyTicker(
      resolved.tickMs,
      resolved.electionTimeoutTicks,
      monotonicClock.nowMs,
      {
        tick: () => this.#tick(),
        ticksUntilDue: () => this.#core.ticksUntilDue(),
        afterTimerTicks: () => {
          if (this.#core.hasReady()) this.#schedule();
        },
      },
    );
    this.#log = parts.log;
    this.#book = parts.book;
    this.#peersWithData = new Set(parts.peersWithData);
    const cs = this.#core.configuration();
    this.#memberAtIndex = isMember(cs.membership, options.id) ? cs.configIndex : null;
    this.#memberSinceIndex = options.join === true ? Infinity : 0;
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
      const bootstrap = await bootstrapMembership(storage, options, log);
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
        coreConfig(options.id, resolved, bootstrap.voters),
        { ...initial, appliedIndex },
        monotonicClock,
        new SeededRandom(seed),
      );
      const book = new MemberBook();
      const peers = startPeers(core.configuration(), options, bootstrap, book, log);
      const transport =
        options.transport ??
        new TcpTransport({
          id: options.id,
          clusterId: options.clusterId,
          peers,
          listen: resolved.listen,
          logger: root.child({ component: 'raft-transport', nodeId: options.id }),
          ...(options.peerTls === undefined ? {} : { tls: options.peerTls }),
          // Incoming snapshots are assembled on the data disk (transport/snapshot-receiver.ts).
          ...(options.dataDir === undefined
            ? {}
            : { snapshotDir: path.join(options.dataDir, 'snapshot-incoming') }),
        });
      const node = new RaftNode(options, resolved, {
        core,
        storage,
        transport,
        appliedIndex,
        snapshotIndex,
        snapshotBytes: initial.snapshotData?.byteLength ?? 0,
        durableCommitIndex: initial.hardState.commitIndex,
        log,
        book,
        peersWithData: await storage.readPeersWithData(),
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
    this.#transport.onPeerRefused?.((peer) => this.#onPeerRefused(peer));
    await this.#transport.start();
    this.#ticker.start();
    this.#schedule();
  }

  #onMessage(msg: Message): void {
    if (this.#stopped) return;
    this.#ticker.catchUp();
    this.#core.step(msg);
    if (msg.type === 'AppendEntries' || msg.type === 'InstallSnapshot') this.#noteLeaderHeard(msg);
    if (msg.type === 'AppendEntries' || msg.type === 'AppendEntriesResponse')
      this.#noteCommitHeard(msg.type === 'AppendEntries' ? msg.from : this.id, msg.term);
    this.#schedule();
  }

  /** The transport saw `peer` refuse a connection: a hint that its process died (RaftCore.peerRefused). */
  #onPeerRefused(peer: NodeId): void {
    if (this.#stopped) return;
    this.#ticker.catchUp();
    this.#core.peerRefused(peer);
    this.#schedule(); // the election may now be due sooner: rearm the ticker
  }

  /**
   * Records the commit index `leader` announced (or, when this node leads, committed) if `leader` is
   * the leader of `term` here and it is higher than any heard. Only real announcements count: the
   * index a node knows by itself before hearing its leader (0 when wiped) must not become an old
   * readiness target (commit-heard.ts).
   */
  #noteCommitHeard(leader: NodeId, term: Term): void {
    const index = this.#core.leaderCommitIndex();
    if (index <= this.#commitHeard.highest()) return;
    const soft = this.#core.softState();
    if (soft.leaderId === leader && soft.term === term)
      this.#commitHeard.heard(index, monotonicClock.nowMs());
  }

  /** Records when the leader of this node's term was last heard (RaftStatus.leaderHeardAgoMs). */
  #noteLeaderHeard(msg: { readonly from: NodeId; readonly term: Term }): void {
    const soft = this.#core.softState();
    if (soft.leaderId === msg.from && soft.term === msg.term)
      this.#leaderHeard = { id: msg.from, term: msg.term, atMs: monotonicClock.nowMs() };
  }

  /** See RaftStatus.leaderHeardAgoMs. */
  #leaderHeardAgoMs(soft: SoftState): number | null {
    if (soft.role === 'leader') return 0;
    const h = this.#leaderHeard;
    if (soft.leaderId === null || h === null || h.id !== soft.leaderId || h.term !== soft.term)
      return null;
    return Math.max(0, monotonicClock.nowMs() - h.atMs);
  }

  /** One core tick (the ticker decides when; lazy-ticker.ts). */
  #tick(): void {
    this.#ticks++;
    this.#core.tick();
  }

  /** Runs the Ready loop on the next turn unless it is queued or running (it re-checks on exit). */
  #schedule(): void {
    // Every input ends here: its effect may bring the core's next due tick forward.
    this.#ticker.rearm();
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
      while (!this.#stopped) {
        this.#applyHeldBack();
        const encoded = this.#encoded;
        // A snapshot installed from the leader but held back (a hold is still out) is already on
        // disk: the local one waits until it is applied, then is dropped as overtaken.
        if (encoded !== null && !this.#heldBack.some((item) => 'meta' in item)) {
          this.#encoded = null;
          await this.#saveSnapshot(encoded.meta, encoded.data, encoded.startMs);
          continue;
        }
        if (!this.#core.hasReady()) break;
        await this.#handleReady(this.#core.ready());
        if (this.#snapshotDue()) await this.#takeSnapshot();
      }
    } catch (err) {
      this.#fatal(err);
    } finally {
      this.#loopRunning = false;
      this.#ticker.rearm(); // advance() may have committed: a commit notice may be due sooner
    }
  }

  /**
   * One Ready, in the order types.ts prescribes. A leader's messages leave before its own fsync when
   * the core allows it (Ready.mustPersistBeforeSend false, dissertation §10.2.1), so the leader's and
   * the followers' fsyncs overlap; everything else (apply, reads, advance) still waits for the write.
   */
  async #handleReady(ready: Ready): Promise<void> {
    if (ready.softState !== null) this.#onSoftState(ready.softState);
    // Before sending: this Ready's messages may go to a member the new membership just added.
    if (ready.configuration !== null) this.#onConfiguration(ready.configuration);
    for (const w of ready.warnings) this.#onWarning(w);
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
        this.#persistedCommitIndex = asIndex(
          Math.max(this.#persistedCommitIndex, ready.hardState.commitIndex),
        );
      const durationMs = performance.now() - startMs;
      this.#callListener(() => this.#observer.persisted?.(durationMs, ready.entries.length));
    }
    if (ready.mustPersistBeforeSend) this.#sendAll(ready.messages);
    const appliedBefore = this.#appliedIndex;
    // A hold released while this Ready was being written leaves older items queued: they go first.
    if (this.#applyHolds === 0) this.#drainHeldBack();
    if (this.#applyHolds > 0) {
      if (ready.snapshot !== null) this.#heldBack.push(ready.snapshot);
      for (const entry of ready.committedEntries) this.#heldBack.push(entry);
    } else {
      if (ready.snapshot !== null) this.#restoreSnapshot(ready.snapshot);
      for (const entry of ready.committedEntries) this.#applyEntry(entry);
    }
    this.#reads.answered(ready.readStates, ready.readFailures);
    this.#reads.serve(this.#appliedIndex);
    this.#core.advance(ready);
    this.#noteCommitHeard(this.id, this.#softState.term); // a leader alone commits on its fsync
    if (this.#appliedIndex !== appliedBefore) this.#notifyApplied();
    this.#notePeersWithData();
  }

  /**
   * Record peers that have data a wipe would lose: as leader, those that acknowledged entries; as a
   * follower with something committed, the leader it follows (its log holds every committed entry,
   * §5.4.1). The second rule covers a node that led from the start: no other leader saw it ack.
   */
  #notePeersWithData(): void {
    const { role, leaderId } = this.#softState;
    if (role === 'leader') {
      for (const [id, p] of this.#core.progress()) if (p.matchIndex > 0) this.#notePeerWithData(id);
    } else if (leaderId !== null && leaderId !== this.id && this.#durableCommitIndex() > 0) {
      this.#notePeerWithData(leaderId);
    }
  }

  /**
   * The commit index this node shows: handed to storage with its hard state, and at least what
   * storage has fsynced (RaftStorage.durableCommitIndex).
   */
  #durableCommitIndex(): LogIndex {
    return asIndex(Math.max(this.#persistedCommitIndex, this.#storage.durableCommitIndex()));
  }

  #notePeerWithData(id: NodeId): void {
    if (this.#peersWithData.has(id)) return;
    this.#peersWithData.add(id);
    this.#storage.notePeerWithData(id).catch((err: unknown) => this.#fatal(err));
  }

  /**
   * The membership in effect changed (dissertation §4.1: on append) or became committed: learn its
   * addresses, point the transport at exactly its members, and notice our own removal.
   */
  #onConfiguration(cs: ConfigurationState): void {
    const m = cs.membership;
    this.#book.learn(m.addresses);
    const { peers, missing } = this.#book.peersOf(m, this.id);
    this.#transport.setPeers?.(peers);
    this.#log.info(
      {
        configIndex: cs.configIndex,
        committed: cs.committed,
        voters: m.voters,
        learners: m.learners,
      },
      'membership changed',
    );
    if (missing.length > 0) this.#log.warn({ missing }, 'members without a known address');
    if (isMember(m, this.id)) {
      this.#memberAtIndex = cs.configIndex;
      return;
    }
    const wasMember = this.#memberAtIndex !== null && this.#memberAtIndex >= this.#memberSinceIndex;
    if (!wasMember || !cs.committed || this.#removed) return;
    this.#removed = true;
    this.#log.warn({ configIndex: cs.configIndex }, 'removed from the cluster');
    for (const listener of this.#removedListeners) this.#callListener(listener);
  }

  #onWarning(w: CoreWarning): void {
    this.#log.warn(
      {
        peer: w.peer,
        recordedMatchIndex: w.recordedMatchIndex,
        followerLastIndex: w.followerLastIndex,
      },
      'follower log shorter than its matchIndex (data lost?); probing it from its log end',
    );
  }

  #sendAll(messages: readonly Message[]): void {
    for (const msg of messages) this.#transport.send(msg);
  }

  /** No snapshot under way, no hold, nothing held back, and enough applied since the last one. */
  #snapshotDue(): boolean {
    return (
      !this.#stopped &&
      !this.#snapshotting &&
      this.#applyHolds === 0 &&
      this.#heldBack.length === 0 &&
      this.#appliedIndex - this.#snapshotIndex >= this.#o.snapshotEntries
    );
  }

  holdApplies(): () => void {
    this.#applyHolds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#applyHolds--;
      assert.ok(this.#applyHolds >= 0, 'apply holds never go negative');
      if (this.#applyHolds === 0 && this.#heldBack.length > 0) this.#schedule();
    };
  }

  /** Once no hold is left: applies what waited, in order, then serves reads and tells listeners. */
  #applyHeldBack(): void {
    if (this.#applyHolds > 0 || this.#heldBack.length === 0) return;
    const appliedBefore = this.#appliedIndex;
    this.#drainHeldBack();
    this.#reads.serve(this.#appliedIndex);
    if (this.#appliedIndex !== appliedBefore) this.#notifyApplied();
  }

  /** Applies the installed snapshots and committed entries that waited for a hold, in order. */
  #drainHeldBack(): void {
    assert.equal(this.#applyHolds, 0, 'held-back items are applied only once no hold is left');
    const held = this.#heldBack;
    this.#heldBack = [];
    for (const item of held) {
      if ('meta' in item) this.#restoreSnapshot(item);
      else this.#applyEntry(item);
    }
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
    this.#snapshotBytes = snapshot.data.byteLength;
    this.#proposals.compacted(meta.index);
    this.#log.info(
      { snapshotIndex: meta.index, snapshotTerm: meta.term, sizeBytes: snapshot.data.byteLength },
      'installed snapshot',
    );
  }

  /**
   * Starts a local snapshot (Raft §7) at the applied index. Runs inside the Ready loop, right after
   * advance(), with nothing held back. In one step when the state machine has no `snapshotSlices`;
   * else the encoding runs beside the loop with applies held and the loop saves it when it is done.
   */
  async #takeSnapshot(): Promise<void> {
    const startMs = performance.now();
    const meta: SnapshotMeta = this.#core.snapshotMetaAt(this.#appliedIndex);
    this.#snapshotting = true;
    const slices = this.#sm.snapshotSlices?.();
    if (slices === undefined) {
      await this.#saveSnapshot(meta, this.#sm.snapshot(), startMs);
      return;
    }
    const release = this.holdApplies();
    driveSlices(slices, undefined, this.#stopSignal.signal).then(
      (driven) => {
        release();
        this.#encoded = { meta, data: joinSlices(driven), startMs };
        this.#schedule();
      },
      (err: unknown) => {
        release();
        if (!this.#stopped) this.#fatal(err);
      },
    );
  }

  /**
   * Saves and compacts (Raft §7) in the crash-safe order of level-storage.ts: snapshot durable
   * first, then old entries deleted, then the core told. Inside the Ready loop. Drops a snapshot
   * that a snapshot installed from the leader meanwhile has overtaken.
   */
  async #saveSnapshot(meta: SnapshotMeta, data: Uint8Array, startMs: number): Promise<void> {
    try {
      if (meta.index <= this.#snapshotIndex) {
        this.#log.info({ snapshotIndex: meta.index }, 'dropped a snapshot overtaken by another');
        return;
      }
      await this.#storage.saveSnapshot({ meta, data });
      if (this.#stopped) return;
      const compactIndex = asIndex(Math.max(0, meta.index - this.#o.snapshotKeepEntries));
      await this.#storage.compactLog(compactIndex, meta.index);
      if (this.#stopped) return;
      // No Ready (so no installed snapshot) is processed while this runs inside the Ready loop.
      assert.ok(meta.index > this.#snapshotIndex, 'a saved snapshot is the newest');
      this.#snapshotIndex = meta.index;
      this.#snapshotBytes = data.byteLength;
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
    } finally {
      this.#snapshotting = false;
    }
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
    this.#ticker.catchUp();
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
    this.#ticker.catchUp();
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
    const voters = this.#core.configuration().membership.voters;
    if (to !== undefined && !voters.includes(to))
      return Promise.reject(new InvalidArgumentError('to', `"${to}" is not a voter`));
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
    this.#ticker.catchUp();
    this.#core.transferLeadership(target);
    this.#schedule();
    return transferred;
  }

  /** The voter (never a learner, §3.10) other than this node with the highest matchIndex. */
  #bestFollower(): NodeId | null {
    let best: NodeId | null = null;
    let bestMatch = -1;
    const voters = this.#core.configuration().membership.voters;
    for (const [id, p] of this.#core.progress()) {
      if (id !== this.id && voters.includes(id) && p.matchIndex > bestMatch) {
        best = id;
        bestMatch = p.matchIndex;
      }
    }
    return best;
  }

  /** See RaftNodeApi.status. Cheap; safe to call often. */
  status(): RaftStatus {
    const soft = this.#core.softState();
    const cs = this.#core.configuration();
    const { voters, learners } = cs.membership;
    const members = [
      ...voters.map((id) => this.#memberStatus(id, soft, false)),
      ...learners.map((id) => this.#memberStatus(id, soft, true)),
    ];
    return {
      configIndex: cs.configIndex,
      configCommitted: cs.committed,
      id: this.id,
      role: soft.role,
      term: soft.term,
      leaderId: soft.leaderId,
      commitIndex: this.#durableCommitIndex(),
      leaderCommitIndex: this.#core.leaderCommitIndex(),
      caughtUpIndex: this.#commitHeard.target(monotonicClock.nowMs()),
      leaderHeardAgoMs: this.#leaderHeardAgoMs(soft),
      appliedIndex: this.#appliedIndex,
      lastLogIndex: this.#core.lastIndex(),
      snapshotIndex: this.#snapshotIndex,
      snapshotBytes: this.#snapshotBytes,
      clusterTimeMs: this.leadership().clusterTimeMs,
      members,
    };
  }

  memberAddress(id: NodeId): MemberAddress | undefined {
    return this.#book.get(id);
  }

  /** See RaftNodeApi.leadership. */
  leadership(): Leadership {
    const soft = this.#core.softState();
    return {
      role: soft.role,
      term: soft.term,
      leaderId: soft.leaderId,
      clusterTimeMs: this.#clusterTime.read(
        this.#core.clusterTimeMs(),
        soft.role,
        soft.leaderId !== null,
        monotonicClock.nowMs(),
      ),
    };
  }

  /** One member as this node sees it; progress (matchIndex, lastContactMs) on the leader only. */
  #memberStatus(id: NodeId, soft: SoftState, learner: boolean): MemberStatus {
    const a = this.#book.get(id);
    const where = {
      ...(a === undefined ? {} : a),
      ...(this.#peersWithData.has(id) ? { hadData: true } : {}),
    };
    if (id === this.id) return { id, role: learner ? 'learner' : soft.role, ...where };
    const p = this.#core.progress().get(id);
    const role = learner ? 'learner' : id === soft.leaderId ? 'leader' : 'follower';
    if (soft.role === 'leader' && p !== undefined) {
      if (p.lastAckTick < 0) return { id, role, ...where, matchIndex: p.matchIndex }; // no answer this term
      const ticks = this.#ticks + this.#ticker.pendingTicks();
      const lastContactMs = Math.max(0, ticks - p.lastAckTick) * this.#o.tickMs;
      return { id, role, ...where, matchIndex: p.matchIndex, lastContactMs };
    }
    return { id, role: learner || id === soft.leaderId ? role : 'unknown', ...where };
  }

  /**
   * See RaftNodeApi.changeMembership (dissertation §4.1, §4.2.1). The new `config` entry carries
   * the whole address book, so every node (a joining one included) learns where members listen.
   * A leader that has not yet committed an entry of its term (§4.1) first waits for that (a read
   * barrier, within the deadline) instead of refusing: a leader just elected — for instance the
   * one that took over from a leader removing itself — answers the change.
   */
  async changeMembership(
    change: MembershipRequest,
    opts: RequestOptions = {},
  ): Promise<RaftStatus> {
    if (this.#stopped) throw new StoppedError();
    const soft = this.#core.softState();
    if (soft.role !== 'leader') throw new NotLeaderError(soft.leaderId);
    if (change.type === 'remove' && change.id === this.id) {
      // §4.2.2 / docs/operations.md: hand leadership over first; the new leader removes us.
      if (this.#core.configuration().membership.voters.length <= 1)
        throw new MembershipChangeError('last_voter', `${this.id} is the last voter`);
      await this.transferLeadership(undefined, opts);
      const leaderId = this.#core.softState().leaderId;
      throw new NotLeaderError(leaderId, `handed leadership to ${leaderId} to be removed`, true);
    }
    const timeoutMs = opts.timeoutMs ?? this.#o.requestTimeoutMsDefault;
    const startMs = monotonicClock.nowMs();
    const configIndexBefore = this.#core.configuration().configIndex;
    let result = this.#proposeChange(change);
    if (!result.ok && result.reason === 'leader_not_ready') {
      await this.readBarrier({ ...opts, timeoutMs });
      // One change at a time, never queued: another one made meanwhile refuses this one.
      if (this.#core.configuration().configIndex !== configIndexBefore)
        throw new MembershipChangeError(
          'reconfiguration_in_progress',
          'another membership change was made while this one waited for the new leader',
        );
      result = this.#proposeChange(change);
    }
    if (!result.ok) {
      if (result.reason === 'not_leader' || result.reason === 'transferring')
        throw new NotLeaderError(result.reason === 'not_leader' ? result.leaderHint : null);
      throw new MembershipChangeError(
        result.reason,
        `membership change refused: ${result.detail ?? result.reason}`,
      );
    }
    this.#log.info(
      { change: change.type, id: change.id, index: result.index },
      'membership change proposed',
    );
    const applied = this.#proposals.track(
      result.index,
      asTerm(result.term),
      this.id,
      Math.max(1, timeoutMs - (monotonicClock.nowMs() - startMs)),
      opts.signal,
    );
    this.#schedule();
    await applied;
    return this.status();
  }

  /** Hands `change` to the core (after the proposal queue's bound); the core's answer. */
  #proposeChange(change: MembershipRequest): MembershipChangeResult {
    if (this.#stopped) throw new StoppedError();
    const full = this.#proposals.full();
    if (full !== null) throw full;
    this.#ticker.catchUp();
    return this.#core.proposeMembershipChange({
      type: change.type,
      id: change.id,
      addresses: this.#addressesFor(change),
    });
  }

  /** The address book to record with `change`: every member's known address (plus the new one). */
  #addressesFor(change: MembershipRequest): MemberAddresses {
    if (change.type === 'addLearner') {
      const { id, raftAddress, httpAddress } = change.address;
      this.#book.learn({
        [id]: httpAddress === undefined ? { raftAddress } : { raftAddress, httpAddress },
      });
    }
    const m = this.#core.configuration().membership;
    return this.#book.bookFor([...m.voters, ...m.learners, change.id]);
  }

  onRemoved(listener: () => void): () => void {
    this.#removedListeners.add(listener);
    return () => this.#removedListeners.delete(listener);
  }

  admitted(configIndex: LogIndex): void {
    this.#memberSinceIndex = Math.min(this.#memberSinceIndex, configIndex);
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

  /**
   * See RaftNodeApi.stop: stops ticker and transport, fails pending proposals with TimeoutError
   * (outcome unknown) and reads and transfers with StoppedError, closes storage.
   */
  stop(): Promise<void> {
    if (this.#stopPromise !== null) return this.#stopPromise;
    this.#stopped = true;
    this.#stopSignal.abort(new StoppedError());
    this.#ticker.stop();
    const stopped = new StoppedError();
    // A pending entry may already be on other nodes and commit without this one: outcome unknown.
    this.#proposals.failAll(
      new TimeoutError('the node stopped with the entry pending; outcome unknown'),
    );
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

/**
 * The membership this node boots with (member-book.ts rule): the recorded one, else the one
 * `peers` describe — recorded now, so later starts never read it from the command line again.
 */
async function bootstrapMembership<R>(
  storage: RaftStorage,
  options: RaftNodeOptions<R>,
  log: Logger,
): Promise<Membership> {
  const recorded = await storage.readBootstrap();
  if (recorded !== null) return recorded;
  const fresh = bootstrapFromPeers(options.peers, options.join ?? false);
  await storage.saveBootstrap(fresh);
  log.info({ voters: fresh.voters }, 'recorded bootstrap membership');
  return fresh;
}

/**
 * The transport's first peers: the members in effect with their known addresses — or, while this
 * node is outside every membership (joining), the `peers` it was given. Warns when `peers`
 * disagrees with the membership in effect (which wins), and refuses the data of a removed member.
 */
function startPeers<R>(
  cs: ConfigurationState,
  options: RaftNodeOptions<R>,
  bootstrap: Membership,
  book: MemberBook,
  log: Logger,
): PeerInfo[] {
  const m = cs.membership;
  book.learn(bootstrap.addresses);
  book.learn(bootstrapFromPeers(options.peers, false).addresses);
  book.learn(m.addresses);
  if (!isMember(m, options.id)) {
    if (cs.configIndex > 0 && options.join !== true)
      throw new RemovedMemberError(
        `node ${options.id} was removed from the cluster (membership at index ${cs.configIndex}: ` +
          `voters ${m.voters.join(',')}); to rejoin, wipe its data directory, start it with ` +
          '--join and promote it (docs/operations.md)',
      );
    return [...options.peers];
  }
  const differs = options.join === true ? null : peersDisagreement(options.peers, m);
  if (differs !== null)
    log.warn(
      { ...differs, voters: m.voters, learners: m.learners, configIndex: cs.configIndex },
      'peers differ from the stored membership; the stored membership wins',
    );
  warnOwnAddressDrift(cs, options, bootstrap, log);
  return book.peersOf(m, options.id).peers;
}

/**
 * Warns when this node starts at addresses other than its entry in the stored membership (the
 * recorded bootstrap's, while no change has recorded addresses).
 */
function warnOwnAddressDrift<R>(
  cs: ConfigurationState,
  options: RaftNodeOptions<R>,
  bootstrap: Membership,
  log: Logger,
): void {
  const self = options.peers.find((p) => p.id === options.id);
  const raftAddress = options.listen ?? self?.raftAddress;
  if (raftAddress === undefined) return;
  const given = {
    raftAddress,
    ...(self?.httpAddress === undefined ? {} : { httpAddress: self.httpAddress }),
  };
  const stored = cs.membership.addresses?.[options.id] !== undefined ? cs.membership : bootstrap;
  const drift = ownAddressDrift(options.id, given, stored);
  if (drift !== null)
    log.warn(
      { stored: drift.stored, given: drift.given, configIndex: cs.configIndex },
      'this node starts at addresses other than its entry in the stored membership: the other ' +
        'members look for it at the stored ones; restart it with those (docs/operations.md "Move a node")',
    );
}

function coreConfig(id: NodeId, o: ResolvedOptions, voters: readonly NodeId[]): CoreConfig {
  return {
    id,
    voters,
    electionTimeoutTicks: o.electionTimeoutTicks,
    heartbeatTicks: o.heartbeatTicks,
    preVote: o.preVote,
    checkQuorum: o.checkQuorum,
    entriesPerMessageMax: o.entriesPerMessageMax,
    bytesPerMessageMax: o.bytesPerMessageMax,
    inflightMessagesMax: o.inflightMessagesMax,
    commitNoticeDelayTicks: runtimeCommitNoticeDelayTicks,
  };
}

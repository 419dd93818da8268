/**
 * RaftStorage: LogStorage + StableStorage with the one operation Raft needs to be atomic —
 * persisting a Ready's hard state and entries together (etcd-io/raft's "save" step).
 */
import assert from 'node:assert/strict';
import type {
  CoreInitialState,
  Entry,
  HardState,
  LogIndex,
  NodeId,
  Snapshot,
} from '../core/types.js';
import { asIndex } from '../core/types.js';
import type { Membership } from '../core/membership.js';
import type { LogStorage } from './log-storage.js';
import { EMPTY_HARD_STATE, type StableStorage } from './stable-storage.js';

/**
 * One durable write: a Ready's `snapshot` (absent/null = none), `hardState` (null = unchanged) and
 * `entries` (may be empty).
 */
export interface PersistBatch {
  readonly hardState: HardState | null;
  readonly entries: readonly Entry[];
  /** Snapshot installed from the leader (Ready.snapshot): replaces the log up to and after its index. */
  readonly snapshot?: Snapshot | null;
}

/**
 * Storage of one node. Contract (in addition to LogStorage and StableStorage):
 * - `persist(batch)` writes snapshot, hard state and entries in ONE atomic write: after a crash
 *   either all are on disk or none is. With a snapshot, every stored entry after snapshot.meta.index
 *   is deleted in that same write (entries at or below it are ignored by recovery and may be
 *   deleted later). Writes are applied in call order. It is fsynced before resolving whenever it
 *   carries a snapshot, entries or a new term/votedFor. A change of commitIndex alone may be left
 *   unsynced or not written until the next write or close() (commitIndex is volatile in Raft
 *   Figure 2): after a crash the node may recover an older commitIndex — never one beyond what it
 *   had — and then replays fewer entries on open and learns the rest from the leader.
 * - `durableCommitIndex()`: the commitIndex of the newest hard state whose write is fsynced (the
 *   recovered one after `recover()`). It never decreases, and a crash never recovers less — what a
 *   node may show as its commit index (docs/architecture.md).
 * - `saveSnapshot(snapshot)`: stores a locally taken snapshot atomically and durably (fsync). It
 *   does not touch the log: the old snapshot and every entry stay until `compactLog`.
 * - `compactLog(compactIndex, snapshotIndex)`: deletes entries ≤ compactIndex and snapshots older
 *   than snapshotIndex (which must already be durable). Not atomic: a crash may leave part of the
 *   garbage, which recovery ignores. Ordered after earlier writes.
 * - `recover()` returns what a core starts from, including the newest intact snapshot and its
 *   bytes (`snapshotData`); entries ≤ the snapshot's index are left out, and hardState.commitIndex
 *   is raised to at least the snapshot's index (a snapshot holds committed state). Call once,
 *   before any write.
 * - `readBootstrap()` / `saveBootstrap(m)`: the membership this node's data was created with (the
 *   bootstrap membership in effect before any `config` entry, dissertation §4.1), written once
 *   (fsynced) when the data is new. Recorded so that later starts never take the voters from the
 *   command line again (docs/operations.md: the replicated configuration wins over `--peers`).
 * - `notePeerWithData(id)` / `readPeersWithData()`: peers this node, as leader, saw acknowledge log
 *   entries (so they had data); kept durably so that an empty restart of such a peer is recognised
 *   even after this node restarted (docs/operations.md, "When a node fails").
 * - `close()` waits for pending writes, then releases the directory. Idempotent.
 * - Errors: write failures reject and are fatal for the runtime; identity problems on open throw
 *   StorageIdentityError; recovery throws a plain Error on corruption (gaps, commitIndex beyond the
 *   log and snapshot).
 */
export interface RaftStorage extends LogStorage, StableStorage {
  persist(batch: PersistBatch): Promise<void>;
  durableCommitIndex(): LogIndex;
  saveSnapshot(snapshot: Snapshot): Promise<void>;
  compactLog(compactIndex: LogIndex, snapshotIndex: LogIndex): Promise<void>;
  recover(): Promise<CoreInitialState>;
  readBootstrap(): Promise<Membership | null>;
  saveBootstrap(membership: Membership): Promise<void>;
  readPeersWithData(): Promise<readonly NodeId[]>;
  notePeerWithData(id: NodeId): Promise<void>;
  close(): Promise<void>;
}

/**
 * Checks what storage recovered (decode-then-validate for disk reads): entries contiguous from
 * snapshot.index + 1 (or 1), terms never decreasing and not below the snapshot's, commitIndex
 * within the log or snapshot. Returns the hard state with commitIndex raised to the snapshot index.
 * Throws a plain Error (corruption) otherwise.
 */
export function checkRecovered(
  hardState: HardState,
  entries: readonly Entry[],
  snapshot: Snapshot['meta'] | null = null,
): HardState {
  const base = snapshot?.index ?? 0;
  let previousTerm: number = snapshot?.term ?? 0;
  entries.forEach((entry, position) => {
    if (entry.index !== base + position + 1)
      throw new Error(`corrupt log: expected index ${base + position + 1}, found ${entry.index}`);
    if (entry.term < previousTerm)
      throw new Error(`corrupt log: term decreases at index ${entry.index}`);
    previousTerm = entry.term;
  });
  const lastIndex = base + entries.length;
  if (hardState.commitIndex > lastIndex) {
    throw new Error(
      `corrupt storage: commitIndex ${hardState.commitIndex} beyond last index ${lastIndex}`,
    );
  }
  if (snapshot !== null && snapshot.term > hardState.term)
    throw new Error(`corrupt storage: snapshot term ${snapshot.term} above term ${hardState.term}`);
  return hardState.commitIndex >= base ? hardState : { ...hardState, commitIndex: asIndex(base) };
}

/**
 * In-memory RaftStorage (tests): hard state, the newest snapshot and the log (entries after the
 * compaction point), with the same semantics as LevelRaftStorage. "Durable" for the object's life.
 */
export class MemoryRaftStorage implements RaftStorage {
  #hardState: HardState = EMPTY_HARD_STATE;
  /** Snapshots by index (old ones live until compactLog, as on disk). */
  readonly #snapshots = new Map<number, Snapshot>();
  /** `#entries[i]` has index `#offset + 1 + i`. */
  #entries: Entry[] = [];
  #offset = 0;
  #closed = false;
  #bootstrap: Membership | null = null;
  readonly #peersWithData = new Set<NodeId>();

  readPeersWithData(): Promise<readonly NodeId[]> {
    return Promise.resolve([...this.#peersWithData]);
  }
  notePeerWithData(id: NodeId): Promise<void> {
    this.#peersWithData.add(id);
    return Promise.resolve();
  }

  readBootstrap(): Promise<Membership | null> {
    return Promise.resolve(this.#bootstrap);
  }
  saveBootstrap(membership: Membership): Promise<void> {
    this.#bootstrap = membership;
    return Promise.resolve();
  }

  readEntries(): Promise<readonly Entry[]> {
    return Promise.resolve([...this.#entries]);
  }
  lastIndex(): LogIndex {
    return asIndex(this.#offset + this.#entries.length);
  }
  appendEntries(entries: readonly Entry[]): Promise<void> {
    return this.persist({ hardState: null, entries });
  }
  readHardState(): Promise<HardState> {
    return Promise.resolve(this.#hardState);
  }
  saveHardState(hardState: HardState): Promise<void> {
    return this.persist({ hardState, entries: [] });
  }

  durableCommitIndex(): LogIndex {
    return this.#hardState.commitIndex;
  }

  persist(batch: PersistBatch): Promise<void> {
    assert.ok(!this.#closed, 'persist after close');
    const snapshot = batch.snapshot ?? null;
    if (snapshot !== null) {
      this.#snapshots.set(snapshot.meta.index, snapshot);
      this.#entries = [];
      this.#offset = snapshot.meta.index;
    }
    this.#append(batch.entries);
    if (batch.hardState !== null) this.#hardState = batch.hardState;
    return Promise.resolve();
  }

  saveSnapshot(snapshot: Snapshot): Promise<void> {
    assert.ok(!this.#closed, 'saveSnapshot after close');
    this.#snapshots.set(snapshot.meta.index, snapshot);
    return Promise.resolve();
  }

  compactLog(compactIndex: LogIndex, snapshotIndex: LogIndex): Promise<void> {
    assert.ok(this.#snapshots.has(snapshotIndex), 'compactLog without that snapshot');
    for (const index of [...this.#snapshots.keys()])
      if (index < snapshotIndex) this.#snapshots.delete(index);
    const drop = Math.min(this.#entries.length, Math.max(0, compactIndex - this.#offset));
    this.#entries.splice(0, drop);
    this.#offset += drop;
    return Promise.resolve();
  }

  /** The newest stored snapshot, or null. */
  newestSnapshot(): Snapshot | null {
    let best: Snapshot | null = null;
    for (const s of this.#snapshots.values())
      if (best === null || s.meta.index > best.meta.index) best = s;
    return best;
  }

  recover(): Promise<CoreInitialState> {
    const snapshot = this.newestSnapshot();
    const base = snapshot?.meta.index ?? 0;
    const entries = this.#entries.filter((e) => e.index > base);
    const hardState = checkRecovered(this.#hardState, entries, snapshot?.meta ?? null);
    if (snapshot === null) return Promise.resolve({ hardState, snapshot: null, entries });
    return Promise.resolve({
      hardState,
      snapshot: snapshot.meta,
      snapshotData: snapshot.data,
      entries,
    });
  }

  /** Reopen after close (simulates a restart that keeps the "disk"). */
  reopen(): void {
    this.#closed = false;
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  /** Raft's append rule: an entry at an existing index replaces it and everything after (§5.3). */
  #append(entries: readonly Entry[]): void {
    const first = entries[0];
    if (first === undefined) return;
    const last = this.#offset + this.#entries.length;
    assert.ok(
      first.index > this.#offset && first.index <= last + 1,
      `append at ${first.index} leaves a gap after ${last}`,
    );
    this.#entries.length = first.index - this.#offset - 1;
    for (const entry of entries) {
      assert.equal(
        entry.index,
        this.#offset + this.#entries.length + 1,
        'entries must be contiguous',
      );
      this.#entries.push(entry);
    }
  }
}

/**
 * RaftStorage on `level` (LevelDB): one fsynced batch per persist that carries entries, a snapshot
 * or a new term/vote; keys that sort in index order.
 *
 * A hard state that changes only commitIndex is not written on its own: it is kept in memory and
 * written with the next batch, by a flush COMMIT_FLUSH_DELAY_MS later if no batch came, or on close
 * (see persist). `durableCommitIndex()` says how far the commit index on disk goes.
 *
 * Layout: 'm' → {clusterId, nodeId} (identity, written once); 'b' → the bootstrap membership
 * (written once, RaftStorage.readBootstrap); 'p' + id → peers seen with data; 'h' → HardState;
 * 'e' + 16 hex digits of the index → Entry; 's' + 16 hex digits of its index → snapshot
 * {index, term, clusterTimeMs, data}. Values are msgpackr (codec.ts). Hex of fixed width sorts
 * lexicographically in index order, so recovery is one range scan.
 *
 * Crash safety of snapshots (Raft §7; docs/failure-scenarios.md BC-25, BC-26). Every record is written by
 * one LevelDB put/batch, which its write-ahead log makes atomic, so a record is either whole or
 * absent. Order of writes:
 * - local snapshot: (1) put the snapshot record, fsynced; (2) only then delete entries ≤ compactIndex
 *   and older snapshot records. A crash after (1) leaves two snapshots and the whole log: recovery
 *   takes the newest and ignores entries at or below it. A crash during (2) leaves some garbage
 *   below the snapshot, also ignored.
 * - installed snapshot (Ready.snapshot): ONE fsynced batch puts the snapshot record, deletes every
 *   entry after its index (the superseded log), and writes the new hard state and entries; older
 *   entries and snapshots are deleted afterwards (garbage, as above). So no crash point can leave a
 *   commitIndex beyond log + snapshot, or a log that conflicts with the snapshot.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import type { Logger } from '../logger.js';
import type {
  CoreInitialState,
  Entry,
  HardState,
  LogIndex,
  NodeId,
  Snapshot,
} from '../core/types.js';
import { asIndex } from '../core/types.js';
import { createPackr } from '../codec.js';
import { StorageIdentityError } from '../errors.js';
import { parseEntry, parseHardState, parseSnapshotMeta } from '../validate.js';
import { parseMembership, type Membership } from '../core/membership.js';
import { checkRecovered, type PersistBatch, type RaftStorage } from './raft-storage.js';
import { EMPTY_HARD_STATE } from './stable-storage.js';

const META_KEY = 'm';
const BOOTSTRAP_KEY = 'b';
/** 'p' + node id → empty: a peer seen with data (RaftStorage.notePeerWithData). */
const PEER_DATA_PREFIX = 'p';
/** Upper bound of that key range. */
const PEER_DATA_RANGE_END = 'q';
const HARD_STATE_KEY = 'h';
const ENTRY_PREFIX = 'e';
/** Upper bound of the entry key range ('f' > 'e' + any hex digits). */
const ENTRY_RANGE_END = 'f';
const SNAPSHOT_PREFIX = 's';
/** Upper bound of the snapshot key range. */
const SNAPSHOT_RANGE_END = 't';

/** Key of the snapshot whose last included index is `index`: 's' + 16 lowercase hex digits. */
export function snapshotKey(index: number): string {
  assert.ok(Number.isSafeInteger(index) && index >= 1, `bad snapshot index ${index}`);
  return SNAPSHOT_PREFIX + index.toString(16).padStart(16, '0');
}

/** Key of the entry at `index`: 'e' + 16 lowercase hex digits (sorts in index order). */
export function entryKey(index: number): string {
  assert.ok(Number.isSafeInteger(index) && index >= 1, `bad index ${index}`);
  return ENTRY_PREFIX + index.toString(16).padStart(16, '0');
}

/**
 * How long a commitIndex-only hard state may wait for a batch to ride on before it is written (and
 * fsynced) by itself (ms). On a busy node the next batch comes first and the flush finds nothing;
 * on a quiet one the commit index on disk (what a node shows, docs/architecture.md) catches up
 * within this delay plus one fsync.
 */
export const COMMIT_FLUSH_DELAY_MS = 50;

/** Options of LevelRaftStorage.open. */
export interface LevelStorageOptions {
  /** Directory of this node's LevelDB; created if missing. */
  readonly dataDir: string;
  /** Identity written on first open and checked on every later open. */
  readonly clusterId: string;
  readonly nodeId: NodeId;
  readonly logger?: Logger;
}

type Op = { type: 'put'; key: string; value: Uint8Array } | { type: 'del'; key: string };

/**
 * Opens the LevelDB in `dataDir` (utf8 keys, byte values). Throws an Error naming the directory and
 * LevelDB's reason (its `cause`), e.g. "IO error: lock …/LOCK: already held by process" when
 * another process runs on it.
 */
async function openLevel(
  dataDir: string,
  createIfMissing: boolean,
): Promise<Level<string, Uint8Array>> {
  const db = new Level<string, Uint8Array>(dataDir, {
    keyEncoding: 'utf8',
    valueEncoding: 'view',
    createIfMissing,
  });
  try {
    await db.open();
  } catch (err) {
    const reason =
      (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
    throw new Error(
      `cannot open raft data directory ${dataDir}: ${reason}` +
        (/lock/i.test(reason) ? ' (another process is running on it)' : ''),
      { cause: err },
    );
  }
  return db;
}

/**
 * The cluster id recorded in the LevelDB at `dataDir` (its identity record), or null when the
 * directory holds no Raft data yet (it is then left untouched). Opens and closes the database (not
 * while a node runs on it).
 * Throws openLevel's error when the database cannot be opened (locked by a running node, corrupt).
 */
export async function storedClusterId(dataDir: string): Promise<string | null> {
  // No CURRENT file, no database: opening one would still create the directory and LevelDB's
  // LOCK and LOG files, and an empty data directory must stay empty (start-up checks read it).
  if (!existsSync(join(dataDir, 'CURRENT'))) return null;
  const db = await openLevel(dataDir, false);
  try {
    const raw = await db.get(META_KEY);
    if (raw === undefined) return null;
    const found: unknown = createPackr().unpack(raw);
    return typeof found === 'object' && found !== null && 'clusterId' in found
      ? String(found.clusterId)
      : null;
  } finally {
    await db.close();
  }
}

/** LevelDB-backed RaftStorage. Create with `LevelRaftStorage.open`. */
export class LevelRaftStorage implements RaftStorage {
  readonly #db: Level<string, Uint8Array>;
  readonly #packr = createPackr();
  readonly #log: Logger | undefined;
  /** Last index written (or queued); writes keep the log contiguous from 1 to here. */
  #lastIndex: LogIndex = asIndex(0);
  /** Last hard state handed to persist (written, queued, or deferred). */
  #hardState: HardState = EMPTY_HARD_STATE;
  /**
   * A commitIndex-only hard state not written yet (null = none): the next batch, or close(),
   * writes it. Invariant: when non-null it equals #hardState.
   */
  #deferredHardState: HardState | null = null;
  /** Timer of the flush of #deferredHardState (null = none armed). */
  #flushTimer: NodeJS.Timeout | null = null;
  /** commitIndex of the newest hard state whose fsynced write completed (RaftStorage). */
  #durableCommitIndex: LogIndex = asIndex(0);
  /** Serialises writes so batches reach LevelDB in call order. */
  #tail: Promise<void> = Promise.resolve();
  #recovered = false;
  #closed = false;

  private constructor(db: Level<string, Uint8Array>, logger: Logger | undefined) {
    this.#db = db;
    this.#log = logger;
  }

  /**
   * Opens (creating if needed) the database in `dataDir` and checks its identity record.
   * Errors: StorageIdentityError when the directory belongs to another cluster/node; an Error with
   * `cause` when LevelDB cannot open it (e.g. locked by another process).
   */
  static async open(options: LevelStorageOptions): Promise<LevelRaftStorage> {
    const db = await openLevel(options.dataDir, true);
    const storage = new LevelRaftStorage(db, options.logger);
    try {
      await storage.#checkIdentity(options);
    } catch (err) {
      await db.close();
      throw err;
    }
    return storage;
  }

  async #checkIdentity(options: LevelStorageOptions): Promise<void> {
    const raw = await this.#db.get(META_KEY);
    const expected = { clusterId: options.clusterId, nodeId: options.nodeId };
    if (raw === undefined) {
      const anyKey = await this.#db.keys({ limit: 1 }).all();
      if (anyKey.length > 0)
        throw new Error(`raft data directory ${options.dataDir} has data but no identity record`);
      await this.#db.put(META_KEY, this.#packr.pack(expected), { sync: true });
      this.#log?.info({ dataDir: options.dataDir, ...expected }, 'initialised raft data directory');
      return;
    }
    const found: unknown = this.#packr.unpack(raw);
    const ok =
      typeof found === 'object' && found !== null && 'clusterId' in found && 'nodeId' in found;
    const foundId = ok
      ? { clusterId: String(found.clusterId), nodeId: String(found.nodeId) }
      : { clusterId: '?', nodeId: '?' };
    if (foundId.clusterId !== expected.clusterId || foundId.nodeId !== expected.nodeId) {
      throw new StorageIdentityError(options.dataDir, expected, foundId);
    }
  }

  /**
   * Reads hard state, the newest intact snapshot and the log after it (RaftStorage.recover).
   * Throws a plain Error on corrupt records or a log that does not continue the snapshot.
   */
  async recover(): Promise<CoreInitialState> {
    assert.ok(!this.#recovered, 'recover() called twice');
    this.#recovered = true;
    const snapshot = await this.readNewestSnapshot();
    const base = snapshot?.meta.index ?? 0;
    const entries = await this.readEntries(base);
    const hardState = checkRecovered(await this.readHardState(), entries, snapshot?.meta ?? null);
    this.#hardState = hardState;
    this.#durableCommitIndex = hardState.commitIndex;
    this.#lastIndex = asIndex(base + entries.length);
    this.#log?.info(
      {
        term: hardState.term,
        commitIndex: hardState.commitIndex,
        snapshotIndex: base,
        lastIndex: this.#lastIndex,
      },
      'recovered raft storage',
    );
    if (snapshot === null) return { hardState, snapshot: null, entries };
    return { hardState, snapshot: snapshot.meta, snapshotData: snapshot.data, entries };
  }

  /**
   * The snapshot record with the highest index that decodes intact, or null. A newer record that
   * does not decode is skipped with a warning (recovery then needs the log to continue the older one).
   */
  async readNewestSnapshot(): Promise<Snapshot | null> {
    for await (const [key, raw] of this.#db.iterator({
      gte: SNAPSHOT_PREFIX,
      lt: SNAPSHOT_RANGE_END,
      reverse: true,
    })) {
      const snapshot = this.#parseSnapshot(key, raw);
      if (snapshot !== null) return snapshot;
      this.#log?.warn({ key }, 'skipping corrupt snapshot record');
    }
    return null;
  }

  #parseSnapshot(key: string, raw: Uint8Array): Snapshot | null {
    let decoded: unknown;
    try {
      decoded = this.#packr.unpack(raw);
    } catch {
      return null;
    }
    const meta = parseSnapshotMeta(decoded);
    if (meta === null || snapshotKey(meta.index) !== key) return null;
    const data = (decoded as { data?: unknown }).data;
    if (!(data instanceof Uint8Array)) return null;
    return { meta, data: new Uint8Array(data) };
  }

  /** The last hard state handed to persist (a deferred one included), else the stored one. */
  async readHardState(): Promise<HardState> {
    if (this.#deferredHardState !== null) return this.#deferredHardState;
    const raw = await this.#db.get(HARD_STATE_KEY);
    if (raw === undefined) return EMPTY_HARD_STATE;
    const hardState = parseHardState(this.#packr.unpack(raw));
    if (hardState === null) throw new Error('corrupt hard state record');
    return hardState;
  }

  /** Stored entries with index > `afterIndex` (default: all), in index order. */
  async readEntries(afterIndex = 0): Promise<readonly Entry[]> {
    const entries: Entry[] = [];
    const range = afterIndex >= 1 ? { gt: entryKey(afterIndex) } : { gte: ENTRY_PREFIX };
    for await (const [key, raw] of this.#db.iterator({ ...range, lt: ENTRY_RANGE_END })) {
      const entry = parseEntry(this.#packr.unpack(raw));
      if (entry === null || entryKey(entry.index) !== key)
        throw new Error(`corrupt log record ${key}`);
      entries.push(entry);
    }
    return entries;
  }

  lastIndex(): LogIndex {
    return this.#lastIndex;
  }

  /** The recorded bootstrap membership, or null (new data, or data older than the record). */
  async readBootstrap(): Promise<Membership | null> {
    const raw = await this.#db.get(BOOTSTRAP_KEY);
    if (raw === undefined) return null;
    const membership = parseMembership(this.#packr.unpack(raw));
    if (membership === null) throw new Error('corrupt bootstrap membership record');
    return membership;
  }

  /** Peers recorded by notePeerWithData. */
  async readPeersWithData(): Promise<readonly NodeId[]> {
    const keys = await this.#db.keys({ gte: PEER_DATA_PREFIX, lt: PEER_DATA_RANGE_END }).all();
    return keys.map((k) => k.slice(PEER_DATA_PREFIX.length));
  }

  /** Records that peer `id` had data (one put, after earlier writes; not fsynced: a hint). */
  notePeerWithData(id: NodeId): Promise<void> {
    assert.ok(!this.#closed, 'notePeerWithData after close');
    const write = this.#tail.then(() => this.#db.put(PEER_DATA_PREFIX + id, new Uint8Array()));
    this.#tail = write;
    return write;
  }

  /** Records the bootstrap membership (one fsynced put, after earlier writes). */
  saveBootstrap(membership: Membership): Promise<void> {
    assert.ok(!this.#closed, 'saveBootstrap after close');
    const value = this.#packr.pack(membership);
    const write = this.#tail.then(() => this.#db.put(BOOTSTRAP_KEY, value, { sync: true }));
    this.#tail = write;
    return write;
  }

  appendEntries(entries: readonly Entry[]): Promise<void> {
    return this.persist({ hardState: null, entries });
  }

  saveHardState(hardState: HardState): Promise<void> {
    return this.persist({ hardState, entries: [] });
  }

  /**
   * Snapshot, hard state and entries in ONE LevelDB batch, fsynced — except a hard state whose only
   * change is commitIndex: that one is not written at all but kept in memory and folded into the
   * next batch (or the write on close). See RaftStorage for why that is safe.
   * With a snapshot, entries and snapshots it supersedes are deleted after the batch (garbage that
   * recovery ignores meanwhile).
   */
  persist(batch: PersistBatch): Promise<void> {
    assert.ok(!this.#closed, 'persist after close');
    const snapshot = batch.snapshot ?? null;
    const hs = batch.hardState;
    // Raft needs term, votedFor and entries durable before anything depending on them is sent.
    // commitIndex is volatile state (Raft Figure 2): a node that restarts with an older one
    // replays less and learns the rest from the leader. So a commitIndex-only change costs no
    // write of its own (on a busy node that is one LevelDB write per Ready saved on the leader
    // after every quorum ack, and on followers after every commit notice); it rides along with
    // the next batch, which is fsynced anyway.
    if (snapshot === null && batch.entries.length === 0 && hs !== null && this.#onlyCommit(hs)) {
      this.#hardState = hs;
      this.#deferredHardState = hs;
      this.#flushTimer ??= setTimeout(() => this.#flushDeferred(), COMMIT_FLUSH_DELAY_MS);
      return this.#tail;
    }
    const written = batch.hardState ?? this.#deferredHardState;
    const ops = this.#batchOps(batch);
    if (ops.length === 0) return this.#tail;
    const write = this.#tail.then(() => this.#writeOps(ops)).then(() => this.#noteDurable(written));
    this.#tail =
      snapshot === null
        ? write
        : write.then(() => this.#clearBelow(snapshot.meta.index, snapshot.meta.index));
    return write;
  }

  /**
   * Writes `ops` as one atomic LevelDB batch, fsynced. A chained batch, not `db.batch(array)`: the
   * array form re-validates and copies every operation in JavaScript before the native call, which
   * measured about twice the CPU per persisted batch (18 entries of 150 B: 640–700 µs against
   * 345–380 µs; docs/architecture.md, "Cost of a write").
   */
  #writeOps(ops: readonly Op[]): Promise<void> {
    const batch = this.#db.batch();
    for (const op of ops)
      if (op.type === 'put') batch.put(op.key, op.value);
      else batch.del(op.key);
    return batch.write({ sync: true });
  }

  /** commitIndex of the newest hard state on disk, fsynced (RaftStorage). Never decreases. */
  durableCommitIndex(): LogIndex {
    return this.#durableCommitIndex;
  }

  #noteDurable(hardState: HardState | null): void {
    if (hardState !== null && hardState.commitIndex > this.#durableCommitIndex)
      this.#durableCommitIndex = hardState.commitIndex;
  }

  /** Writes a commitIndex-only hard state that no batch carried within COMMIT_FLUSH_DELAY_MS. */
  #flushDeferred(): void {
    this.#flushTimer = null;
    const deferred = this.#deferredHardState;
    if (deferred === null || this.#closed) return;
    this.#deferredHardState = null;
    const value = this.#packr.pack(deferred);
    // A failure here surfaces on the next persist or close, which chain on the tail.
    this.#tail = this.#tail
      .then(() => this.#db.put(HARD_STATE_KEY, value, { sync: true }))
      .then(() => this.#noteDurable(deferred));
  }

  /** True when `hs` differs from the last hard state only in commitIndex (or not at all). */
  #onlyCommit(hs: HardState): boolean {
    return hs.term === this.#hardState.term && hs.votedFor === this.#hardState.votedFor;
  }

  /** Stores a locally taken snapshot: one put, fsynced, after every earlier write (RaftStorage). */
  saveSnapshot(snapshot: Snapshot): Promise<void> {
    assert.ok(!this.#closed, 'saveSnapshot after close');
    const value = this.#packr.pack({ ...snapshot.meta, data: snapshot.data });
    const write = this.#tail.then(() =>
      this.#db.put(snapshotKey(snapshot.meta.index), value, { sync: true }),
    );
    this.#tail = write;
    return write;
  }

  /** Deletes entries ≤ compactIndex and snapshots below snapshotIndex, after earlier writes (RaftStorage). */
  compactLog(compactIndex: LogIndex, snapshotIndex: LogIndex): Promise<void> {
    assert.ok(!this.#closed, 'compactLog after close');
    assert.ok(compactIndex <= snapshotIndex, 'compactIndex ≤ snapshotIndex');
    const write = this.#tail.then(() => this.#clearBelow(compactIndex, snapshotIndex));
    this.#tail = write;
    return write;
  }

  /** Range-deletes entries ≤ entryIndexMax and snapshot records < snapshotIndex (not atomic; safe). */
  async #clearBelow(entryIndexMax: number, snapshotIndex: number): Promise<void> {
    if (entryIndexMax >= 1)
      await this.#db.clear({ gte: ENTRY_PREFIX, lte: entryKey(entryIndexMax) });
    await this.#db.clear({ gte: SNAPSHOT_PREFIX, lt: snapshotKey(snapshotIndex) });
  }

  #batchOps(batch: PersistBatch): Op[] {
    const ops: Op[] = [];
    const snapshot = batch.snapshot ?? null;
    if (snapshot !== null) {
      const meta = snapshot.meta;
      ops.push({
        type: 'put',
        key: snapshotKey(meta.index),
        value: this.#packr.pack({ ...meta, data: snapshot.data }),
      });
      // The superseded log after the snapshot goes in the same atomic write (Raft §7, BC-25).
      for (let index = meta.index + 1; index <= this.#lastIndex; index++)
        ops.push({ type: 'del', key: entryKey(index) });
      this.#lastIndex = meta.index;
    }
    const first = batch.entries[0];
    if (first !== undefined) {
      assert.ok(
        first.index >= 1 && first.index <= this.#lastIndex + 1,
        `append at ${first.index} after ${this.#lastIndex}`,
      );
      assert.ok(
        snapshot === null || first.index > snapshot.meta.index,
        'entries after the snapshot only',
      );
      let expected = first.index;
      for (const entry of batch.entries) {
        assert.equal(entry.index, expected, 'entries must be contiguous');
        expected = asIndex(expected + 1);
        ops.push({ type: 'put', key: entryKey(entry.index), value: this.#packr.pack(entry) });
      }
      const newLast = expected - 1;
      // Conflicting suffix beyond the new last entry disappears with the same batch (Raft §5.3).
      for (let index = newLast + 1; index <= this.#lastIndex; index++)
        ops.push({ type: 'del', key: entryKey(index) });
      this.#lastIndex = asIndex(newLast);
    }
    if (batch.hardState !== null) {
      assert.ok(batch.hardState.term >= this.#hardState.term, 'term must never decrease');
      this.#hardState = batch.hardState;
    }
    const hardState = batch.hardState ?? this.#deferredHardState;
    this.#deferredHardState = null;
    if (hardState !== null)
      ops.push({ type: 'put', key: HARD_STATE_KEY, value: this.#packr.pack(hardState) });
    return ops;
  }

  /** Writes a deferred commitIndex (fsynced), waits for queued writes, closes LevelDB. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#flushTimer !== null) clearTimeout(this.#flushTimer);
    this.#flushTimer = null;
    const deferred = this.#deferredHardState;
    this.#deferredHardState = null;
    if (deferred !== null) {
      const value = this.#packr.pack(deferred);
      this.#tail = this.#tail.then(() => this.#db.put(HARD_STATE_KEY, value, { sync: true }));
    }
    await this.#tail.catch(() => undefined);
    await this.#db.close();
  }
}

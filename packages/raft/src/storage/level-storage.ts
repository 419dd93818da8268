/**
 * RaftStorage on `level` (LevelDB): one fsynced batch per persist, keys that sort in index order.
 *
 * Layout: 'm' → {clusterId, nodeId} (identity, written once); 'h' → HardState;
 * 'e' + 16 hex digits of the index → Entry. Values are msgpackr (codec.ts). Hex of fixed width
 * sorts lexicographically in index order, so recovery is one range scan.
 */
import assert from 'node:assert/strict';
import { Level } from 'level';
import type { Logger } from 'pino';
import type { CoreInitialState, Entry, HardState, LogIndex, NodeId } from '../core/types.js';
import { asIndex } from '../core/types.js';
import { createPackr } from '../codec.js';
import { StorageIdentityError } from '../errors.js';
import { parseEntry, parseHardState } from '../validate.js';
import { checkRecovered, type PersistBatch, type RaftStorage } from './raft-storage.js';
import { EMPTY_HARD_STATE } from './stable-storage.js';

const META_KEY = 'm';
const HARD_STATE_KEY = 'h';
const ENTRY_PREFIX = 'e';
/** Upper bound of the entry key range ('f' > 'e' + any hex digits). */
const ENTRY_RANGE_END = 'f';

/** Key of the entry at `index`: 'e' + 16 lowercase hex digits (sorts in index order). */
export function entryKey(index: number): string {
  assert.ok(Number.isSafeInteger(index) && index >= 1, `bad index ${index}`);
  return ENTRY_PREFIX + index.toString(16).padStart(16, '0');
}

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

/** LevelDB-backed RaftStorage. Create with `LevelRaftStorage.open`. */
export class LevelRaftStorage implements RaftStorage {
  readonly #db: Level<string, Uint8Array>;
  readonly #packr = createPackr();
  readonly #log: Logger | undefined;
  /** Last index written (or queued); writes keep the log contiguous from 1 to here. */
  #lastIndex: LogIndex = asIndex(0);
  /** Last hard state written (or queued). */
  #hardState: HardState = EMPTY_HARD_STATE;
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
    const db = new Level<string, Uint8Array>(options.dataDir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    try {
      await db.open();
    } catch (err) {
      throw new Error(`cannot open raft data directory ${options.dataDir} (in use by another process?)`, {
        cause: err,
      });
    }
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
    const ok = typeof found === 'object' && found !== null && 'clusterId' in found && 'nodeId' in found;
    const foundId = ok
      ? { clusterId: String(found.clusterId), nodeId: String(found.nodeId) }
      : { clusterId: '?', nodeId: '?' };
    if (foundId.clusterId !== expected.clusterId || foundId.nodeId !== expected.nodeId) {
      throw new StorageIdentityError(options.dataDir, expected, foundId);
    }
  }

  /** Reads hard state and the whole log. Throws a plain Error on corrupt records. */
  async recover(): Promise<CoreInitialState> {
    assert.ok(!this.#recovered, 'recover() called twice');
    this.#recovered = true;
    const hardState = await this.readHardState();
    const entries = await this.readEntries();
    checkRecovered(hardState, entries);
    this.#hardState = hardState;
    this.#lastIndex = asIndex(entries.length);
    this.#log?.info(
      { term: hardState.term, commitIndex: hardState.commitIndex, lastIndex: entries.length },
      'recovered raft storage',
    );
    return { hardState, snapshot: null, entries };
  }

  async readHardState(): Promise<HardState> {
    const raw = await this.#db.get(HARD_STATE_KEY);
    if (raw === undefined) return EMPTY_HARD_STATE;
    const hardState = parseHardState(this.#packr.unpack(raw));
    if (hardState === null) throw new Error('corrupt hard state record');
    return hardState;
  }

  async readEntries(): Promise<readonly Entry[]> {
    const entries: Entry[] = [];
    for await (const [key, raw] of this.#db.iterator({ gte: ENTRY_PREFIX, lt: ENTRY_RANGE_END })) {
      const entry = parseEntry(this.#packr.unpack(raw));
      if (entry === null || entryKey(entry.index) !== key) throw new Error(`corrupt log record ${key}`);
      entries.push(entry);
    }
    return entries;
  }

  lastIndex(): LogIndex {
    return this.#lastIndex;
  }

  appendEntries(entries: readonly Entry[]): Promise<void> {
    return this.persist({ hardState: null, entries });
  }

  saveHardState(hardState: HardState): Promise<void> {
    return this.persist({ hardState, entries: [] });
  }

  /** Hard state and entries in ONE LevelDB batch, fsynced (sync:true) unless only commitIndex moved — see RaftStorage. */
  persist(batch: PersistBatch): Promise<void> {
    assert.ok(!this.#closed, 'persist after close');
    const previous = this.#hardState;
    const ops = this.#batchOps(batch);
    if (ops.length === 0) return this.#tail;
    // Raft needs term, votedFor and entries durable before anything depending on them is sent.
    // A commitIndex-only change is not such a fact (Figure 2 keeps commitIndex volatile): it is
    // written without fsync — LevelDB keeps its write order, so a crash loses at most a suffix of
    // those and replay on restart merely stops earlier.
    const hs = batch.hardState;
    const sync =
      batch.entries.length > 0 ||
      (hs !== null && (hs.term !== previous.term || hs.votedFor !== previous.votedFor));
    const write = this.#tail.then(() => this.#db.batch(ops, { sync }));
    this.#tail = write;
    return write;
  }

  #batchOps(batch: PersistBatch): Op[] {
    const ops: Op[] = [];
    const first = batch.entries[0];
    if (first !== undefined) {
      assert.ok(
        first.index >= 1 && first.index <= this.#lastIndex + 1,
        `append at ${first.index} after ${this.#lastIndex}`,
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
      ops.push({ type: 'put', key: HARD_STATE_KEY, value: this.#packr.pack(batch.hardState) });
    }
    return ops;
  }

  /** Waits for queued writes, then closes LevelDB. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#tail.catch(() => undefined);
    await this.#db.close();
  }
}

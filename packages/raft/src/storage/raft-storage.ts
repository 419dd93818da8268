/**
 * RaftStorage: LogStorage + StableStorage with the one operation Raft needs to be atomic —
 * persisting a Ready's hard state and entries together (etcd-io/raft's "save" step).
 */
import assert from 'node:assert/strict';
import type { CoreInitialState, Entry, HardState, LogIndex } from '../core/types.js';
import { MemoryLogStorage, type LogStorage } from './log-storage.js';
import { MemoryStableStorage, type StableStorage } from './stable-storage.js';

/** One durable write: a Ready's `hardState` (null = unchanged) and `entries` (may be empty). */
export interface PersistBatch {
  readonly hardState: HardState | null;
  readonly entries: readonly Entry[];
}

/**
 * Storage of one node. Contract (in addition to LogStorage and StableStorage):
 * - `persist(batch)` writes hard state and entries in ONE atomic write: after a crash either both
 *   are on disk or neither is. Writes are applied in call order. It is fsynced before resolving
 *   whenever it carries entries or a new term/votedFor; a change of commitIndex alone may be
 *   left unsynced (commitIndex is volatile in Raft Figure 2; losing it only shortens replay).
 * - `recover()` returns what a core starts from; call once, before any write.
 * - `close()` waits for pending writes, then releases the directory. Idempotent.
 * - Errors: write failures reject and are fatal for the runtime; identity problems on open throw
 *   StorageIdentityError.
 */
export interface RaftStorage extends LogStorage, StableStorage {
  persist(batch: PersistBatch): Promise<void>;
  recover(): Promise<CoreInitialState>;
  close(): Promise<void>;
}

/**
 * Checks what storage recovered (decode-then-validate for disk reads): contiguous entries from 1,
 * terms never decreasing, commitIndex within the log. Throws a plain Error (corruption) otherwise.
 */
export function checkRecovered(hardState: HardState, entries: readonly Entry[]): void {
  let previousTerm = 0;
  entries.forEach((entry, position) => {
    if (entry.index !== position + 1)
      throw new Error(`corrupt log: expected index ${position + 1}, found ${entry.index}`);
    if (entry.term < previousTerm) throw new Error(`corrupt log: term decreases at index ${entry.index}`);
    previousTerm = entry.term;
  });
  if (hardState.commitIndex > entries.length) {
    throw new Error(
      `corrupt storage: commitIndex ${hardState.commitIndex} beyond last index ${entries.length}`,
    );
  }
}

/** In-memory RaftStorage (tests, simulator): composes the in-memory log and stable storages. */
export class MemoryRaftStorage implements RaftStorage {
  readonly #log = new MemoryLogStorage();
  readonly #stable = new MemoryStableStorage();
  #closed = false;

  readEntries(): Promise<readonly Entry[]> {
    return this.#log.readEntries();
  }
  lastIndex(): LogIndex {
    return this.#log.lastIndex();
  }
  appendEntries(entries: readonly Entry[]): Promise<void> {
    return this.persist({ hardState: null, entries });
  }
  readHardState(): Promise<HardState> {
    return this.#stable.readHardState();
  }
  saveHardState(hardState: HardState): Promise<void> {
    return this.persist({ hardState, entries: [] });
  }

  async persist(batch: PersistBatch): Promise<void> {
    assert.ok(!this.#closed, 'persist after close');
    await this.#log.appendEntries(batch.entries);
    if (batch.hardState !== null) await this.#stable.saveHardState(batch.hardState);
  }

  async recover(): Promise<CoreInitialState> {
    const hardState = await this.#stable.readHardState();
    const entries = await this.#log.readEntries();
    checkRecovered(hardState, entries);
    return { hardState, snapshot: null, entries };
  }

  /** Reopen after close (simulates a restart that keeps the "disk"). */
  reopen(): void {
    this.#closed = false;
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }
}

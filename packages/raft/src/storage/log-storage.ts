/**
 * LogStorage: the durable Raft log (hashicorp/raft's LogStore, etcd-io/raft's Storage).
 */
import assert from 'node:assert/strict';
import type { Entry, LogIndex } from '../core/types.js';
import { asIndex } from '../core/types.js';

/**
 * The persisted log. Contract:
 * - Ordering: entries are kept contiguous in index order from the first one not compacted away
 *   (1 without snapshots; see RaftStorage.compactLog) to `lastIndex()`.
 * - `appendEntries(entries)`: `entries` are contiguous and `entries[0].index ≤ lastIndex() + 1`;
 *   an entry at an existing index replaces it AND every entry after it (conflicting suffix,
 *   Raft §5.3). Durable (fsynced) once the promise resolves; writes resolve in call order.
 * - Errors: a rejected write leaves the log in an unknown prefix state; the runtime treats that as
 *   fatal (the process must stop and recover from disk).
 */
export interface LogStorage {
  /** All stored entries, in index order (recovery); after compaction they start past index 1. */
  readEntries(): Promise<readonly Entry[]>;
  /** Index of the last stored entry, 0 when empty. */
  lastIndex(): LogIndex;
  appendEntries(entries: readonly Entry[]): Promise<void>;
}

/**
 * Applies an append with Raft's truncation rule to an in-memory array of entries (index i at
 * position i - 1). Shared by the in-memory storages. Throws (assertion) on a gap.
 */
export function appendWithTruncation(log: Entry[], entries: readonly Entry[]): void {
  const first = entries[0];
  if (first === undefined) return;
  assert.ok(
    first.index >= 1 && first.index <= log.length + 1,
    `append at ${first.index} leaves a gap after ${log.length}`,
  );
  log.length = first.index - 1; // drop the conflicting suffix (Raft §5.3)
  for (const entry of entries) {
    assert.equal(entry.index, log.length + 1, 'entries must be contiguous');
    log.push(entry);
  }
}

/** In-memory LogStorage for tests: "durable" for the life of the object. */
export class MemoryLogStorage implements LogStorage {
  readonly #entries: Entry[] = [];

  readEntries(): Promise<readonly Entry[]> {
    return Promise.resolve([...this.#entries]);
  }

  lastIndex(): LogIndex {
    return asIndex(this.#entries.length);
  }

  appendEntries(entries: readonly Entry[]): Promise<void> {
    appendWithTruncation(this.#entries, entries);
    return Promise.resolve();
  }
}

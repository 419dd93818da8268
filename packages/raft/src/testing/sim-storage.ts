/**
 * Simulated per-node storage with a volatile layer and an fsync point, modelling the runtime's disk.
 *
 * What a Ready says to persist is first staged (volatile, like a write in the page cache); `fsync()`
 * makes it durable; a crash (`dropUnsynced()`) loses what was staged but not synced. A restart reads
 * only the durable layer. Writes follow types.ts's Ready rule: an entry at an existing index replaces
 * that index and everything after it.
 */
import assert from 'node:assert/strict';
import type { CoreInitialState, Entry, HardState, LogIndex, Term } from '../core/types.js';
import type { LogView } from './checkers.js';
import { asIndex, asTerm } from '../core/types.js';

/** The hard state of a node that has never run. */
export const EMPTY_HARD_STATE: HardState = {
  term: asTerm(0),
  votedFor: null,
  commitIndex: asIndex(0),
};

interface StagedWrite {
  readonly hardState: HardState | null;
  readonly entries: readonly Entry[];
}

/**
 * Durable state of one node: hard state and log (no snapshots: the simulator never compacts, so the
 * log starts at index 1). Staged writes are applied in order at `fsync()`.
 */
export class SimStorage {
  #hardState: HardState = EMPTY_HARD_STATE;
  /** Durable log; `#log[i - 1]` is the entry at index i. */
  readonly #log: Entry[] = [];
  #staged: StagedWrite[] = [];

  /** Erase everything, staged writes included (a wiped or lost data directory). */
  wipe(): void {
    this.#hardState = EMPTY_HARD_STATE;
    this.#log.length = 0;
    this.#staged = [];
  }

  /** Durable hard state. */
  get hardState(): HardState {
    return this.#hardState;
  }

  /** Index of the last durable entry (0 when empty). */
  get lastIndex(): LogIndex {
    return asIndex(this.#log.length);
  }

  /** Durable entry at `index`, or undefined. */
  entryAt(index: number): Entry | undefined {
    return index >= 1 ? this.#log[index - 1] : undefined;
  }

  /** Term of the durable entry at `index`; 0 for index 0. Undefined past the end. */
  termAt(index: number): Term | undefined {
    if (index === 0) return asTerm(0);
    return this.#log[index - 1]?.term;
  }

  /**
   * The log as the running core sees it: durable entries with the staged writes applied on top
   * (what a read from the page cache would return). Valid until the next stage/fsync.
   */
  readonly volatileView: LogView = ((storage: SimStorage): LogView => ({
    get lastIndex(): LogIndex {
      return storage.volatileLastIndex();
    },
    entryAt: (index: number) => storage.volatileEntryAt(index),
    termAt: (index: number) => (index === 0 ? asTerm(0) : storage.volatileEntryAt(index)?.term),
  }))(this);

  /** Last index of the volatile view. */
  volatileLastIndex(): LogIndex {
    let last = this.#log.length;
    for (const w of this.#staged) {
      const first = w.entries[0];
      if (first !== undefined) last = first.index - 1 + w.entries.length;
    }
    return asIndex(last);
  }

  /** Entry at `index` in the volatile view. */
  volatileEntryAt(index: number): Entry | undefined {
    for (let k = this.#staged.length - 1; k >= 0; k--) {
      const entries = this.#staged[k]!.entries;
      const first = entries[0];
      if (first === undefined || first.index > index) continue;
      return entries[index - first.index];
    }
    return this.entryAt(index);
  }

  /** True when writes are staged but not yet durable. */
  get hasUnsynced(): boolean {
    return this.#staged.length > 0;
  }

  /** Stage a Ready's persistence (volatile until `fsync`). */
  stage(hardState: HardState | null, entries: readonly Entry[]): void {
    if (hardState === null && entries.length === 0) return;
    this.#staged.push({ hardState, entries });
  }

  /**
   * Make every staged write durable, in order. Returns the lowest index whose entry was written
   * (replaced or appended), or null when no entries were written. Throws (assertion) if a write would
   * leave a gap in the log — a Ready contract violation by the core.
   */
  fsync(): LogIndex | null {
    let lowestWritten: number | null = null;
    for (const write of this.#staged) {
      if (write.hardState !== null) this.#hardState = write.hardState;
      const first = write.entries[0];
      if (first === undefined) continue;
      assert.ok(
        first.index >= 1 && first.index <= this.#log.length + 1,
        `Ready.entries start at ${first.index} but the log ends at ${this.#log.length} (gap)`,
      );
      this.#log.length = first.index - 1;
      for (const e of write.entries) {
        assert.equal(e.index, this.#log.length + 1, 'Ready.entries are not contiguous');
        this.#log.push(e);
      }
      lowestWritten = lowestWritten === null ? first.index : Math.min(lowestWritten, first.index);
    }
    this.#staged = [];
    return lowestWritten === null ? null : asIndex(lowestWritten);
  }

  /** A crash: everything staged since the last fsync is lost. */
  dropUnsynced(): void {
    this.#staged = [];
  }

  /**
   * Overwrite the durable hard state (fault injection only: a node that restarts with a higher term
   * and no vote, a state reachable by receiving a higher-term RequestVote it rejected).
   */
  forceHardState(hardState: HardState): void {
    assert.ok(!this.hasUnsynced, 'forceHardState with unsynced writes');
    this.#hardState = hardState;
  }

  /** What a restarting core recovers: the durable hard state and log. */
  initialState(): CoreInitialState {
    return { hardState: this.#hardState, snapshot: null, entries: this.#log.slice() };
  }
}

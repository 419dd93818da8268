/**
 * StableStorage: the durable hard state (term, votedFor, commitIndex — Raft Figure 2).
 */
import type { HardState } from '../core/types.js';
import { asIndex, asTerm } from '../core/types.js';

/** The hard state of a node that never ran: term 0, no vote, nothing committed. */
export const EMPTY_HARD_STATE: HardState = {
  term: asTerm(0),
  votedFor: null,
  commitIndex: asIndex(0),
};

/**
 * The persisted hard state. Contract:
 * - `saveHardState` is durable (fsynced) once its promise resolves; saves resolve in call order and
 *   the last one wins. No message depending on it may be sent before then (Raft Figure 2).
 * - `readHardState` returns the last saved value, or EMPTY_HARD_STATE for a fresh node.
 * - Errors: a rejected save is fatal for the runtime (stop, recover from disk).
 */
export interface StableStorage {
  readHardState(): Promise<HardState>;
  saveHardState(hardState: HardState): Promise<void>;
}

/** In-memory StableStorage for tests. */
export class MemoryStableStorage implements StableStorage {
  #hardState: HardState = EMPTY_HARD_STATE;

  readHardState(): Promise<HardState> {
    return Promise.resolve(this.#hardState);
  }

  saveHardState(hardState: HardState): Promise<void> {
    this.#hardState = hardState;
    return Promise.resolve();
  }
}

/**
 * Read barriers waiting on the leader (RaftNode.readBarrier, ReadIndex of Raft §6.4): each gets a
 * request id the core echoes back; the core's ReadState gives it the read index (leadership
 * confirmed by a quorum), and it resolves once this node has applied that index.
 */
import assert from 'node:assert/strict';
import type { LogIndex, NodeId, ReadFailure, ReadState } from './core/types.js';
import { NotLeaderError, ResourceExhaustedError } from './errors.js';
import { Pending } from './pending.js';

/** `index` is null until the core answers with a ReadState. */
interface PendingRead {
  index: LogIndex | null;
  readonly pending: Pending<LogIndex>;
}

export class ReadTracker {
  /** requestId → read; at most `readsPendingMax`. */
  readonly #byRequestId = new Map<number, PendingRead>();
  /** Last request id handed out; ids are never reused while the node runs. */
  #requestSeq = 0;
  readonly #readsPendingMax: number;

  /** @param readsPendingMax bound on reads in flight (RaftNodeOptions) */
  constructor(readsPendingMax: number) {
    this.#readsPendingMax = readsPendingMax;
  }

  get size(): number {
    return this.#byRequestId.size;
  }

  /** The error to reject a new read with when the tracker is full; null if there is room. */
  full(): ResourceExhaustedError | null {
    if (this.#byRequestId.size < this.#readsPendingMax) return null;
    return new ResourceExhaustedError(`${this.#byRequestId.size} reads pending (readsPendingMax)`);
  }

  /**
   * Registers a read; the caller hands `requestId` to the core (RaftCore.readIndex). The promise
   * resolves with the read index once applied, or rejects (NotLeaderError, TimeoutError).
   */
  start(
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): { requestId: number; promise: Promise<LogIndex> } {
    const requestId = ++this.#requestSeq;
    const pending = new Pending<LogIndex>(timeoutMs, signal, () =>
      this.#byRequestId.delete(requestId),
    );
    this.#byRequestId.set(requestId, { index: null, pending });
    return { requestId, promise: pending.promise };
  }

  /** The core's answers of one Ready: read indices confirmed, or reads it could not serve. */
  answered(readStates: readonly ReadState[], readFailures: readonly ReadFailure[]): void {
    for (const readState of readStates) {
      const read = this.#byRequestId.get(readState.requestId);
      if (read !== undefined) read.index = readState.index;
    }
    for (const failure of readFailures) {
      this.#byRequestId
        .get(failure.requestId)
        ?.pending.reject(new NotLeaderError(failure.leaderHint));
      this.#byRequestId.delete(failure.requestId);
    }
  }

  /** Resolves every confirmed read whose index is ≤ `appliedIndex`. */
  serve(appliedIndex: LogIndex): void {
    for (const [requestId, read] of this.#byRequestId) {
      if (read.index !== null && read.index <= appliedIndex) {
        read.pending.resolve(read.index);
        this.#byRequestId.delete(requestId);
      }
    }
  }

  /** Leadership lost: reads not yet confirmed cannot be any more (NotLeaderError). */
  failUnconfirmed(leaderHint: NodeId | null): void {
    for (const [requestId, read] of this.#byRequestId) {
      if (read.index === null) {
        read.pending.reject(new NotLeaderError(leaderHint));
        this.#byRequestId.delete(requestId);
      }
    }
  }

  /** Rejects every read with `err` (the node stopped) and forgets them. */
  failAll(err: Error): void {
    for (const read of this.#byRequestId.values()) read.pending.reject(err);
    this.#byRequestId.clear();
  }

  checkInvariants(): void {
    assert.ok(this.#byRequestId.size <= this.#readsPendingMax, 'reads within readsPendingMax');
  }
}

/**
 * ReadOnlyQueue: the leader's pending ReadIndex requests (Raft dissertation §6.4).
 *
 * Two stages, both FIFO and bounded by `readRequestsPendingMax` in total:
 * - waiting: received before the leader committed an entry of its term; they get their read index
 *   only once it has (its commitIndex may be stale before that).
 * - confirming: have a read index (commitIndex when admitted) and the heartbeatSeq a majority must
 *   echo to confirm leadership. `seq` is non-decreasing along the queue, so confirmation pops a prefix.
 */
import assert from 'node:assert/strict';
import type { LogIndex, ReadState } from './types.js';

/** Most ReadIndex requests a leader holds at once; beyond it requests fail at once. */
export const readRequestsPendingMax = 65_536;

interface PendingRead {
  readonly requestId: number;
  readonly index: LogIndex;
  readonly seq: number;
}

/** Pending ReadIndex requests of one leader term, bounded by readRequestsPendingMax. */
export class ReadOnlyQueue {
  #waiting: number[] = [];
  #confirming: PendingRead[] = [];
  /** Index of the first live element of #confirming (popping a prefix without O(n) shifts). */
  #head = 0;

  size(): number {
    return this.#waiting.length + this.#confirming.length - this.#head;
  }
  isFull(): boolean {
    return this.size() >= readRequestsPendingMax;
  }

  /** Park a request until the leader commits an entry of its term. */
  addWaiting(requestId: number): void {
    assert.ok(!this.isFull(), 'read queue full');
    this.#waiting.push(requestId);
  }

  /** Admit a request with read index `index`, confirmed once a majority echoes heartbeatSeq ≥ `seq`. */
  addConfirming(requestId: number, index: LogIndex, seq: number): void {
    assert.ok(!this.isFull(), 'read queue full');
    const tail = this.#confirming[this.#confirming.length - 1];
    assert.ok(
      this.#confirming.length === this.#head || tail === undefined || tail.seq <= seq,
      'read seqs ordered',
    );
    this.#confirming.push({ requestId, index, seq });
  }

  /** Move every waiting request to confirming with read index `index` and seq `seq`. */
  admitWaiting(index: LogIndex, seq: number): number {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const requestId of waiting) this.addConfirming(requestId, index, seq);
    return waiting.length;
  }

  /** Highest seq any confirming request waits for (0 if none). */
  maxPendingSeq(): number {
    return this.#confirming.length > this.#head
      ? this.#confirming[this.#confirming.length - 1]!.seq
      : 0;
  }

  /** Pop every request whose seq ≤ `quorumAckedSeq` as a ReadState. */
  confirm(quorumAckedSeq: number): ReadState[] {
    const out: ReadState[] = [];
    while (this.#head < this.#confirming.length) {
      const read = this.#confirming[this.#head]!;
      if (read.seq > quorumAckedSeq) break;
      out.push({ requestId: read.requestId, index: read.index });
      this.#head++;
    }
    if (this.#head === this.#confirming.length) {
      this.#confirming = [];
      this.#head = 0;
    }
    return out;
  }

  /** Remove and return the ids of every pending request (on losing leadership). */
  drainAll(): number[] {
    const ids = this.#waiting.slice();
    for (let i = this.#head; i < this.#confirming.length; i++)
      ids.push(this.#confirming[i]!.requestId);
    this.#waiting = [];
    this.#confirming = [];
    this.#head = 0;
    return ids;
  }
}

/**
 * Progress: the leader's view of one follower's log (Raft §5.3 nextIndex/matchIndex), with the
 * etcd-io/raft flow-control states:
 * - `probe`: nextIndex is a guess; at most one AppendEntries in flight until a response or heartbeat
 *   response arrives (after a rejection, or when the leader starts).
 * - `replicate`: nextIndex is advanced optimistically as messages are sent; at most
 *   `inflightMessagesMax` messages carrying entries are in flight (the pipelining window).
 *
 * Invariants: 0 ≤ matchIndex < nextIndex; inflight holds strictly increasing last-indices,
 * each > matchIndex, at most inflightMessagesMax of them, and is empty in `probe`.
 */
import assert from 'node:assert/strict';

export type ProgressState = 'probe' | 'replicate';

/** The leader's replication state for one follower (see the file comment for states and invariants). */
export class Progress {
  /** Highest index known replicated on the follower (Raft §5.3). Only increases while leading. */
  matchIndex = 0;
  /** Index of the next entry to send. Optimistic in `replicate`, a guess in `probe`. */
  nextIndex: number;
  state: ProgressState = 'probe';
  /** `probe` only: a probe is in flight, so sending is paused until a response. */
  probeSent = false;
  /** Last index carried by each in-flight AppendEntries with entries, oldest first. */
  readonly #inflight: number[] = [];
  readonly #inflightMax: number;
  /** Core tick count when the last response from this follower arrived (-1: never). */
  lastAckTick = -1;
  /** Highest heartbeatSeq echoed by the follower in this term (ReadIndex confirmation, §6.4). */
  ackedHeartbeatSeq = 0;
  /** heartbeatSeq of the last AppendEntries sent to this follower. */
  lastSentSeq = 0;
  /** heartbeatSeq of the last AppendEntries with entries sent to this follower. */
  lastEntriesSeq = 0;
  /** Rejections answering messages with a heartbeatSeq below this are stale and ignored. */
  rejectFloorSeq = 0;
  /** Highest index the follower may commit by the messages sent so far (min(leaderCommit, last sent)). */
  commitSentIndex = 0;

  constructor(nextIndex: number, inflightMax: number) {
    assert.ok(nextIndex >= 1 && inflightMax >= 1);
    this.nextIndex = nextIndex;
    this.#inflightMax = inflightMax;
  }

  /** True if no AppendEntries with entries may be sent now (flow control). */
  isPaused(): boolean {
    return this.state === 'probe' ? this.probeSent : this.#inflight.length >= this.#inflightMax;
  }

  inflightCount(): number {
    return this.#inflight.length;
  }

  /** Record a sent AppendEntries whose last entry is `lastIndex` (prevLogIndex if it carried none). */
  onSent(lastIndex: number, carriedEntries: boolean): void {
    if (this.state === 'probe') {
      this.probeSent = true;
      return;
    }
    if (!carriedEntries) return;
    assert.ok(lastIndex >= this.nextIndex, 'replicate: sent entries must advance nextIndex');
    this.nextIndex = lastIndex + 1;
    this.#inflight.push(lastIndex);
  }

  /** Follower acknowledged `matchIndex`; returns true if it raised matchIndex. Frees the window. */
  maybeUpdate(matchIndex: number): boolean {
    let updated = false;
    if (matchIndex > this.matchIndex) {
      this.matchIndex = matchIndex;
      updated = true;
      this.probeSent = false;
    }
    if (this.nextIndex < matchIndex + 1) this.nextIndex = matchIndex + 1;
    while (this.#inflight.length > 0 && this.#inflight[0]! <= matchIndex) this.#inflight.shift();
    return updated;
  }

  /** Switch to `probe`, resending from `nextIndex` (clamped above matchIndex). */
  becomeProbe(nextIndex: number): void {
    this.state = 'probe';
    this.probeSent = false;
    this.nextIndex = Math.max(this.matchIndex + 1, nextIndex);
    this.#inflight.length = 0;
  }

  /** Switch to `replicate` after the follower's log was found to match at matchIndex. */
  becomeReplicate(): void {
    this.state = 'replicate';
    this.probeSent = false;
    this.nextIndex = this.matchIndex + 1;
    this.#inflight.length = 0;
  }

  /** Throws (assertion) if a relation in the class comment is broken. */
  checkInvariants(lastIndex: number): void {
    assert.ok(this.matchIndex >= 0 && this.matchIndex < this.nextIndex, 'matchIndex < nextIndex');
    assert.ok(this.matchIndex <= lastIndex, 'matchIndex ≤ leader lastIndex');
    assert.ok(this.nextIndex <= lastIndex + 1, 'nextIndex ≤ lastIndex + 1');
    assert.ok(this.#inflight.length <= this.#inflightMax, 'inflight window bounded');
    if (this.state === 'probe') assert.equal(this.#inflight.length, 0, 'no inflight window in probe');
  }
}

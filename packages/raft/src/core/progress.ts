/**
 * Progress: the leader's view of one follower's log (Raft §5.3 nextIndex/matchIndex), with the
 * etcd-io/raft flow-control states:
 * - `probe`: nextIndex is a guess; at most one AppendEntries in flight until a response or heartbeat
 *   response arrives (after a rejection, or when the leader starts).
 * - `replicate`: nextIndex is advanced optimistically as messages are sent; at most
 *   `inflightMessagesMax` messages carrying entries are in flight (the pipelining window).
 * - `snapshot`: the follower needs entries the leader compacted away; an InstallSnapshot for
 *   `pendingSnapshotIndex` was sent at tick `snapshotSentTick` and nothing else is sent (only
 *   heartbeats) until it is answered, the follower's match reaches it, or the retry timeout
 *   sends it back to `probe` (Raft §7; etcd-io/raft's StateSnapshot).
 *
 * Invariants: 0 ≤ matchIndex < nextIndex; inflight holds strictly increasing last-indices,
 * each > matchIndex, at most inflightMessagesMax of them, and is empty outside `replicate`;
 * pendingSnapshotIndex is > 0 (and ≤ the leader's lastIndex) exactly in `snapshot`.
 */
import assert from 'node:assert/strict';

export type ProgressState = 'probe' | 'replicate' | 'snapshot';

/** The leader's replication state for one follower (see the file comment for states and invariants). */
export class Progress {
  /**
   * Highest index known replicated on the follower (Raft §5.3). Only increases while leading, except
   * `resetMatch` when the follower proves it lost data (its log ends below matchIndex).
   */
  matchIndex = 0;
  /** heartbeatSeq of the acknowledgement that last raised matchIndex (older rejections are stale). */
  matchSeq = 0;
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
  /**
   * Core tick count when this follower was added by a membership change while this node led (-1:
   * it was a member at election). Check-quorum counts it as heard from then, as every voter is at
   * election; it never counts as an answer (a member never heard from is not reachable).
   */
  addedTick = -1;
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
  /** `snapshot` only: meta.index of the InstallSnapshot in flight (0 otherwise). */
  pendingSnapshotIndex = 0;
  /** `snapshot` only: core tick at which it was sent (for the retry timeout). */
  snapshotSentTick = 0;

  constructor(nextIndex: number, inflightMax: number) {
    assert.ok(nextIndex >= 1 && inflightMax >= 1);
    this.nextIndex = nextIndex;
    this.#inflightMax = inflightMax;
  }

  /** True if no AppendEntries with entries may be sent now (flow control). */
  isPaused(): boolean {
    if (this.state === 'snapshot') return true;
    return this.state === 'probe' ? this.probeSent : this.#inflight.length >= this.#inflightMax;
  }

  inflightCount(): number {
    return this.#inflight.length;
  }

  /** Record a sent AppendEntries whose last entry is `lastIndex` (prevLogIndex if it carried none). */
  onSent(lastIndex: number, carriedEntries: boolean): void {
    assert.notEqual(
      this.state,
      'snapshot',
      'no AppendEntries with entries while a snapshot is in flight',
    );
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
    this.pendingSnapshotIndex = 0;
    this.nextIndex = Math.max(this.matchIndex + 1, nextIndex);
    this.#inflight.length = 0;
  }

  /**
   * The follower answered with a log shorter than matchIndex (a wiped or lost disk): forget what it
   * was known to hold and probe from the start again; the caller then backtracks from its hints.
   */
  resetMatch(): void {
    this.matchIndex = 0;
    this.matchSeq = 0;
    this.commitSentIndex = 0;
    this.becomeProbe(1);
  }

  /** Switch to `snapshot`: an InstallSnapshot for `snapshotIndex` (> matchIndex) was sent at `tick`. */
  becomeSnapshot(snapshotIndex: number, tick: number): void {
    assert.ok(snapshotIndex > this.matchIndex, 'snapshot must cover more than the follower has');
    this.state = 'snapshot';
    this.probeSent = false;
    this.pendingSnapshotIndex = snapshotIndex;
    this.snapshotSentTick = tick;
    this.#inflight.length = 0;
  }

  /** Switch to `replicate` after the follower's log was found to match at matchIndex. */
  becomeReplicate(): void {
    this.state = 'replicate';
    this.probeSent = false;
    this.pendingSnapshotIndex = 0;
    this.nextIndex = this.matchIndex + 1;
    this.#inflight.length = 0;
  }

  /** Throws (assertion) if a relation in the class comment is broken. */
  checkInvariants(lastIndex: number): void {
    assert.ok(this.matchIndex >= 0 && this.matchIndex < this.nextIndex, 'matchIndex < nextIndex');
    assert.ok(this.matchIndex <= lastIndex, 'matchIndex ≤ leader lastIndex');
    assert.ok(this.nextIndex <= lastIndex + 1, 'nextIndex ≤ lastIndex + 1');
    assert.ok(this.#inflight.length <= this.#inflightMax, 'inflight window bounded');
    if (this.state !== 'replicate')
      assert.equal(this.#inflight.length, 0, 'no inflight window outside replicate');
    if (this.state === 'snapshot') {
      assert.ok(
        this.pendingSnapshotIndex > 0 && this.pendingSnapshotIndex <= lastIndex,
        'pending snapshot within log',
      );
    } else {
      assert.equal(this.pendingSnapshotIndex, 0, 'pendingSnapshotIndex only in snapshot state');
    }
  }
}

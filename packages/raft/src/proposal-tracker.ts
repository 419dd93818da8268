/**
 * Proposals waiting for their entry to be applied (RaftNode.propose). A proposal is known by the
 * (index, term) the leader gave its entry: when the entry at `index` is applied it succeeds if the
 * entry's term is ours, and fails with NotLeaderError if another leader's entry took the index —
 * ours is then not in the log and never will be (Raft §5.3, §5.4.2).
 */
import assert from 'node:assert/strict';
import type { Applied } from './api.js';
import type { Entry, LogIndex, NodeId, Term } from './core/types.js';
import { NotLeaderError, ResourceExhaustedError, TimeoutError } from './errors.js';
import { Pending } from './pending.js';

interface PendingProposal<R> {
  readonly term: Term;
  readonly pending: Pending<Applied<R>>;
}

export class ProposalTracker<R> {
  /** index → proposal; at most `proposalsPendingMax`, every index above the applied index. */
  readonly #byIndex = new Map<number, PendingProposal<R>>();
  readonly #proposalsPendingMax: number;

  /** @param proposalsPendingMax bound on proposals in flight (RaftNodeOptions) */
  constructor(proposalsPendingMax: number) {
    this.#proposalsPendingMax = proposalsPendingMax;
  }

  get size(): number {
    return this.#byIndex.size;
  }

  /** The error to reject a new proposal with when the tracker is full; null if there is room. */
  full(): ResourceExhaustedError | null {
    if (this.#byIndex.size < this.#proposalsPendingMax) return null;
    return new ResourceExhaustedError(
      `${this.#byIndex.size} proposals pending (proposalsPendingMax)`,
    );
  }

  /**
   * Waits for the entry the core appended at (index, term). An older-term proposal at the same
   * index was overwritten by this leader's entry (§5.4.2): it fails with NotLeaderError(selfId).
   * The promise rejects with TimeoutError at the deadline or on abort.
   */
  track(
    index: LogIndex,
    term: Term,
    selfId: NodeId,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<Applied<R>> {
    const previous = this.#byIndex.get(index);
    if (previous !== undefined) {
      assert.ok(previous.term < term, 'two proposals of one term at one index');
      previous.pending.reject(new NotLeaderError(selfId));
    }
    const pending = new Pending<Applied<R>>(timeoutMs, signal, () => {
      if (this.#byIndex.get(index)?.pending === pending) this.#byIndex.delete(index);
    });
    this.#byIndex.set(index, { term, pending });
    return pending.promise;
  }

  /** The entry at `entry.index` was applied with `result`: settles the proposal waiting there. */
  applied(entry: Entry, result: R, leaderHint: NodeId | null): void {
    const proposal = this.#byIndex.get(entry.index);
    if (proposal === undefined) return;
    this.#byIndex.delete(entry.index);
    if (proposal.term === entry.term) {
      proposal.pending.resolve({ index: entry.index, clusterTimeMs: entry.clusterTimeMs, result });
    } else {
      proposal.pending.reject(new NotLeaderError(leaderHint));
    }
  }

  /**
   * An installed snapshot covers every index ≤ `snapshotIndex`: those proposals cannot be matched
   * to their entries any more and fail with TimeoutError (outcome unknown; retry with the
   * idempotency key, docs/api.md).
   */
  compacted(snapshotIndex: LogIndex): void {
    for (const [index, proposal] of this.#byIndex) {
      if (index > snapshotIndex) continue;
      proposal.pending.reject(
        new TimeoutError('entry was compacted into a snapshot; outcome unknown'),
      );
      this.#byIndex.delete(index);
    }
  }

  /** Rejects every proposal with `err` (the node stopped) and forgets them. */
  failAll(err: Error): void {
    for (const proposal of this.#byIndex.values()) proposal.pending.reject(err);
    this.#byIndex.clear();
  }

  /** Asserts the bound and that nothing waits on an index already applied. */
  checkInvariants(appliedIndex: LogIndex): void {
    assert.ok(
      this.#byIndex.size <= this.#proposalsPendingMax,
      'proposals within proposalsPendingMax',
    );
    for (const index of this.#byIndex.keys())
      assert.ok(index > appliedIndex, 'no pending proposal at an applied index');
  }
}

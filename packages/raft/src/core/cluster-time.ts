/**
 * ClusterTime: one node's view of docs/concepts.md cluster time, kept per term.
 *
 * Each leader runs its own *timeline*: in term T it stamps entries (and heartbeats) with
 * `termStartClusterTimeMs + (clock.nowMs() − termStartMonoMs)`, i.e. at its clock's rate from a start
 * value fixed when it became leader. The property that matters (docs/concepts.md "no early expiry"): along
 * the committed log, cluster time never advances faster than real time (up to drift) — for committed
 * entries e1 < e2 stamped at real times r1 ≤ r2, ct(e2) − ct(e1) ≤ (r2 − r1) × (1 + maxDriftRatio).
 * Advancing slower is fine (that is the freeze while leaderless). Equivalently the *slack*
 * r × (1 + drift) − ct never decreases along the committed log. Within one timeline it cannot decrease
 * (the leader's clock rate is ≤ 1 + drift), so only the start value of a new term can break it.
 *
 * Why a single "highest cluster time ever seen" is wrong: timelines of different terms have different
 * slack. A leader of term 1 paused (SIGSTOP) for 6 s keeps its timeline running through the pause;
 * the term-2 leader elected meanwhile started from the last term-1 value it saw, frozen for the
 * leaderless gap, so its timeline is behind term 1's. When the old leader resumes it still reads its
 * own (term-1) timeline for a while; a max over everything keeps that value after it has followed
 * term 2 and had its stale entries truncated, and if it later wins term 3 it starts term 3 from it:
 * cluster time jumps forward along the committed log (term-2 entries, then term 3) and a lease
 * renewed in term 2 expires early. Mixing *any* two timelines in a max has the same problem.
 *
 * The rule (docs/concepts.md "the highest cluster time seen … in its log, or carried by the heartbeats of
 * earlier leaders", made precise): the node keeps a *reference* (refTerm, refMs) — the latest reading
 * it knows of the newest timeline it heard from: values carried by AppendEntries / InstallSnapshot of
 * a leader of term T (and its own readings while leading term T) replace the reference when
 * T > refTerm (even if lower), raise it when T = refTerm, and are ignored when T < refTerm. On
 * becoming leader, with the last log entry (lastTerm, lastMs) — which becomes the entry just before
 * the new term's first entry (its no-op) in the committed log if that no-op commits:
 *   termStartClusterTimeMs = max(refMs, lastMs)  if refTerm = lastTerm  (both readings of the
 *                                                 timeline that stamped the last entry, so the slack
 *                                                 is that entry's: an idle hour before a failover is
 *                                                 kept, docs/concepts.md);
 *                          = lastMs              otherwise (refTerm > lastTerm: the newer leader we
 *                                                 heard never got an entry into our log, and as we won
 *                                                 the election none of its entries is committed, so
 *                                                 its time never reached the committed log; using its
 *                                                 value would mix two timelines whose slack can differ
 *                                                 either way — freezing instead is safe, docs/concepts.md).
 * Either way termStart ≥ lastMs, so stamps never decrease along the log (RaftLog asserts it).
 *
 * A follower reports refMs: frozen while there is no leader (docs/concepts.md), and it may go *down* when
 * the node learns of a newer term whose timeline is behind the one it followed (the newest leader's
 * timeline is what counts). Invariants: (refTerm, refMs) never decreases lexicographically; a leader's
 * readings never decrease within its term; refTerm ≥ the last log entry's term; refMs ≥ the stamp of
 * every committed entry the node holds (raft-core checkInvariants).
 */
import assert from 'node:assert/strict';
import type { Clock, Term } from './types.js';

/** The latest known reading of the newest known leader timeline (see the file comment). */
export interface ClusterTimeReference {
  /** Term of the leader whose timeline the reading is on. */
  readonly term: Term;
  /** The reading, in cluster-time ms. */
  readonly ms: number;
}

/** docs/concepts.md cluster time of one node, per-term timelines (see the file comment). */
export class ClusterTime {
  readonly #clock: Clock;
  #refTerm: Term;
  #refMs: number;
  /** Term being led, or null when not leader. */
  #leadingTerm: Term | null = null;
  #termStartClusterTimeMs = 0;
  #termStartMonoMs = 0;

  /**
   * @param initialTerm term of the last log entry (or snapshot) recovered, 0 for an empty log.
   * @param initialMs its cluster time stamp (ms, finite, ≥ 0; assertion).
   */
  constructor(clock: Clock, initialTerm: Term, initialMs: number) {
    assert.ok(
      Number.isFinite(initialMs) && initialMs >= 0,
      'initial cluster time must be a finite ms count ≥ 0',
    );
    this.#clock = clock;
    this.#refTerm = initialTerm;
    this.#refMs = initialMs;
  }

  /**
   * Record a cluster time carried by a message from the leader of `term` (AppendEntries,
   * InstallSnapshot) or a log entry of that term: replaces the reference if `term` is newer, raises it
   * if the same term, ignored if older (docs/concepts.md; see the file comment).
   */
  observe(term: Term, clusterTimeMs: number): void {
    if (term > this.#refTerm) {
      this.#refTerm = term;
      this.#refMs = clusterTimeMs;
    } else if (term === this.#refTerm && clusterTimeMs > this.#refMs) {
      this.#refMs = clusterTimeMs;
    }
  }

  /**
   * Become leader of `term` (docs/concepts.md): fix termStartClusterTimeMs from the reference and the last log
   * entry (lastLogTerm, lastLogClusterTimeMs) as in the file comment, and termStartMonoMs =
   * clock.nowMs(). Throws (assertion) if `term` is not above both terms.
   */
  startLeading(term: Term, lastLogTerm: Term, lastLogClusterTimeMs: number): void {
    assert.ok(
      term > lastLogTerm && term > this.#refTerm,
      'a new term is newer than every timeline seen',
    );
    const startMs =
      this.#refTerm === lastLogTerm
        ? Math.max(this.#refMs, lastLogClusterTimeMs)
        : lastLogClusterTimeMs;
    this.#leadingTerm = term;
    this.#termStartClusterTimeMs = startMs;
    this.#termStartMonoMs = this.#clock.nowMs();
    this.observe(term, startMs);
  }

  stopLeading(): void {
    this.#leadingTerm = null;
  }

  /**
   * Current cluster time in ms. Leader: its timeline's reading now (never less than an earlier reading
   * in the term; recorded as the reference). Others: the reference (frozen between leaders).
   */
  nowMs(): number {
    if (this.#leadingTerm === null) return this.#refMs;
    // Whole milliseconds (docs/api.md durations are integers); flooring keeps cluster time a lower bound
    // of real elapsed time, so it can only make expiry later, never earlier (docs/concepts.md).
    const elapsedMs = Math.floor(this.#clock.nowMs() - this.#termStartMonoMs);
    assert.equal(
      this.#refTerm,
      this.#leadingTerm,
      'a leader hears of no newer timeline while leading',
    );
    const nowMs = Math.max(this.#refMs, this.#termStartClusterTimeMs + elapsedMs);
    this.#refMs = nowMs;
    return nowMs;
  }

  /** The reference (refTerm, refMs) without reading the clock. */
  reference(): ClusterTimeReference {
    return { term: this.#refTerm, ms: this.#refMs };
  }
}

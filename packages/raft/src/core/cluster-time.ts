/**
 * ClusterTime: one node's view of SPEC §2 cluster time.
 *
 * `highestSeenMs` is the maximum cluster time this node has seen: in entries it holds or appended,
 * in AppendEntries from leaders of its current term, and (as leader) in values it handed out itself.
 * A leader computes `termStartClusterTimeMs + (clock.nowMs() − termStartMonoMs)`, where the term start
 * values are fixed when it became leader; it never reports less than `highestSeenMs`. A follower
 * reports `highestSeenMs`, so cluster time is frozen while there is no leader (SPEC §1.5).
 * Invariant: every value returned by nowMs() is ≥ every earlier one.
 */
import assert from 'node:assert/strict';
import type { Clock } from './types.js';

/** SPEC §2 cluster time of one node; `nowMs()` never decreases (see the file comment). */
export class ClusterTime {
  readonly #clock: Clock;
  #highestSeenMs: number;
  #leading = false;
  #termStartClusterTimeMs = 0;
  #termStartMonoMs = 0;

  constructor(clock: Clock, initialMs: number) {
    assert.ok(
      Number.isFinite(initialMs) && initialMs >= 0,
      'initial cluster time must be a finite ms count ≥ 0',
    );
    this.#clock = clock;
    this.#highestSeenMs = initialMs;
  }

  /** Record a cluster time seen in the log or in a current-term leader's AppendEntries. */
  observe(clusterTimeMs: number): void {
    if (clusterTimeMs > this.#highestSeenMs) this.#highestSeenMs = clusterTimeMs;
  }

  /** Become leader: termStartClusterTimeMs = highest seen; termStartMonoMs = clock.nowMs() (SPEC §2). */
  startLeading(): void {
    this.#leading = true;
    this.#termStartClusterTimeMs = this.#highestSeenMs;
    this.#termStartMonoMs = this.#clock.nowMs();
  }

  stopLeading(): void {
    this.#leading = false;
  }

  /** Current cluster time in ms: leader's running time, or highest seen (see class comment). */
  nowMs(): number {
    if (!this.#leading) return this.#highestSeenMs;
    // Whole milliseconds (SPEC §3 durations are integers); flooring keeps cluster time a lower bound
    // of real elapsed time, so it can only make expiry later, never earlier (SPEC §1.5).
    const elapsedMs = Math.floor(this.#clock.nowMs() - this.#termStartMonoMs);
    const nowMs = Math.max(this.#highestSeenMs, this.#termStartClusterTimeMs + elapsedMs);
    assert.ok(nowMs >= this.#highestSeenMs, 'leader cluster time never decreases');
    this.#highestSeenMs = nowMs;
    return nowMs;
  }

  /** Highest cluster time seen so far, without reading the clock. */
  highestSeenMs(): number {
    return this.#highestSeenMs;
  }
}

/**
 * When this node heard which commit index from a leader, kept just long enough to answer "what had
 * the cluster committed `lagMs` ago?" — the readiness rule's target (docs/architecture.md,
 * Readiness): a node is caught up when it has applied the commit index it heard at least `lagMs`
 * ago. A follower learns a commit together with new entries it must fsync before it may apply
 * (the leader's commit notice rides on the next append), so "applied ≥ the commit heard now" would
 * flap under steady writes; "applied ≥ the commit heard `lagMs` ago" does not, yet a wiped or lagging
 * node (which hears a commit far above what it holds) stays behind it.
 *
 * Committed indexes stay committed in every later term (Raft §5.4), so the history keeps the highest
 * index heard, across leaders. While nothing heard is `lagMs` old (a node that heard its first leader
 * less than `lagMs` ago: just started, or wiped) the target is the first index heard: a wiped node
 * hears the cluster's whole commit index at once, so it is behind it; a node of a new cluster hears a
 * small one and is ready as soon as it applied that. Only announcements of a leader may be recorded
 * (not what a node knows by itself before hearing one: 0 when wiped).
 *
 * Times are the caller's monotonic ms; indexes and times only grow. Samples are buckets of
 * `lagMs / 8` (but the first sample, which is exact): a bucket keeps its first time and the highest
 * index heard in it, so the target may be an index heard up to `lagMs / 8` less than `lagMs` ago
 * (stricter, never looser). At most about ten buckets are kept.
 */
import assert from 'node:assert/strict';
import { asIndex, type LogIndex } from './core/types.js';

/** Buckets per lag: the precision of the lag (see the file comment). */
const bucketsPerLag = 8;

interface Sample {
  readonly atMs: number;
  index: LogIndex;
}

/**
 * The commit indexes a node heard from leaders, with when it heard them (the file comment above has
 * the rule). `heard(index, nowMs)` adds a leader's announcement; `target(nowMs)` answers the readiness
 * target, the highest index heard at least `lagMs` before `nowMs`. Used by RaftNode for `/readyz`.
 */
export class CommitHeard {
  readonly #lagMs: number;
  readonly #bucketMs: number;
  /** Ascending in atMs and index; samples[0] is the target (see #prune). */
  readonly #samples: Sample[] = [];

  /** `lagMs` ≥ 0: how old a heard commit index must be to count as the target (0: the newest). */
  constructor(lagMs: number) {
    assert.ok(Number.isFinite(lagMs) && lagMs >= 0, 'lagMs ≥ 0');
    this.#lagMs = lagMs;
    this.#bucketMs = lagMs / bucketsPerLag;
  }

  /** The highest commit index heard so far (0 before any). */
  highest(): number {
    return this.#samples.at(-1)?.index ?? 0;
  }

  /** Notes that a leader's commit index `index` is known at `nowMs`; lower indexes change nothing. */
  heard(index: LogIndex, nowMs: number): void {
    const s = this.#samples;
    const last = s.at(-1);
    if (last !== undefined && index <= last.index) return;
    // The first sample stays exact: it is the target until a sample is lagMs old.
    if (s.length >= 2 && nowMs - last!.atMs < this.#bucketMs) last!.index = index;
    else s.push({ atMs: nowMs, index });
    this.#prune(nowMs);
  }

  /**
   * The commit index a node must have applied at `nowMs` to count as caught up: the highest heard at
   * least lagMs ago, or — when none is that old — the first heard; 0 before any.
   */
  target(nowMs: number): LogIndex {
    this.#prune(nowMs);
    return this.#samples[0]?.index ?? asIndex(0);
  }

  /**
   * Drops the samples before the newest one that is at least lagMs old (never needed again), so
   * samples[0] is that one, or the first heard while none is that old.
   */
  #prune(nowMs: number): void {
    const s = this.#samples;
    let drop = 0;
    while (drop + 1 < s.length && s[drop + 1]!.atMs <= nowMs - this.#lagMs) drop++;
    if (drop > 0) s.splice(0, drop);
  }
}

/**
 * The cluster time a node *reports* (RaftStatus.clusterTimeMs: /v1/cluster, stale reads), built from
 * the core's reading (raft-core `clusterTimeMs()`), docs/concepts.md "Time model":
 * - a leader reports its own timeline;
 * - a follower with a known leader reports the latest reading it heard plus the local time elapsed
 *   since, at most `extrapolateMaxMs` (the leader's heartbeats refresh it long before);
 * - a node that knows no leader reports a *frozen* value — leaderless cluster time does not advance:
 *   the last value it reported (or a newer reading, should one arrive), never counting on.
 * When a leader appears again the report follows that leader's timeline; it may then be a little
 * below the frozen value (by at most what the follower had extrapolated).
 */
import type { Role } from './core/types.js';

/** One node's reported cluster time (see the file comment). Pure: the caller passes the clock. */
export class ClusterTimeEstimate {
  readonly #extrapolateMaxMs: number;
  /** The core's last reading and when (monotonic ms) it was first seen. */
  #seen = { valueMs: 0, atMs: 0 };
  /** The last value reported. */
  #reportedMs = 0;

  /** @param extrapolateMaxMs how far past its last reading a follower may count (ms, ≥ 0). */
  constructor(extrapolateMaxMs: number) {
    this.#extrapolateMaxMs = extrapolateMaxMs;
  }

  /**
   * The value to report now. `valueMs`: the core's reading; `role`/`leaderKnown`: this node's soft
   * state; `nowMs`: the local monotonic clock (ms).
   */
  read(valueMs: number, role: Role, leaderKnown: boolean, nowMs: number): number {
    if (valueMs !== this.#seen.valueMs) this.#seen = { valueMs, atMs: nowMs };
    let reportMs: number;
    if (role === 'leader') reportMs = valueMs;
    else if (!leaderKnown) reportMs = Math.max(this.#reportedMs, valueMs);
    else
      reportMs = valueMs + Math.min(this.#extrapolateMaxMs, Math.max(0, nowMs - this.#seen.atMs));
    this.#reportedMs = reportMs;
    return reportMs;
  }
}

/**
 * A node's simulated monotonic clock: local milliseconds advance at `rate` × simulated real time.
 *
 * docs/concepts.md assumes only a bound on clock *rate* drift (`maxDriftRatio`, default 0.01); the simulator
 * gives every node its own rate in [1 − maxDriftRatio, 1 + maxDriftRatio] and an arbitrary origin, so
 * a core that compares raw clock values across nodes, or assumes origin 0, fails the checkers.
 */
import assert from 'node:assert/strict';
import type { Clock } from '../core/types.js';

/** docs/concepts.md default bound on clock rate drift (ratio, dimensionless). */
export const DRIFT_RATIO_MAX = 0.01;

/**
 * Monotonic clock driven by the simulator's real time (`simNowMs`). Never decreases, including
 * across `setRate` (the local reading is re-anchored, not jumped).
 */
export class SimClock implements Clock {
  readonly #simNowMs: () => number;
  /** Sim time of the last re-anchoring, and the local reading at that instant. */
  #anchorSimMs: number;
  #anchorLocalMs: number;
  #rate: number;

  /**
   * @param simNowMs the simulator's current real time in ms (non-decreasing).
   * @param originMs the local reading at the current sim instant (arbitrary origin, ≥ 0).
   * @param rate local ms per real ms, within 1 ± DRIFT_RATIO_MAX.
   */
  constructor(simNowMs: () => number, originMs: number, rate: number) {
    assertRate(rate);
    this.#simNowMs = simNowMs;
    this.#anchorSimMs = simNowMs();
    this.#anchorLocalMs = originMs;
    this.#rate = rate;
  }

  /** Local monotonic time in ms (fractional). */
  nowMs(): number {
    return this.#anchorLocalMs + (this.#simNowMs() - this.#anchorSimMs) * this.#rate;
  }

  /** Current rate (local ms per real ms). */
  get rate(): number {
    return this.#rate;
  }

  /** Change the drift rate from now on; the reading stays continuous. */
  setRate(rate: number): void {
    assertRate(rate);
    this.#anchorLocalMs = this.nowMs();
    this.#anchorSimMs = this.#simNowMs();
    this.#rate = rate;
  }

  /** Real (sim) milliseconds that `localMs` of this clock take at the current rate. */
  realDurationMs(localMs: number): number {
    return localMs / this.#rate;
  }
}

function assertRate(rate: number): void {
  assert.ok(
    Number.isFinite(rate) && Math.abs(rate - 1) <= DRIFT_RATIO_MAX + 1e-12,
    `clock rate ${rate} outside 1 ± ${DRIFT_RATIO_MAX}`,
  );
}

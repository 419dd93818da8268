/**
 * The timing rules every time-bounded grant of the client shares: the shape of one renewal's answer
 * and the safe local deadline (docs/concepts.md, "the time model").
 *
 * Safe deadline: `sendTimeMs + ttlMs × (1 − maxDriftRatio) − safetyMarginMs`, on the client's
 * monotonic clock, where `sendTimeMs` is when the request that granted the time was sent. The server
 * never expires a grant before that point, so while the local clock is before it no one else can hold
 * the resource. Both HeldGrant (the handles) and confirmGrant (late grants) compute deadlines here.
 */
import type { Clock } from './clock.js';

/** The clock and drift parameters a grant's deadline is computed with. */
export interface DeadlineTiming {
  readonly clock: Clock;
  /** Assumed bound on clock-rate drift ρ between client and server, e.g. 0.01. */
  readonly maxDriftRatio: number;
  /** Extra margin subtracted from the deadline (ms) for scheduling latency. */
  readonly safetyMarginMs: number;
}

/** What one successful renewal returned. */
export interface RenewOutcome {
  readonly fencingToken: number;
  /** Effective ttl of this renewal (ms; may be shorter than asked when capped by maxHoldMs). */
  readonly ttlMs: number;
}

/** Safe local deadline (ms, on `timing.clock`) of a grant of `ttlMs` whose request was sent at `sendTimeMs`. */
export function safeDeadlineMs(sendTimeMs: number, ttlMs: number, timing: DeadlineTiming): number {
  return sendTimeMs + ttlMs * (1 - timing.maxDriftRatio) - timing.safetyMarginMs;
}

/**
 * Retry delays: exponential backoff with jitter, and the HTTP `Retry-After` header (docs/api.md: 503
 * `no_leader` sets it). Jitter spreads retries of many clients after a failover (BC-16).
 */

/**
 * Retry policy of a TenureClient: a call is retried until its deadline, with delays in
 * [baseDelayMs/2, maxDelayMs]; `attempts` only caps the tries of one call as a safety bound.
 */
export interface RetryPolicy {
  /** Most tries per call, including the first (≥ 1); the call's deadline normally ends it first. */
  readonly attempts: number;
  /** Delay before the first retry, before jitter (ms). */
  readonly baseDelayMs: number;
  /** Upper bound of any backoff delay (ms). */
  readonly maxDelayMs: number;
}

/**
 * Default policy: 50 ms doubling to 1 s (with jitter), retried until the call's deadline so a leader
 * failover (election 1–2 s, docs/api.md, plus detection) never exhausts a long wait's retries. The cap of
 * 1,000 tries is a safety bound only: at ≥ 500 ms per retry after the first few it spans minutes.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  attempts: 1000,
  baseDelayMs: 50,
  maxDelayMs: 1000,
};

/**
 * Delay before retry number `retryIndex` (0 for the first retry): `min(maxDelayMs, baseDelayMs × 2^i)`
 * scaled by a jitter factor in [0.5, 1) drawn from `random()` ("equal jitter").
 */
export function backoffDelayMs(
  policy: RetryPolicy,
  retryIndex: number,
  random: () => number,
): number {
  const capMs = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(retryIndex, 30));
  return Math.round(capMs * (0.5 + random() * 0.5));
}

/**
 * Parses a `Retry-After` header (RFC 9110 §10.2.3): delay-seconds only (Tenure never sends a date).
 * Returns milliseconds, or null when absent or not a non-negative number.
 */
export function parseRetryAfterMs(header: string | null): number | null {
  if (header === null) return null;
  const trimmed = header.trim();
  if (!/^\d+(\.\d+)?$/.test(trimmed)) return null;
  return Math.round(Number(trimmed) * 1000);
}

/**
 * Confirmation of a grant that arrived late (docs/concepts.md client rule).
 *
 * A handle's safe deadline is `sendTime + ttlMs × (1 − maxDriftRatio) − safetyMarginMs`, where
 * `sendTime` is when the request that granted it was sent. A waited acquire (or a campaign that took
 * long, or slow retries) can answer so late that this deadline is near or already past although the
 * server has only just granted. Such a grant is confirmed by one renewal with the same identity
 * (holder/candidate and fencingToken) *before* a handle is built: a successful renewal proves the
 * grant live at the server after the renewal was sent, so its send time dates the handle instead.
 */
import { TenureError, isLossCode } from './errors.js';
import { safeDeadlineMs, type DeadlineTiming, type RenewOutcome } from './grant-timing.js';

/** Timing of one grant: the clock and the parameters its deadline is computed with. */
export type ConfirmTiming = DeadlineTiming;

/**
 * Result of `confirmGrant`:
 * - `held`: a renewal with the same token succeeded; date the handle from `sendTimeMs` with `ttlMs`;
 * - `lost`: the server said the grant is no longer ours (409 `not_holder` / `lease_expired`, 404, or a
 *   renewal answering another token) — outcome known, not held;
 * - `unknown`: no usable answer within the budget (unavailable, timeouts, abort, an answer that came
 *   after its own deadline): the grant may still be live at the server.
 */
export type ConfirmResult =
  | { readonly kind: 'held'; readonly sendTimeMs: number; readonly ttlMs: number }
  | { readonly kind: 'lost'; readonly error: TenureError }
  | { readonly kind: 'unknown'; readonly error: TenureError };

/** One renewal of the grant with a call budget (ms) and the caller's signal; rejects with TenureError. */
export type ConfirmRenew = (
  timeoutMs: number,
  signal: AbortSignal | undefined,
) => Promise<RenewOutcome>;

/**
 * True when a grant of `ttlMs` answered at `nowMs` to a request sent at `sendTimeMs` must be confirmed
 * before a handle is built: it took more than ttl/3 to arrive (the first renewal would already be
 * due), or less than ttl/3 is left before its safe deadline (docs/concepts.md, §4 renew at ttl/3).
 */
export function needsConfirmation(
  sendTimeMs: number,
  nowMs: number,
  ttlMs: number,
  timing: ConfirmTiming,
): boolean {
  return (
    nowMs - sendTimeMs > ttlMs / 3 || safeDeadlineMs(sendTimeMs, ttlMs, timing) - nowMs <= ttlMs / 3
  );
}

/**
 * Renews the grant carrying `fencingToken` until one renewal answers in time, the server says it is
 * gone, or `budgetMs` (ms, > 0) has passed on `timing.clock`. Each renewal gets at most the time in
 * which its answer is still useful (ttl × (1 − ρ) − margin, at least 1 ms) so a late answer is never
 * taken for a live grant; an answer that arrives after its own safe deadline is discarded and the
 * renewal repeated (the transport keys each call, so a repeat is applied at most once, docs/concepts.md).
 * Never throws: the outcome is the returned ConfirmResult. Retryable failures (unavailable, 503, 504,
 * timeouts) are retried inside each call by the transport and across calls here until the budget.
 */
export async function confirmGrant(
  renew: ConfirmRenew,
  fencingToken: number,
  ttlMs: number,
  timing: ConfirmTiming,
  budgetMs: number,
  signal?: AbortSignal,
): Promise<ConfirmResult> {
  const { clock } = timing;
  const endMs = clock.now() + budgetMs;
  const usefulMs = Math.max(
    1,
    Math.floor(ttlMs * (1 - timing.maxDriftRatio) - timing.safetyMarginMs),
  );
  let lastError: TenureError = new TenureError(
    `grant ${fencingToken} not confirmed within ${budgetMs} ms`,
    {
      code: 'timeout',
    },
  );
  // Each pass is one transport call that itself retries with backoff until its deadline, so the
  // number of passes is bounded by budgetMs / (call time); the cap guards against a renew that fails fast.
  for (let pass = 0; pass < CONFIRM_PASSES_MAX; pass++) {
    if (signal?.aborted) {
      return {
        kind: 'unknown',
        error: new TenureError('aborted while confirming a grant', {
          code: 'aborted',
          cause: signal.reason,
        }),
      };
    }
    const sendTimeMs = clock.now();
    const remainingMs = endMs - sendTimeMs;
    if (remainingMs <= 0) break;
    let outcome: RenewOutcome;
    try {
      outcome = await renew(Math.max(1, Math.floor(Math.min(remainingMs, usefulMs))), signal);
    } catch (error) {
      const err =
        error instanceof TenureError
          ? error
          : new TenureError(String(error), { code: 'internal', cause: error });
      if (isLossCode(err.code)) return { kind: 'lost', error: err };
      lastError = err;
      if (!isRetryable(err)) break;
      continue;
    }
    if (!(outcome.ttlMs > 0)) {
      lastError = new TenureError(`renewal answered ttlMs ${String(outcome.ttlMs)}`, {
        code: 'internal',
        status: 200,
      });
      break;
    }
    if (outcome.fencingToken !== fencingToken) {
      return {
        kind: 'lost',
        error: new TenureError(
          `renewal answered token ${outcome.fencingToken}, granted ${fencingToken}`,
          {
            code: 'not_holder',
            status: 200,
          },
        ),
      };
    }
    if (clock.now() < safeDeadlineMs(sendTimeMs, outcome.ttlMs, timing))
      return { kind: 'held', sendTimeMs, ttlMs: outcome.ttlMs };
    lastError = new TenureError(
      `renewal of grant ${fencingToken} answered after its safe deadline (${Math.round(clock.now() - sendTimeMs)} ms)`,
      { code: 'timeout' },
    );
  }
  return { kind: 'unknown', error: lastError };
}

/** Upper bound on renewal calls of one confirmation (TigerBeetle-style limit on every loop). */
const CONFIRM_PASSES_MAX = 32;

/**
 * Failures after which another renewal may succeed: no answer, no leader, a gateway error or a
 * timeout (the transport's retryable failures). Anything else (`aborted`, 4xx, 500) ends the confirmation as unknown.
 */
function isRetryable(error: TenureError): boolean {
  if (error.status === 502 || error.status === 503 || error.status === 504) return true;
  return error.code === 'unavailable' || error.code === 'no_leader' || error.code === 'timeout';
}

/**
 * Per-token request rate on one node (docs/security.md, quotas): a token bucket per token name
 * holding up to one second of requests, refilled continuously. Over the rate → 429
 * `resource_exhausted` with `Retry-After` (whole seconds until one request is allowed again).
 */
import { HttpError } from '../http-error.js';

/** Buckets kept at most; the least recently created is dropped first (it refills to full anyway). */
export const BUCKETS_MAX = 10_000;

interface Bucket {
  tokens: number;
  lastMs: number;
}

export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #nowMs: () => number;

  /** `nowMs`: a monotonic clock in ms (default performance.now). */
  constructor(nowMs: () => number = () => performance.now()) {
    this.#nowMs = nowMs;
  }

  /** Takes one request of `name` at `perSecond` (≥ 1); throws 429 when its bucket is empty. */
  take(name: string, perSecond: number): void {
    const now = this.#nowMs();
    let b = this.#buckets.get(name);
    if (b === undefined) {
      if (this.#buckets.size >= BUCKETS_MAX)
        this.#buckets.delete(this.#buckets.keys().next().value!);
      b = { tokens: perSecond, lastMs: now };
      this.#buckets.set(name, b);
    }
    b.tokens = Math.min(perSecond, b.tokens + ((now - b.lastMs) / 1000) * perSecond);
    b.lastMs = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return;
    }
    const retryAfterS = Math.max(1, Math.ceil((1 - b.tokens) / perSecond));
    throw new HttpError(
      'resource_exhausted',
      `token ${name} is over its rate of ${perSecond} requests per second on this node`,
      { limit: 'quota.requestsPerSecond' },
      { 'retry-after': String(retryAfterS) },
    );
  }
}

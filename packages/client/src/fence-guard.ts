/**
 * FenceGuard: the write-boundary check of docs/concepts.md for stores outside Tenure. It remembers, per
 * resource, the highest fencing token it has accepted and rejects any lower one, so a holder that
 * woke up after its lease passed to someone else (BC-02, BC-22) cannot write.
 */
import assert from 'node:assert/strict';
import { StaleTokenError } from './errors.js';

/** Options of a FenceGuard. */
export interface FenceGuardOptions {
  /**
   * Most resources remembered (default 100,000). When full, the least recently used resource is
   * forgotten — after which a stale token for *that* resource would be accepted. Size it above your
   * resource count, or persist tokens in the store itself (README: SQL pattern).
   */
  readonly resourcesMax?: number;
}

/**
 * In-memory per-resource high-water mark of fencing tokens. `check` accepts a token ≥ the highest seen
 * (equal: the same grant writing again) and raises the mark; a lower token throws StaleTokenError.
 * Single-process only: for several replicas of a service, keep the mark in the shared store.
 */
export class FenceGuard {
  readonly #resourcesMax: number;
  /** resource → highest accepted token; Map order is recency (re-inserted on use). */
  readonly #highest = new Map<string, number>();

  constructor(options: FenceGuardOptions = {}) {
    this.#resourcesMax = options.resourcesMax ?? 100_000;
    assert.ok(
      Number.isSafeInteger(this.#resourcesMax) && this.#resourcesMax > 0,
      'resourcesMax must be a positive integer',
    );
  }

  /**
   * Accepts `fencingToken` for `resource` (returns true) if it is ≥ the highest seen, recording it;
   * throws StaleTokenError otherwise. Throws TypeError for a token that is not a non-negative integer.
   */
  check(resource: string, fencingToken: number): true {
    if (!Number.isSafeInteger(fencingToken) || fencingToken < 0)
      throw new TypeError(
        `fencingToken must be a non-negative integer, got ${String(fencingToken)}`,
      );
    const highest = this.#highest.get(resource);
    if (highest !== undefined && fencingToken < highest)
      throw new StaleTokenError(resource, fencingToken, highest);
    this.#highest.delete(resource);
    this.#highest.set(resource, Math.max(fencingToken, highest ?? fencingToken));
    if (this.#highest.size > this.#resourcesMax) {
      const oldest = this.#highest.keys().next();
      if (oldest.done !== true) this.#highest.delete(oldest.value);
    }
    return true;
  }

  /** Like `check` but answers false instead of throwing for a stale token. */
  tryCheck(resource: string, fencingToken: number): boolean {
    try {
      return this.check(resource, fencingToken);
    } catch (error) {
      if (error instanceof StaleTokenError) return false;
      throw error;
    }
  }

  /** Highest token accepted for `resource`, or null if none is remembered. Does not change recency. */
  highest(resource: string): number | null {
    return this.#highest.get(resource) ?? null;
  }

  /** Number of resources remembered (≤ resourcesMax). */
  get size(): number {
    return this.#highest.size;
  }
}

/**
 * Limits of the coordination state machine (docs/api.md ranges, docs/architecture.md habit 7: every map and queue
 * is bounded). `resolveLimits` merges overrides into `DEFAULT_LIMITS` and checks their relations.
 */
import assert from 'node:assert';
import type { CoordLimits } from './api.js';

/**
 * The largest allowed `waitersPerLeaseMax`: one entry grants a name at most once per waiter plus
 * once for its own command, and those tokens must fit in the entry's token block (fencing.ts).
 */
export const WAITERS_PER_LEASE_MAX_CEILING = TOKENS_PER_ENTRY - 3;
import { TOKENS_PER_ENTRY } from './fencing.js';

/**
 * Limits this implementation adds to `CoordLimits` (all optional in the constructor):
 * `lockDelayMsMax`, `maxHoldMsMax` (argument ranges), `waitersMax` (all leases together),
 * `historyPerNameMax` / `historyNamesMax` (ended grants remembered to answer `lease_expired`,
 * the seed of docs/primitives.md holder history), `retiredElectionsMax` (emptied groups whose revision is
 * remembered so it never goes back to 0 while remembered).
 */
export interface CoordLimitsFull extends CoordLimits {
  readonly lockDelayMsMax: number;
  readonly maxHoldMsMax: number;
  readonly waitersMax: number;
  readonly historyPerNameMax: number;
  readonly historyNamesMax: number;
  readonly retiredElectionsMax: number;
  /** Live sessions (sessions-max); more → resource_exhausted. */
  readonly sessionsMax: number;
  /** Grants, waiters and candidacies bound to one session. */
  readonly grantsPerSessionMax: number;
  /** Semaphore names with holders or waiters. */
  readonly semaphoresMax: number;
  /** Largest semaphore `limit` (permits per name). */
  readonly semaphoreLimitMax: number;
  /** Holder-history entries over all resources (bounds its memory with historyPerNameMax). */
  readonly historyEntriesMax: number;
}

/** Defaults: docs/api.md ranges (ttlMs 100…3,600,000, waitMs ≤ 60,000, values ≤ 64 KiB, 10 min idempotency window). */
export const DEFAULT_LIMITS: CoordLimitsFull = Object.freeze({
  ttlMsMin: 100,
  ttlMsMax: 3_600_000,
  waitMsMax: 60_000,
  leasesMax: 2_000_000,
  waitersPerLeaseMax: 900,
  candidatesPerGroupMax: 1_000,
  electionsMax: 100_000,
  keysMax: 1_000_000,
  valueBytesMax: 65_536,
  idempotencyWindowMs: 600_000,
  idempotencyRecordsMax: 200_000,
  lockDelayMsMax: 600_000,
  maxHoldMsMax: 7 * 24 * 3_600_000,
  waitersMax: 100_000,
  historyPerNameMax: 16,
  historyNamesMax: 100_000,
  retiredElectionsMax: 100_000,
  sessionsMax: 100_000,
  grantsPerSessionMax: 1_000,
  semaphoresMax: 100_000,
  semaphoreLimitMax: 10_000,
  historyEntriesMax: 400_000,
});

/**
 * Merges `overrides` into `DEFAULT_LIMITS`. Throws (assertion, a configuration bug) when a value
 * is not a non-negative safe integer or `ttlMsMin > ttlMsMax`.
 */
export function resolveLimits(overrides: Partial<CoordLimitsFull> = {}): CoordLimitsFull {
  const merged: CoordLimitsFull = { ...DEFAULT_LIMITS, ...overrides };
  for (const [field, value] of Object.entries(merged)) {
    assert(
      Number.isSafeInteger(value) && (value as number) >= 0,
      `limits: ${field} must be a non-negative integer`,
    );
  }
  assert(
    merged.ttlMsMin >= 1 && merged.ttlMsMin <= merged.ttlMsMax,
    'limits: need 1 ≤ ttlMsMin ≤ ttlMsMax',
  );
  assert(merged.historyPerNameMax >= 1, 'limits: historyPerNameMax ≥ 1');
  // One entry grants a resource at most once per waiter plus once for its command: the tokens
  // must fit in the entry's block (fencing.ts).
  assert(
    merged.waitersPerLeaseMax <= WAITERS_PER_LEASE_MAX_CEILING,
    `limits: waitersPerLeaseMax must be at most ${WAITERS_PER_LEASE_MAX_CEILING}`,
  );
  assert(merged.semaphoreLimitMax >= 1, 'limits: semaphoreLimitMax ≥ 1');
  return Object.freeze(merged);
}

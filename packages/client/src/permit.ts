/**
 * Semaphore permit handle returned by `TenureClient.semaphore` (docs/primitives.md, semaphores):
 * one of at most `limit` live permits of a name, with its own fencing token. It behaves as a Lease
 * (lease.ts): renews itself at ttl/3 (or lives with its session), `signal`, `atRisk` / `renewed` /
 * `lost` events, an idempotent token-checked `release()`.
 */
import type { GrantTiming } from './held-grant.js';
import { Lease, type LeaseOps } from './lease.js';
import type { Session } from './session.js';

/** A permit as the client builds its handle from: the grant with its effective ttl and the limit. */
export interface PermitGrant {
  readonly name: string;
  readonly holder: string;
  readonly fencingToken: number;
  readonly ttlMs: number;
  readonly limit: number;
}

/** A held semaphore permit. Pass `{semaphore: name, fencingToken}` to fenced writes. */
export class Permit extends Lease {
  /** Most live permits of the semaphore. */
  readonly limit: number;

  /** @internal Built by TenureClient.semaphore; `ops` call the semaphore routes. */
  constructor(
    grant: PermitGrant,
    sendTimeMs: number,
    ops: LeaseOps,
    timing: GrantTiming,
    autoRenew: boolean,
    session: Session | string | null,
  ) {
    super(grant, sendTimeMs, ops, timing, autoRenew, { session });
    this.limit = grant.limit;
  }

  protected override get kindName(): string {
    return 'semaphore';
  }

  /** Plain JSON view for logs and the CLI. */
  override toJSON(): ReturnType<Lease['toJSON']> & { limit: number } {
    return { ...super.toJSON(), limit: this.limit };
  }
}

/**
 * Lease handle returned by `TenureClient.acquire` (packages/client/README.md): renews itself at ttl/3, exposes the
 * fencing token, `signal` (aborted when lost, expired by the safe local deadline, or released),
 * `atRisk` / `renewed` / `lost` events and an idempotent, token-checked `release()` (BC-12).
 */
import type { RenewOutcome } from './grant-timing.js';
import { HeldGrant, type GrantTiming } from './held-grant.js';
import type { LeaseGrant } from './contract.js';
import { isLossCode, TenureError } from './errors.js';

/** The API calls a Lease needs (provided by TenureClient). */
export interface LeaseOps {
  renew(
    name: string,
    holder: string,
    fencingToken: number,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<LeaseGrant>;
  release(name: string, holder: string, fencingToken: number): Promise<void>;
}

/**
 * A held lease. `name`, `holder`, `fencingToken` identify the grant; `ttlMs` is the effective ttl of
 * the latest grant/renewal (capped by maxHoldMs when the server says so). Use `signal` / `isHeld()` /
 * `assertHeld()` to stop work, and pass `fencingToken` to every side effect (docs/concepts.md).
 */
export class Lease extends HeldGrant {
  readonly name: string;
  readonly holder: string;
  readonly #ops: LeaseOps;
  #release: Promise<boolean> | null = null;

  /** @internal Built by TenureClient.acquire from the grant and the send time of its request. */
  constructor(
    grant: LeaseGrant,
    sendTimeMs: number,
    ops: LeaseOps,
    timing: GrantTiming,
    autoRenew: boolean,
  ) {
    super(grant.fencingToken, grant.ttlMs, sendTimeMs, timing, autoRenew);
    this.name = grant.name;
    this.holder = grant.holder;
    this.#ops = ops;
  }

  /**
   * Releases the lease with its token (only this very grant can be released, BC-12). Idempotent: later
   * calls return the first call's promise. Resolves true when the server released it, false when it was
   * no longer ours (409 not_holder / lease_expired, 404) or already lost locally; rejects with TenureError
   * when the cluster could not be reached (the lease then ends by its TTL). Aborts `signal` at once.
   */
  release(): Promise<boolean> {
    if (this.#release !== null) return this.#release;
    const wasEnded = this.endReason !== null;
    this.endByOwner(`lease ${this.name} released`);
    this.#release = this.#ops.release(this.name, this.holder, this.fencingToken).then(
      () => !wasEnded,
      (error: unknown) => {
        if (error instanceof TenureError && isLossCode(error.code)) return false;
        throw error;
      },
    );
    return this.#release;
  }

  /** Plain JSON view for logs and the CLI. */
  toJSON(): { name: string; holder: string; fencingToken: number; ttlMs: number } {
    return {
      name: this.name,
      holder: this.holder,
      fencingToken: this.fencingToken,
      ttlMs: this.ttlMs,
    };
  }

  protected override async renewCall(
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<RenewOutcome> {
    const grant = await this.#ops.renew(this.name, this.holder, this.fencingToken, {
      signal,
      timeoutMs,
    });
    return { fencingToken: grant.fencingToken, ttlMs: grant.ttlMs };
  }

  /** Expired locally (or renewed too late): give the grant back so others need not wait for the ttl. */
  protected override onAbandoned(): void {
    if (this.#release === null) this.release().catch(() => undefined);
  }
}

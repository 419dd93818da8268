/**
 * Lease handle returned by `TenureClient.acquire` (packages/client/README.md): renews itself at ttl/3, exposes the
 * fencing token, `signal` (aborted when lost, expired by the safe local deadline, or released),
 * `atRisk` / `renewed` / `lost` events and an idempotent, token-checked `release()` (BC-12).
 */
import type { RenewOutcome } from './grant-timing.js';
import { HeldGrant, type GrantTiming } from './held-grant.js';
import type { LeaseGrant, LeaseMode } from './contract.js';
import { isLossCode, TenureError } from './errors.js';
import type { Session } from './session.js';

/** The API calls a Lease needs (provided by TenureClient). A renewal of a session-bound grant answers `ttlMs: null`. */
export interface LeaseOps {
  renew(
    name: string,
    holder: string,
    fencingToken: number,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<{ readonly fencingToken: number; readonly ttlMs: number | null }>;
  release(name: string, holder: string, fencingToken: number): Promise<void>;
}

/** How a grant is held beyond its name and token: its mode and the session that keeps it alive. */
export interface GrantBinding {
  /** Default exclusive. */
  readonly mode?: LeaseMode;
  /**
   * The session the grant is bound to (docs/primitives.md): with a handle the grant ends when it
   * ends; with an id it learns of the end from its renewals.
   */
  readonly session?: Session | string | null;
}

/**
 * A held lease. `name`, `holder`, `fencingToken` identify the grant; `ttlMs` is the effective ttl of
 * the latest grant/renewal (capped by maxHoldMs when the server says so; a session-bound grant's is
 * its session's). Use `signal` / `isHeld()` / `assertHeld()` to stop work, and pass `fencingToken`
 * to every side effect (docs/concepts.md). A session-bound lease also ends when its session ends;
 * its renewals keep the session alive on the server.
 */
export class Lease extends HeldGrant {
  readonly name: string;
  readonly holder: string;
  /** `shared` for a shared (read) grant, else `exclusive`. */
  readonly mode: LeaseMode;
  /** Id of the session keeping the grant alive, or null. */
  readonly session: string | null;
  readonly #ops: LeaseOps;
  /** The session's ttl for a session-bound grant (whose renewals answer `ttlMs: null`). */
  readonly #sessionTtlMs: number | null = null;
  #release: Promise<boolean> | null = null;

  /**
   * @internal Built by TenureClient.acquire from the grant (with its effective ttl: a
   * session-bound grant's is its session's) and the send time of its request.
   */
  constructor(
    grant: LeaseGrant,
    sendTimeMs: number,
    ops: LeaseOps,
    timing: GrantTiming,
    autoRenew: boolean,
    binding: GrantBinding = {},
  ) {
    super(grant.fencingToken, grant.ttlMs, sendTimeMs, timing, autoRenew);
    this.name = grant.name;
    this.holder = grant.holder;
    this.mode = binding.mode ?? 'exclusive';
    this.#ops = ops;
    const session = binding.session ?? null;
    this.session = typeof session === 'string' ? session : (session?.sessionId ?? null);
    // A session's ttl never changes: the grant's effective ttl is its session's.
    if (session !== null) this.#sessionTtlMs = grant.ttlMs;
    if (session !== null && typeof session !== 'string')
      this.followOwner(session.signal, `${this.kindName} ${this.name}`);
  }

  /** What this handle holds, for messages. */
  protected get kindName(): string {
    return 'lease';
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
    this.endByOwner(`${this.kindName} ${this.name} released`);
    this.#release = this.#ops.release(this.name, this.holder, this.fencingToken).then(
      () => !wasEnded,
      (error: unknown) => {
        if (error instanceof TenureError && isLossCode(error.code)) return false;
        throw error;
      },
    );
    return this.#release;
  }

  /** Plain JSON view for logs and the CLI (`mode` when shared, `session` when session-bound). */
  toJSON(): {
    name: string;
    holder: string;
    fencingToken: number;
    ttlMs: number;
    mode?: LeaseMode;
    session?: string;
  } {
    return {
      name: this.name,
      holder: this.holder,
      fencingToken: this.fencingToken,
      ttlMs: this.ttlMs,
      ...(this.mode === 'shared' ? { mode: this.mode } : {}),
      ...(this.session === null ? {} : { session: this.session }),
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
    const ttlMs = grant.ttlMs ?? this.#sessionTtlMs;
    if (ttlMs === null)
      throw new TenureError(`renewal of ${this.kindName} ${this.name} answered no ttl`, {
        code: 'internal',
        status: 200,
      });
    return { fencingToken: grant.fencingToken, ttlMs };
  }

  /** Expired locally (or renewed too late): give the grant back so others need not wait for the ttl. */
  protected override onAbandoned(): void {
    if (this.#release === null) this.release().catch(() => undefined);
  }
}

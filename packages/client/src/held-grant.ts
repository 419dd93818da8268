/**
 * The time-bounded ownership shared by Lease and Leadership handles: auto-renewal at ttl/3, the
 * safe local deadline of docs/concepts.md, jeopardy (`atRisk`, Chubby) and loss (`signal`, `lost`).
 *
 * Safe deadline (docs/concepts.md): `sendTimeMs + ttlMs × (1 − maxDriftRatio) − safetyMarginMs`, on the
 * injected monotonic clock, where `sendTimeMs` is when the acquire/renew that granted the time was
 * sent. The server never expires the grant before that point (docs/concepts.md), so while the local clock
 * is before it, no one else can hold the resource. A timer fires at the deadline independently of
 * renewals (BC-15: renewals that hang cannot keep the handle "held"), and `isHeld()` re-reads the
 * clock so an event-loop stall cannot report a stale "held".
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { backoffDelayMs } from './backoff.js';
import type { TimerHandle } from './clock.js';
import { isLossCode, TenureError } from './errors.js';
import { safeDeadlineMs, type DeadlineTiming, type RenewOutcome } from './grant-timing.js';
import type { Logger } from './logger.js';

/** Timing parameters of a held grant. */
export interface GrantTiming extends DeadlineTiming {
  readonly logger: Logger;
  /** Uniform [0, 1) for retry jitter. */
  readonly random: () => number;
}

/** Why a handle stopped being held. */
export type EndReason = 'lost' | 'expired' | 'released';

/** Payload of the `renewed` event. */
export interface RenewedEvent {
  readonly fencingToken: number;
  readonly ttlMs: number;
  /** Safe local deadline after this renewal, on the handle's clock (ms). */
  readonly deadlineMs: number;
}

/** Event map of a held grant: `renewed` after each successful renewal, `atRisk` when one fails, `lost` once. */
export interface HeldGrantEvents {
  renewed: [RenewedEvent];
  atRisk: [TenureError];
  lost: [TenureError];
}

/**
 * Pacing of renewal retries while renewals fail, relative to the ttl so that a failover does not turn
 * thousands of leases into a request storm (BC-16): from ttl/30 doubling up to ttl/6 (3 s ttl: 100 → 500 ms).
 */
function renewRetryPolicy(ttlMs: number): {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
} {
  return {
    attempts: Number.MAX_SAFE_INTEGER,
    baseDelayMs: Math.max(10, ttlMs / 30),
    maxDelayMs: Math.max(20, ttlMs / 6),
  };
}

/**
 * Base of Lease and Leadership. Subclasses provide one renewal call and the release call.
 * Invariants: `#ended` is set at most once and never cleared; while not ended, a deadline timer is
 * pending; `signal.aborted` ⇔ `#ended !== null`.
 */
export abstract class HeldGrant extends EventEmitter<HeldGrantEvents> {
  readonly #timing: GrantTiming;
  readonly #controller = new AbortController();
  /** Token of this grant; a renewal answering another token means the grant is gone. */
  readonly #fencingToken: number;
  /** Requested ttl (renew cadence is derived from the effective one). */
  #ttlMs: number;
  /** Safe local deadline (monotonic ms); only moves forward. */
  #deadlineMs: number;
  #deadlineTimer: TimerHandle | null = null;
  #renewTimer: TimerHandle | null = null;
  /** Aborts the renewal in flight when the handle ends. */
  #renewController: AbortController | null = null;
  #renewing: Promise<void> | null = null;
  #failedRenewals = 0;
  #atRisk = false;
  #ended: EndReason | null = null;
  #autoRenew: boolean;

  protected constructor(
    fencingToken: number,
    ttlMs: number,
    sendTimeMs: number,
    timing: GrantTiming,
    autoRenew: boolean,
  ) {
    super();
    assert.ok(Number.isSafeInteger(fencingToken), 'fencingToken must be an integer');
    assert.ok(ttlMs > 0, 'ttlMs must be > 0');
    this.#timing = timing;
    this.#fencingToken = fencingToken;
    this.#ttlMs = ttlMs;
    this.#autoRenew = autoRenew;
    this.#deadlineMs = this.#safeDeadline(sendTimeMs, ttlMs);
    this.#armDeadline();
    if (autoRenew) this.#scheduleRenew(sendTimeMs + ttlMs / 3);
  }

  /** Fencing token of this grant (docs/concepts.md): pass it with every side effect. */
  get fencingToken(): number {
    return this.#fencingToken;
  }

  /** Effective ttl of the latest grant or renewal (ms). */
  get ttlMs(): number {
    return this.#ttlMs;
  }

  /** Aborted when the grant is lost, its safe deadline passes, or it is released. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Safe local deadline on the handle's clock (ms, monotonic). */
  get deadlineMs(): number {
    return this.#deadlineMs;
  }

  /** Time left before the safe deadline (ms, ≥ 0; 0 once ended). */
  get remainingMs(): number {
    return this.#ended === null ? Math.max(0, this.#deadlineMs - this.#timing.clock.now()) : 0;
  }

  /** True while renewals are failing but the deadline has not passed (Chubby's jeopardy). */
  get atRisk(): boolean {
    return this.#atRisk && this.#ended === null;
  }

  /** Why the handle ended, or null while it may still be held. */
  get endReason(): EndReason | null {
    return this.#ended;
  }

  /**
   * True only if not ended and the safe deadline is still ahead on the clock *now* — checked on every
   * call, so it is right even when timers are late after an event-loop stall (BC-15). If the deadline
   * has passed, ends the handle (aborting `signal`) before answering false.
   */
  isHeld(): boolean {
    if (this.#ended !== null) return false;
    if (this.#timing.clock.now() >= this.#deadlineMs) {
      this.#expire();
      return false;
    }
    return true;
  }

  /** Throws the loss reason (TenureError) unless `isHeld()`. Call before each side effect. */
  assertHeld(): void {
    if (!this.isHeld())
      throw this.signal.reason instanceof Error
        ? this.signal.reason
        : new TenureError('not held', { code: 'lease_lost' });
  }

  /**
   * Renews now (also what auto-renew runs). Resolves when renewed; rejects with TenureError on failure
   * — a definitive loss (409 `not_holder`/`lease_expired`, 404) also ends the handle; a transient one
   * marks it at risk. Concurrent calls share one renewal.
   */
  renew(): Promise<void> {
    if (this.#ended !== null) return Promise.reject(this.#endError());
    if (this.#renewing !== null) return this.#renewing;
    const run: Promise<void> = this.#renewOnce().finally(() => {
      if (this.#renewing === run) this.#renewing = null;
    });
    this.#renewing = run;
    return run;
  }

  /**
   * Throws (AssertionError) if an invariant is broken: `signal.aborted` ⇔ ended; a live handle has a
   * pending deadline timer; an ended one has no timers. Tests call it after each step (docs/architecture.md habit 6).
   */
  checkInvariants(): void {
    assert.equal(
      this.#controller.signal.aborted,
      this.#ended !== null,
      'signal.aborted must mirror ended',
    );
    if (this.#ended === null)
      assert.notEqual(this.#deadlineTimer, null, 'a live handle has a deadline timer');
    else
      assert.ok(
        this.#deadlineTimer === null && this.#renewTimer === null,
        'an ended handle has no timers',
      );
    assert.ok(Number.isFinite(this.#deadlineMs), 'deadlineMs is finite');
  }

  /** Renews with `signal` and a time budget (ms); resolves with the server's answer. */
  protected abstract renewCall(signal: AbortSignal, timeoutMs: number): Promise<RenewOutcome>;

  /** Ends the handle as released by its owner: stops renewals, aborts `signal` (reason code `released`). */
  protected endByOwner(message: string): boolean {
    return this.#end('released', new TenureError(message, { code: 'released' }));
  }

  /** Ends the handle as lost with `error` (e.g. from a renewal answer the subclass recognised). */
  protected endLost(error: TenureError): boolean {
    return this.#end('lost', error);
  }

  /**
   * Ties this handle to `owner` (a session's signal, docs/primitives.md sessions): when it aborts
   * — the session was closed or lost — this handle ends as lost with `lease_lost`, because the
   * server ends every grant of a session together with it.
   */
  protected followOwner(owner: AbortSignal, what: string): void {
    const onAbort = (): void => {
      this.#end(
        'lost',
        new TenureError(`${what} ended with its session`, {
          code: 'lease_lost',
          cause: owner.reason,
        }),
      );
    };
    if (owner.aborted) {
      onAbort();
      return;
    }
    owner.addEventListener('abort', onAbort, { once: true });
    this.#controller.signal.addEventListener(
      'abort',
      () => owner.removeEventListener('abort', onAbort),
      { once: true },
    );
  }

  /**
   * Hook: the handle ended by its deadline, or a renewal succeeded after it had ended. The server may
   * still hold the grant for us; the subclass gives it back (token-checked, so harmless if it is gone).
   */
  protected onAbandoned(): void {}

  async #renewOnce(): Promise<void> {
    const clock = this.#timing.clock;
    const sendTimeMs = clock.now();
    if (sendTimeMs >= this.#deadlineMs) {
      this.#expire();
      throw this.#endError();
    }
    const controller = new AbortController();
    this.#renewController = controller;
    // Budget: never past the deadline; at most one renew period so a hung node is abandoned in time.
    const budgetMs = Math.max(
      1,
      Math.min(this.#deadlineMs - sendTimeMs, Math.max(this.#ttlMs / 3, 100)),
    );
    let outcome: RenewOutcome;
    try {
      outcome = await this.renewCall(controller.signal, Math.floor(budgetMs));
    } catch (error) {
      // Clear before scheduling the retry so a timer that fires at once starts a new renewal.
      this.#renewing = null;
      const err =
        error instanceof TenureError
          ? error
          : new TenureError(String(error), { code: 'internal', cause: error });
      if (this.#ended !== null) throw this.#endError();
      if (isLossCode(err.code)) {
        this.#end('lost', err);
      } else {
        this.#failedRenewals++;
        this.#timing.logger.warn?.(
          { code: err.code, remainingMs: this.remainingMs },
          'renewal failed',
        );
        if (!this.#atRisk) {
          this.#atRisk = true;
          this.emit('atRisk', err);
        }
        if (this.#autoRenew)
          this.#scheduleRenew(
            clock.now() +
              backoffDelayMs(
                renewRetryPolicy(this.#ttlMs),
                this.#failedRenewals - 1,
                this.#timing.random,
              ),
          );
      }
      throw err;
    } finally {
      if (this.#renewController === controller) this.#renewController = null;
    }
    this.#renewing = null;
    if (this.#ended !== null) {
      if (this.#ended !== 'released') this.onAbandoned();
      throw this.#endError();
    }
    if (outcome.fencingToken !== this.#fencingToken) {
      const err = new TenureError(
        `renewal answered token ${outcome.fencingToken}, held ${this.#fencingToken}`,
        { code: 'not_holder' },
      );
      this.#end('lost', err);
      throw err;
    }
    this.#ttlMs = outcome.ttlMs;
    this.#deadlineMs = Math.max(this.#deadlineMs, this.#safeDeadline(sendTimeMs, outcome.ttlMs));
    // The answer may arrive after its own deadline (slow network, stalled loop): check the clock.
    if (!this.isHeld()) throw this.#endError();
    this.#failedRenewals = 0;
    this.#atRisk = false;
    this.#armDeadline();
    if (this.#autoRenew) this.#scheduleRenew(sendTimeMs + outcome.ttlMs / 3);
    this.emit('renewed', {
      fencingToken: this.#fencingToken,
      ttlMs: outcome.ttlMs,
      deadlineMs: this.#deadlineMs,
    });
  }

  #safeDeadline(sendTimeMs: number, ttlMs: number): number {
    return safeDeadlineMs(sendTimeMs, ttlMs, this.#timing);
  }

  #armDeadline(): void {
    const clock = this.#timing.clock;
    if (this.#deadlineTimer !== null) clock.clearTimer(this.#deadlineTimer);
    this.#deadlineTimer = clock.setTimer(() => {
      this.#deadlineTimer = null;
      if (this.#ended !== null) return;
      if (clock.now() >= this.#deadlineMs) this.#expire();
      else this.#armDeadline();
    }, this.#deadlineMs - clock.now());
  }

  #scheduleRenew(atMs: number): void {
    const clock = this.#timing.clock;
    if (this.#ended !== null) return;
    if (this.#renewTimer !== null) clock.clearTimer(this.#renewTimer);
    this.#renewTimer = clock.setTimer(
      () => {
        this.#renewTimer = null;
        // After a stall the renewal timer may run before the deadline timer: isHeld() checks the clock.
        if (!this.isHeld()) return;
        this.renew().catch(() => undefined);
      },
      Math.max(0, atMs - clock.now()),
    );
  }

  #expire(): void {
    if (
      this.#end(
        'expired',
        new TenureError('safe local deadline passed without a renewal', {
          code: 'lease_lost',
          details: { deadlineMs: this.#deadlineMs },
        }),
      )
    )
      this.onAbandoned();
  }

  #end(reason: EndReason, error: TenureError): boolean {
    if (this.#ended !== null) return false;
    this.#ended = reason;
    const clock = this.#timing.clock;
    if (this.#deadlineTimer !== null) clock.clearTimer(this.#deadlineTimer);
    if (this.#renewTimer !== null) clock.clearTimer(this.#renewTimer);
    this.#deadlineTimer = null;
    this.#renewTimer = null;
    this.#renewController?.abort(error);
    this.#controller.abort(error);
    if (reason !== 'released') {
      this.#timing.logger.warn?.({ reason, code: error.code }, 'grant lost');
      this.emit('lost', error);
    }
    return true;
  }

  #endError(): TenureError {
    const reason: unknown = this.#controller.signal.reason;
    return reason instanceof TenureError
      ? reason
      : new TenureError('not held', { code: 'lease_lost' });
  }
}

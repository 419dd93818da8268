/**
 * Session handle returned by `TenureClient.session` (docs/primitives.md, sessions): one ttl that
 * keeps many grants alive. It sends a keepalive at ttl/3 and keeps the same safe local deadline,
 * jeopardy and loss rules as a lease (held-grant.ts); `signal` aborts when the session is closed,
 * lost (the server answered 404: it ended or expired) or its safe deadline passes — and every
 * Lease, Permit or Leadership bound to it ends with it.
 */
import { EventEmitter } from 'node:events';
import type { RenewOutcome } from './grant-timing.js';
import { HeldGrant, type EndReason, type GrantTiming, type HeldGrantEvents } from './held-grant.js';
import { isLossCode, TenureError } from './errors.js';

/** The API calls a Session needs (provided by TenureClient). */
export interface SessionOps {
  keepalive(
    sessionId: string,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<{ sessionId: string; ttlMs: number }>;
  end(sessionId: string): Promise<void>;
}

/** The session's time, kept like a grant's. A session has no fencing token: 0 stands for it. */
class SessionKeeper extends HeldGrant {
  readonly #sessionId: string;
  readonly #ops: SessionOps;
  readonly #onAbandoned: () => void;

  constructor(
    sessionId: string,
    ttlMs: number,
    sendTimeMs: number,
    ops: SessionOps,
    timing: GrantTiming,
    autoRenew: boolean,
    onAbandoned: () => void,
  ) {
    super(0, ttlMs, sendTimeMs, timing, autoRenew);
    this.#sessionId = sessionId;
    this.#ops = ops;
    this.#onAbandoned = onAbandoned;
  }

  close(message: string): boolean {
    return this.endByOwner(message);
  }

  protected override async renewCall(
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<RenewOutcome> {
    const answer = await this.#ops.keepalive(this.#sessionId, { signal, timeoutMs });
    return { fencingToken: 0, ttlMs: answer.ttlMs };
  }

  protected override onAbandoned(): void {
    this.#onAbandoned();
  }
}

/**
 * A live session. Pass it as `session` to `acquire`, `semaphore` and `campaign`: those grants have
 * no ttl of their own and end when the session ends. Events: `renewed` after each keepalive,
 * `atRisk` when one fails, `lost` once when the session is lost (not when closed).
 */
export class Session extends EventEmitter<HeldGrantEvents> {
  /** Server-chosen id, unique forever. */
  readonly sessionId: string;
  /** The label given at create, or null. */
  readonly name: string | null;
  readonly #keeper: SessionKeeper;
  readonly #ops: SessionOps;
  #close: Promise<boolean> | null = null;

  /** @internal Built by TenureClient.session from the create answer and its send time. */
  constructor(
    answer: { sessionId: string; ttlMs: number },
    name: string | null,
    sendTimeMs: number,
    ops: SessionOps,
    timing: GrantTiming,
    autoRenew: boolean,
  ) {
    super();
    this.sessionId = answer.sessionId;
    this.name = name;
    this.#ops = ops;
    this.#keeper = new SessionKeeper(
      answer.sessionId,
      answer.ttlMs,
      sendTimeMs,
      ops,
      timing,
      autoRenew,
      () => void this.close().catch(() => undefined),
    );
    this.#keeper.on('renewed', (e) => this.emit('renewed', e));
    this.#keeper.on('atRisk', (e) => this.emit('atRisk', e));
    this.#keeper.on('lost', (e) => this.emit('lost', e));
  }

  /** The session's ttl (ms): how long it lives after each keepalive. */
  get ttlMs(): number {
    return this.#keeper.ttlMs;
  }

  /** Aborted when the session is closed, lost, or its safe local deadline passes. */
  get signal(): AbortSignal {
    return this.#keeper.signal;
  }

  /** Time left before the safe local deadline (ms, ≥ 0). */
  get remainingMs(): number {
    return this.#keeper.remainingMs;
  }

  /** True while keepalives fail but the deadline has not passed. */
  get atRisk(): boolean {
    return this.#keeper.atRisk;
  }

  /** Why the session handle ended, or null while live. */
  get endReason(): EndReason | null {
    return this.#keeper.endReason;
  }

  /** True while live and before the safe local deadline (checked against the clock now). */
  isHeld(): boolean {
    return this.#keeper.isHeld();
  }

  /** Sends a keepalive now; rejects with TenureError (a 404 also ends the session handle). */
  keepalive(): Promise<void> {
    return this.#keeper.renew();
  }

  /**
   * Ends the session on the server (every grant bound to it ends in one step) and aborts `signal`.
   * Idempotent. Resolves true when the server ended it, false when it had already ended (404);
   * rejects with TenureError when the cluster could not be reached (it then ends by its ttl).
   */
  close(): Promise<boolean> {
    if (this.#close !== null) return this.#close;
    const wasEnded = this.endReason !== null;
    this.#keeper.close(`session ${this.sessionId} closed`);
    this.#close = this.#ops.end(this.sessionId).then(
      () => !wasEnded,
      (error: unknown) => {
        if (error instanceof TenureError && isLossCode(error.code)) return false;
        throw error;
      },
    );
    return this.#close;
  }

  /** Throws (AssertionError) if an invariant of the keepalive machinery is broken. */
  checkInvariants(): void {
    this.#keeper.checkInvariants();
  }

  /** Plain JSON view for logs and the CLI. */
  toJSON(): { sessionId: string; name: string | null; ttlMs: number } {
    return { sessionId: this.sessionId, name: this.name, ttlMs: this.ttlMs };
  }
}

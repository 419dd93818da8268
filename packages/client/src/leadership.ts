/**
 * Leadership handle returned by `TenureClient.campaign` (packages/client/README.md): the elected candidacy, renewed
 * at ttl/3, with the group's `fencingToken` (epoch), `signal` aborted when leadership is lost or its
 * safe local deadline passes (BC-22), `proclaim(value)` and `resign()`.
 */
import type { RenewOutcome } from './grant-timing.js';
import { HeldGrant, type GrantTiming } from './held-grant.js';
import type { CampaignAnswer, JsonValue } from './contract.js';
import { isLossCode, TenureError } from './errors.js';

/** The API calls a Leadership needs (provided by TenureClient). */
export interface LeadershipOps {
  renew(
    group: string,
    candidate: string,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<CampaignAnswer>;
  proclaim(group: string, candidate: string, fencingToken: number, value: JsonValue): Promise<void>;
  resign(group: string, candidate: string): Promise<void>;
}

/** Leadership of `group` held by `candidate` with epoch `fencingToken`. */
export class Leadership extends HeldGrant {
  readonly group: string;
  readonly candidate: string;
  readonly #ops: LeadershipOps;
  #value: JsonValue;
  #resign: Promise<boolean> | null = null;

  /** @internal Built by TenureClient.campaign from the electing answer and its request's send time. */
  constructor(
    group: string,
    candidate: string,
    fencingToken: number,
    ttlMs: number,
    value: JsonValue,
    sendTimeMs: number,
    ops: LeadershipOps,
    timing: GrantTiming,
    sessionSignal: AbortSignal | null = null,
  ) {
    super(fencingToken, ttlMs, sendTimeMs, timing, true);
    this.group = group;
    this.candidate = candidate;
    this.#value = value;
    this.#ops = ops;
    // A session-bound candidacy ends with its session (docs/primitives.md, sessions).
    if (sessionSignal !== null) this.followOwner(sessionSignal, `leadership of ${group}`);
  }

  /** The value last proclaimed (or campaigned with). */
  get value(): JsonValue {
    return this.#value;
  }

  /**
   * Sets the leader's value (docs/api.md proclaim, with this epoch's token). Rejects with TenureError;
   * 409 `not_holder` means leadership is gone and also ends the handle.
   */
  async proclaim(value: JsonValue): Promise<void> {
    this.assertHeld();
    try {
      await this.#ops.proclaim(this.group, this.candidate, this.fencingToken, value);
    } catch (error) {
      if (error instanceof TenureError && isLossCode(error.code)) this.endLost(error);
      throw error;
    }
    this.#value = value;
  }

  /**
   * Resigns (idempotent; later calls return the first promise). Aborts `signal` at once. Resolves
   * true when the server confirmed, false when the candidacy was already gone; rejects with
   * TenureError if the cluster could not be reached (the candidacy then expires by its TTL).
   */
  resign(): Promise<boolean> {
    if (this.#resign !== null) return this.#resign;
    const wasEnded = this.endReason !== null;
    this.endByOwner(`leadership of ${this.group} resigned`);
    this.#resign = this.#ops.resign(this.group, this.candidate).then(
      () => !wasEnded,
      (error: unknown) => {
        if (error instanceof TenureError && isLossCode(error.code)) return false;
        throw error;
      },
    );
    return this.#resign;
  }

  /** Plain JSON view for logs and the CLI. */
  toJSON(): {
    group: string;
    candidate: string;
    fencingToken: number;
    ttlMs: number;
    value: JsonValue;
  } {
    return {
      group: this.group,
      candidate: this.candidate,
      fencingToken: this.fencingToken,
      ttlMs: this.ttlMs,
      value: this.#value,
    };
  }

  protected override async renewCall(
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<RenewOutcome> {
    const answer = await this.#ops.renew(this.group, this.candidate, { signal, timeoutMs });
    if (!answer.elected || typeof answer.fencingToken !== 'number') {
      throw new TenureError(`${this.candidate} is no longer leader of ${this.group}`, {
        code: 'not_holder',
        status: 200,
        details: { leader: answer.leader },
      });
    }
    return { fencingToken: answer.fencingToken, ttlMs: this.ttlMs };
  }

  protected override onAbandoned(): void {
    if (this.#resign === null) this.resign().catch(() => undefined);
  }
}

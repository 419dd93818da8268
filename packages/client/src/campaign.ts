/**
 * One campaign in an election group (docs/api.md, elections): long-poll `campaign` in a loop while
 * renewing the candidacy at ttl/3, until an answer elects us, the caller aborts, or the server
 * answers 4xx. An election answered long after its request was sent is confirmed by a candidacy
 * renewal first (confirm-grant.ts) and the Leadership is dated from that renewal's send time.
 */
import { backoffDelayMs, DEFAULT_RETRY_POLICY } from './backoff.js';
import { sleepMs, type Clock } from './clock.js';
import { confirmGrant, needsConfirmation, type ConfirmResult } from './confirm-grant.js';
import type { CampaignAnswer, ElectionLeader, JsonValue } from './contract.js';
import { TenureError } from './errors.js';
import type { GrantTiming } from './held-grant.js';
import { Leadership, type LeadershipOps } from './leadership.js';
import type { Session } from './session.js';
import type { CallOptions } from './transport.js';

/** Longest server-side wait of one campaign long-poll (ms; the server's `waitMs` bound). */
export const CAMPAIGN_WAIT_MS_MAX = 60_000;

/**
 * Options of `TenureClient.campaign`: the candidacy lives by its own `ttlMs` (renewed at ttl/3), or
 * by a `session` (docs/primitives.md, sessions) — exactly one of them.
 */
export type CampaignOptions = CampaignFields &
  (
    | { readonly ttlMs: number; readonly session?: undefined }
    | { readonly session: Session | string; readonly ttlMs?: undefined }
  );

/**
 * What a campaign runs with once the client resolved its binding: the effective ttl (a session's,
 * for a session-bound candidacy), the session id to send, and the session handle to follow.
 */
export type CampaignRun = CampaignFields & {
  readonly ttlMs: number;
  readonly sessionId: string | null;
  readonly sessionSignal: AbortSignal | null;
};

/** The fields of a campaign besides ttlMs / session. */
export interface CampaignFields {
  /** Candidate id; default a fresh `${clientId}#${n}`. */
  readonly candidate?: string;
  /** Initial value (JSON; default null). */
  readonly value?: JsonValue;
  /** Abandons the campaign (resigning the candidacy) when aborted; the promise rejects with `aborted`. */
  readonly signal?: AbortSignal;
  /**
   * Called while the campaign waits behind another leader: once with the first leader an answer
   * names, and again whenever an answer names a different one (or a new fencing token).
   */
  readonly onWaiting?: (leader: ElectionLeader) => void;
}

/** The calls and parameters a campaign needs (provided by TenureClient). */
export interface CampaignDeps {
  readonly clock: Clock;
  readonly sleep: (delayMs: number, signal?: AbortSignal) => Promise<void>;
  readonly random: () => number;
  /** Budget of confirming a late election (ms): the client's default call deadline. */
  readonly requestTimeoutMs: number;
  /** `POST …/campaign` holding the answer up to `body.waitMs`; rejects with TenureError. */
  campaign(
    group: string,
    body: {
      candidate: string;
      ttlMs?: number;
      session?: string;
      value: JsonValue;
      waitMs: number;
    },
    signal: AbortSignal,
  ): Promise<CampaignAnswer>;
  /** `POST …/renew` of the candidacy. */
  renew(group: string, candidate: string, options: CallOptions): Promise<CampaignAnswer>;
  /** `POST …/resign` of the candidacy (best effort; errors are ignored by the caller). */
  resign(group: string, candidate: string): Promise<void>;
  /** Deadline timing of a grant with this ttl. */
  timing(ttlMs: number): GrantTiming;
  readonly leadershipOps: LeadershipOps;
}

interface Won {
  readonly answer: CampaignAnswer;
  readonly sendTimeMs: number;
}

/**
 * Campaigns as `candidate` in `group` and resolves with the Leadership once elected. Rejects with
 * TenureError `aborted` (after resigning) when `options.signal` aborts, with the server's error on a
 * 4xx answer, with `lease_lost` when a late election is gone on confirmation, or with
 * `outcomeUnknown: true` when it could not be confirmed within `deps.requestTimeoutMs`.
 */
export async function runCampaign(
  deps: CampaignDeps,
  group: string,
  candidate: string,
  options: CampaignRun,
): Promise<Leadership> {
  if (!(options.ttlMs > 0))
    throw new TenureError('ttlMs must be > 0', {
      code: 'invalid_argument',
      details: { field: 'ttlMs' },
    });
  const campaign = new Campaign(deps, group, candidate, options);
  const won = await campaign.untilElected();
  return campaign.leadership(won);
}

/** State of one campaign: both loops stop when `#stop` aborts. */
class Campaign {
  readonly #deps: CampaignDeps;
  readonly #group: string;
  readonly #candidate: string;
  readonly #options: CampaignRun;
  readonly #value: JsonValue;
  /** Renewal period and long-poll wait of each campaign call (ms). */
  readonly #periodMs: number;
  readonly #waitMs: number;
  readonly #stop = new AbortController();
  /** Set once, by the first answer that elects us; then `#stop` is aborted. */
  #won: Won | null = null;
  /** A 4xx answer that ends the campaign. */
  #fatal: unknown = null;
  /** Last leader reported to `onWaiting` (candidate and token), to report changes only. */
  #waitingBehind: string | null = null;

  constructor(deps: CampaignDeps, group: string, candidate: string, options: CampaignRun) {
    this.#deps = deps;
    this.#group = group;
    this.#candidate = candidate;
    this.#options = options;
    this.#value = options.value ?? null;
    this.#periodMs = Math.max(50, Math.floor(options.ttlMs / 3));
    this.#waitMs = Math.min(CAMPAIGN_WAIT_MS_MAX, this.#periodMs);
  }

  /** Runs both loops until elected; otherwise resigns and throws (`aborted` or the 4xx answer). */
  async untilElected(): Promise<Won> {
    const signal = this.#options.signal;
    const onAbort = (): void => this.#stop.abort(signal?.reason);
    if (signal?.aborted) this.#stop.abort(signal.reason);
    else signal?.addEventListener('abort', onAbort, { once: true });
    await Promise.all([this.#campaignLoop(), this.#renewLoop()]);
    signal?.removeEventListener('abort', onAbort);
    const won = this.#won as Won | null;
    if (won !== null) return won;
    // Abandoned: leave the queue so this candidacy is never elected later.
    this.#resignInBackground();
    if (this.#fatal !== null) throw this.#fatal;
    throw new TenureError(`campaign in ${this.#group} aborted`, {
      code: 'aborted',
      cause: signal?.reason,
    });
  }

  /**
   * Builds the Leadership of `won`. Elected long after the electing request was sent (slow retries):
   * first confirm with a renewal of the candidacy that must still elect us with the same token, and
   * date the leadership from it (docs/concepts.md, the time model).
   */
  async leadership(won: Won): Promise<Leadership> {
    const { ttlMs } = this.#options;
    const timing = this.#deps.timing(ttlMs);
    const fencingToken = won.answer.fencingToken!;
    let datedFromMs = won.sendTimeMs;
    if (needsConfirmation(won.sendTimeMs, this.#deps.clock.now(), ttlMs, timing)) {
      const confirmed = await this.#confirm(fencingToken, timing);
      if (confirmed.kind !== 'held') {
        // Leave the queue either way: a candidacy nobody campaigns for must not be elected later.
        this.#resignInBackground();
        throw this.#confirmFailed(fencingToken, confirmed);
      }
      datedFromMs = confirmed.sendTimeMs;
    }
    return new Leadership(
      this.#group,
      this.#candidate,
      fencingToken,
      ttlMs,
      won.answer.leader?.value ?? this.#value,
      datedFromMs,
      this.#deps.leadershipOps,
      timing,
      this.#options.sessionSignal,
    );
  }

  #settle(answer: CampaignAnswer, sendTimeMs: number): void {
    if (this.#won !== null) return;
    if (answer.elected && typeof answer.fencingToken === 'number') {
      this.#won = { answer, sendTimeMs };
      this.#stop.abort();
    } else if (answer.leader !== null && answer.leader.candidate !== this.#candidate) {
      const behind = `${answer.leader.candidate}\u0000${answer.leader.fencingToken}`;
      if (behind === this.#waitingBehind) return;
      this.#waitingBehind = behind;
      this.#options.onWaiting?.(answer.leader);
    }
  }

  async #campaignLoop(): Promise<void> {
    const { clock, sleep } = this.#deps;
    const { sessionId, ttlMs } = this.#options;
    const body = {
      candidate: this.#candidate,
      ...(sessionId === null ? { ttlMs } : { session: sessionId }),
      value: this.#value,
      waitMs: this.#waitMs,
    };
    for (let failures = 0; !this.#stop.signal.aborted;) {
      const sendTimeMs = clock.now();
      try {
        this.#settle(await this.#deps.campaign(this.#group, body, this.#stop.signal), sendTimeMs);
        failures = 0;
        // Guard against a server that does not hold the long-poll: never spin.
        const elapsedMs = clock.now() - sendTimeMs;
        if (this.#won === null && elapsedMs < this.#waitMs / 2)
          await sleep(this.#waitMs / 2 - elapsedMs, this.#stop.signal);
      } catch (error) {
        if (this.#stop.signal.aborted) return;
        if (isClientError(error)) {
          this.#fatal = error;
          this.#stop.abort();
          return;
        }
        const delayMs = backoffDelayMs(DEFAULT_RETRY_POLICY, failures++, this.#deps.random);
        await sleep(delayMs, this.#stop.signal).catch(() => undefined);
      }
    }
  }

  async #renewLoop(): Promise<void> {
    const stop = this.#stop.signal;
    while (!stop.aborted) {
      try {
        await sleepMs(this.#deps.clock, this.#periodMs, stop);
      } catch {
        return;
      }
      const sendTimeMs = this.#deps.clock.now();
      try {
        const options = { signal: stop, timeoutMs: this.#periodMs };
        this.#settle(await this.#deps.renew(this.#group, this.#candidate, options), sendTimeMs);
      } catch {
        // A lost candidacy is re-created by the next campaign call; transient errors retry next period.
      }
    }
  }

  #confirm(fencingToken: number, timing: GrantTiming): Promise<ConfirmResult> {
    const { ttlMs } = this.#options;
    return confirmGrant(
      async (timeoutMs, signal) => {
        const options = { timeoutMs, ...(signal === undefined ? {} : { signal }) };
        const answer = await this.#deps.renew(this.#group, this.#candidate, options);
        if (!answer.elected || typeof answer.fencingToken !== 'number')
          throw new TenureError(`${this.#candidate} is no longer leader of ${this.#group}`, {
            code: 'not_holder',
            status: 200,
            details: { leader: answer.leader },
          });
        return { fencingToken: answer.fencingToken, ttlMs };
      },
      fencingToken,
      ttlMs,
      timing,
      this.#deps.requestTimeoutMs,
      this.#options.signal,
    );
  }

  #confirmFailed(
    fencingToken: number,
    confirmed: Exclude<ConfirmResult, { kind: 'held' }>,
  ): TenureError {
    const { error } = confirmed;
    const details = { fencingToken, cause: error.code };
    const elected = `elected in ${this.#group} (token ${fencingToken})`;
    if (confirmed.kind === 'lost')
      return new TenureError(`${elected} but no longer leader when confirmed: ${error.message}`, {
        code: 'lease_lost',
        status: error.status,
        details,
        cause: error,
      });
    return new TenureError(`${elected} but could not confirm it: ${error.message}`, {
      code: error.code,
      status: error.status,
      details,
      outcomeUnknown: true,
      cause: error,
    });
  }

  #resignInBackground(): void {
    this.#deps.resign(this.#group, this.#candidate).catch(() => undefined);
  }
}

/** A 4xx answer: the request itself is wrong, so campaigning again cannot help. */
function isClientError(error: unknown): boolean {
  return (
    error instanceof TenureError &&
    error.status !== null &&
    error.status >= 400 &&
    error.status < 500
  );
}

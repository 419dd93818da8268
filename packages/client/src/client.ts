/**
 * TenureClient: the TypeScript client of docs/api.md/§4 — leases with self-renewing handles, elections,
 * long-poll iterators, fenced KV writes and fence checks, on top of the retrying Transport.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as setTimeoutPromise } from 'node:timers/promises';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './backoff.js';
import {
  CAMPAIGN_WAIT_MS_MAX,
  runCampaign,
  type CampaignDeps,
  type CampaignOptions,
} from './campaign.js';
import { authApi, type AuthApi } from './auth-api.js';
import { systemClock, type Clock } from './clock.js';
import type {
  CampaignAnswer,
  ClusterView,
  MembersView,
  ElectionObserveView,
  ElectionView,
  FenceCheckResult,
  FenceSpec,
  HistoryGrant,
  JsonValue,
  KvView,
  LeaseGrantAnswer,
  LeaseMode,
  LeaseView,
  LeaseWatchView,
  RevokeAnswer,
  SemaphoreGrantAnswer,
  SemaphoreView,
  SessionAnswer,
  SessionView,
  SharedLeaseView,
} from './contract.js';
import { TenureError } from './errors.js';
import { confirmGrant, needsConfirmation, type ConfirmResult } from './confirm-grant.js';
import type { GrantTiming } from './held-grant.js';
import { processIncarnationId } from './identity.js';
import { Lease, type LeaseOps } from './lease.js';
import { Permit } from './permit.js';
import { Session, type SessionOps } from './session.js';

export type { CampaignOptions } from './campaign.js';
import { Leadership, type LeadershipOps } from './leadership.js';
import {
  listPath,
  pageOf,
  walkPages,
  type ListItems,
  type ListKind,
  type ListPage,
  type ListQuery,
} from './listing.js';
import { silentLogger, type Logger } from './logger.js';
import { longPoll, type LongPollOptions } from './long-poll.js';
import { watchChanges, type ChangeWatchOptions, type WatchEvent } from './change-watch.js';
import { tlsFetch, type ClientTlsOptions, type TlsFetch } from './tls.js';
import { normalizeEndpoint, Transport, type CallOptions, type RequestSpec } from './transport.js';

/** Options of `new TenureClient(...)`. */
export interface TenureClientOptions extends ClientTlsOptions {
  /** Node base URLs `http://host:port` or `https://host:port` (at least one). */
  readonly endpoints: readonly string[];
  /** Bearer token sent on every request when the cluster runs with auth (docs/security.md). */
  readonly token?: string;
  /** Default deadline of a call, retries included (ms; default 5,000 = docs/api.md server default). */
  readonly requestTimeoutMs?: number;
  /** Retry policy (default: until the call's deadline, 50 ms → 1 s backoff with jitter; at most 1,000 tries). */
  readonly retry?: Partial<RetryPolicy>;
  /** Clock-rate drift bound ρ of docs/concepts.md (default 0.01). */
  readonly maxDriftRatio?: number;
  /** Margin subtracted from every safe deadline (ms; default min(100, 10% of the ttl)). */
  readonly safetyMarginMs?: number;
  /** pino-compatible logger (default silent). */
  readonly logger?: Logger;
  /** Prefix of generated holder/candidate ids (default `${hostname}:${pid}:${uuid}`, unique per process incarnation). */
  readonly clientId?: string;
  /** Also use members' `httpAddress` from /v1/cluster that are not in `endpoints` (default false). */
  readonly discoverMembers?: boolean;
  /** Monotonic clock and timers for lease/leadership deadlines and renewals (tests inject a fake). */
  readonly clock?: Clock;
  /**
   * fetch implementation (default global fetch, or an undici fetch with the TLS options `ca`,
   * `cert`, `key`, which cannot be combined with this).
   */
  readonly fetch?: typeof fetch;
  /** Retry-delay sleeper (default real timers). */
  readonly sleep?: (delayMs: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform [0, 1) for jitter (default Math.random). */
  readonly random?: () => number;
}

/** Options of a mutation: call options plus an explicit idempotency key (to retry one logical call yourself). */
export interface MutationOptions extends CallOptions {
  /** Reuse this key to repeat an earlier call whose outcome was unknown (docs/concepts.md); default: fresh per call. */
  readonly idempotencyKey?: string;
}

/** Options of a default or stale read. */
export interface ReadOptions extends CallOptions {
  /** `stale` answers from the contacted node without a ReadIndex round (docs/api.md Reads). */
  readonly consistency?: 'linearizable' | 'stale';
}

/**
 * How a grant stays alive: its own `ttlMs`, or a `session` (docs/primitives.md, sessions) — exactly
 * one of them; anything else is TenureError `invalid_argument` naming the field.
 */
export type GrantLife =
  | { readonly ttlMs: number; readonly session?: undefined }
  /**
   * A Session handle (the grant's handle ends with it), or a session id (the client reads the
   * session once for its ttl; the handle then learns of the session's end by its renewals).
   */
  | { readonly session: Session | string; readonly ttlMs?: undefined };

/** Options of `acquire` (docs/api.md acquire body; durations in ms). */
export type AcquireOptions = AcquireFields & GrantLife;

/** The fields of `acquire` besides ttlMs / session. */
export interface AcquireFields extends MutationOptions {
  /** `shared` (a read lock: any number of shared holders at once) or `exclusive` (default). */
  readonly mode?: LeaseMode;
  /** Wait up to this long for the lease (FIFO queue on the server; ≤ 60,000). Default 0: fail with 409 `held`. */
  readonly waitMs?: number;
  /** After this lease *expires*, nobody may take it for this long (Chubby lock-delay). */
  readonly lockDelayMs?: number;
  /** Cap on the total hold time across renewals. */
  readonly maxHoldMs?: number;
  /** Holder id; default a fresh `${clientId}#${n}` per call so two calls in one process never share a grant. */
  readonly holder?: string;
  /** Renew automatically at ttl/3 (default true). */
  readonly autoRenew?: boolean;
}

/** Options of `semaphore` (docs/api.md semaphore acquire body; durations in ms). */
export type SemaphoreOptions = SemaphoreFields & GrantLife;

/** The fields of `semaphore` besides ttlMs / session. */
export interface SemaphoreFields extends MutationOptions {
  /** Most live permits (1–10,000); must match the current limit while the name has holders or waiters. */
  readonly limit: number;
  /** Wait up to this long for a permit (FIFO on the server; ≤ 60,000). Default 0: fail with 409 `held`. */
  readonly waitMs?: number;
  /** Holder id; default a fresh `${clientId}#${n}` per call. */
  readonly holder?: string;
  /** Renew automatically at ttl/3 (default true). */
  readonly autoRenew?: boolean;
}

/** Options of `session`. */
export interface SessionOptions extends MutationOptions {
  /** Time to live after each keepalive (ms; the same bounds as a lease's ttl). */
  readonly ttlMs: number;
  /** Free label operators see in `GET /v1/sessions/{id}`. */
  readonly name?: string;
  /** Send keepalives automatically at ttl/3 (default true). */
  readonly autoRenew?: boolean;
}

/** The resource families with holder history and revoke. */
export type GrantKind = 'lease' | 'semaphore' | 'election';

/** `POST …/release` answer of a lease or semaphore grant (docs/api.md). */
export interface ReleaseAnswer {
  readonly name: string;
  readonly released: true;
}

/** A call on one held grant of a lease or semaphore. */
type GrantAction = 'renew' | 'release';

/**
 * The arguments of a renew or release without a handle: the grant is named by `name` and
 * `(holder, fencingToken)` (docs/api.md).
 */
export type GrantCallArgs = [
  name: string,
  holder: string,
  fencingToken: number,
  options?: MutationOptions,
];

/** The answer of each GrantAction per kind (docs/api.md). */
interface GrantAnswers {
  readonly lease: { readonly renew: LeaseGrantAnswer; readonly release: ReleaseAnswer };
  readonly semaphore: { readonly renew: SemaphoreGrantAnswer; readonly release: ReleaseAnswer };
}

/** Options of `history`. */
export interface HistoryOptions extends ReadOptions {
  /** Default `lease`. */
  readonly kind?: GrantKind;
  /** Most grants returned, newest first (1–100, default 20). */
  readonly limit?: number;
}

/** Options of `revoke`. */
export interface RevokeOptions extends MutationOptions {
  /** Default `lease`. */
  readonly kind?: GrantKind;
  /** Revoke only the grant with this token (409 `not_holder` when it is not live); default: every live grant. */
  readonly fencingToken?: number;
  /** Free text for the operator's log. */
  readonly reason?: string;
}

/** Options of `kv.put` / `kv.delete`. */
export interface KvWriteOptions extends MutationOptions {
  /** Commit only if this lease/election's current live grant carries exactly this token (docs/api.md). */
  readonly fence?: FenceSpec;
  /** Commit only if the key's revision is this (0: only if absent). */
  readonly ifRevision?: number;
}

/** Long-poll options of `observe` / `watchLease`. */
export interface WatchOptions extends LongPollOptions {
  /** Server-side long-poll duration per request (ms, ≤ 60,000; default 30,000). */
  readonly pollTimeoutMs?: number;
}

/** The `kv` namespace of a TenureClient (docs/api.md fenced writes). */
export interface KvApi {
  /** Writes `value`; resolves `{key, revision}`. 409 `stale_token` / `revision_mismatch` → TenureError. */
  put(
    key: string,
    value: JsonValue,
    options?: KvWriteOptions,
  ): Promise<{ key: string; revision: number }>;
  /** Reads a key; null when it does not exist (404). */
  get(key: string, options?: ReadOptions): Promise<KvView | null>;
  /** Deletes a key; 404 → TenureError `not_found`. */
  delete(key: string, options?: KvWriteOptions): Promise<{ key: string; deleted: true }>;
}

const LONG_POLL_MS_DEFAULT = 30_000;
const LONG_POLL_MS_MAX = CAMPAIGN_WAIT_MS_MAX;

/**
 * Client of a Tenure cluster. All methods reject with TenureError (docs/api.md codes, or `unavailable`,
 * `aborted`, `internal`, `lease_lost`); failed mutations that may have committed carry
 * `outcomeUnknown: true`.
 */
export class TenureClient {
  /** Prefix of ids this client generates; unique per process incarnation. */
  readonly clientId: string;
  readonly kv: KvApi;
  /** Tokens and roles (needs an admin token). */
  readonly auth: AuthApi;
  readonly #transport: Transport;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #sleep: (delayMs: number, signal?: AbortSignal) => Promise<void>;
  readonly #logger: Logger;
  readonly #maxDriftRatio: number;
  readonly #safetyMarginMs: number | undefined;
  /** Default call deadline (ms), also the budget of confirming a late grant. */
  readonly #requestTimeoutMs: number;
  /** The TLS-configured fetch when `ca`/`cert`/`key` were given (its connections close in close()). */
  readonly #tls: TlsFetch | null;
  #idSequence = 0;
  readonly #fetch: typeof fetch;

  /**
   * Throws TenureError `invalid_argument` (details `{field}`) when `endpoints` is missing, empty or
   * holds a string that is not an http(s) URL or `host:port`; RangeError for an out-of-range option.
   */
  constructor(options: TenureClientOptions) {
    checkEndpoints(options?.endpoints);
    const maxDriftRatio = options.maxDriftRatio ?? 0.01;
    if (!(maxDriftRatio >= 0 && maxDriftRatio < 0.5))
      throw new RangeError('maxDriftRatio must be in [0, 0.5)');
    if (options.safetyMarginMs !== undefined && !(options.safetyMarginMs >= 0))
      throw new RangeError('safetyMarginMs must be ≥ 0');
    this.clientId = options.clientId ?? processIncarnationId();
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#logger = options.logger ?? silentLogger;
    this.#maxDriftRatio = maxDriftRatio;
    this.#safetyMarginMs = options.safetyMarginMs;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 5000;
    this.#tls = tlsFetch(options);
    if (this.#tls !== null && options.fetch !== undefined)
      throw new TypeError('fetch and ca/cert/key: give one or the other');
    this.#sleep =
      options.sleep ??
      ((delayMs, signal) =>
        setTimeoutPromise(delayMs, undefined, signal === undefined ? {} : { signal }));
    this.#fetch = this.#tls?.fetch ?? options.fetch ?? fetch;
    this.#transport = new Transport(
      {
        endpoints: options.endpoints,
        requestTimeoutMs: this.#requestTimeoutMs,
        retry: { ...DEFAULT_RETRY_POLICY, ...options.retry },
        discoverMembers: options.discoverMembers ?? false,
        ...(options.token === undefined ? {} : { token: options.token }),
      },
      {
        fetch: this.#fetch,
        now: () => performance.now(),
        sleep: this.#sleep,
        random: this.#random,
        logger: this.#logger,
      },
    );
    this.auth = authApi({
      mutate: (method, path, body, o) => this.#mutate(method, path, body, o),
      read: async (path, o) => (await this.#read(path, o, false))!,
    });
    this.kv = {
      put: (key, value, opts = {}) =>
        this.#kvWrite('PUT', key, { value, ...fenceFields(opts) }, opts).then(
          (r) => r as { key: string; revision: number },
        ),
      get: (key, opts = {}) => this.#read<KvView>(`/v1/kv/${enc(key)}`, opts, true),
      delete: (key, opts = {}) =>
        this.#kvWrite('DELETE', key, fenceFields(opts), opts).then(
          (r) => r as { key: string; deleted: true },
        ),
    };
  }

  /**
   * Every committed change passing the filters, as an async iterator (docs/api.md "Streaming
   * watch"): in log order, each exactly once, resuming by itself from the last revision seen on
   * another endpoint when a node goes away. Throws WatchCompactedError (code `compacted`) when no
   * endpoint keeps the changes after that revision any more; ends when `signal` aborts or the loop
   * breaks. See change-watch.ts.
   */
  watch(options: ChangeWatchOptions = {}): AsyncIterableIterator<WatchEvent> {
    return watchChanges(options, {
      endpoints: this.#transport.endpoints,
      fetch: this.#fetch,
      sleep: this.#sleep,
      random: this.#random,
      logger: this.#logger,
    });
  }

  /**
   * Closes the connections of the TLS options' agent (nothing to do without `ca`/`cert`/`key`).
   * Calls made afterwards fail. Held leases are not released: release them first.
   */
  async close(): Promise<void> {
    await this.#tls?.close();
  }

  /** Node id of the leader as last reported by `Tenure-Leader`, or null. */
  get leaderId(): string | null {
    return this.#transport.leaderId;
  }

  /** A fresh holder/candidate id `${clientId}#${n}` (never repeats within this client). */
  newOwnerId(): string {
    return `${this.clientId}#${++this.#idSequence}`;
  }

  // ---- leases ---------------------------------------------------------------------------------

  /**
   * Acquires lease `name` (docs/api.md acquire) and returns a self-renewing Lease handle: exclusive,
   * or with `mode: 'shared'` one of any number of shared grants; alive by its own `ttlMs`, or by a
   * `session` (the lease then ends when the session ends). Rejects with
   * TenureError: 409 `held` (details `{holder}` or `{lockDelayRemainingMs}`), 400, `unavailable`, …
   * When the outcome is unknown (`outcomeUnknown`), the client also checks in the background whether the
   * lease was granted to this holder and releases it; it never reports "not acquired" for that case.
   * A grant that arrives more than ttl/3 after the acquire was sent (a long wait) is first confirmed by
   * a renewal with the same (holder, fencingToken), and the lease is dated from that renewal's send time
   * (docs/concepts.md); if the server answers that the grant is gone (409 `not_holder`/`lease_expired`) acquire
   * rejects with `lease_lost` (outcome known: not held); if no renewal is answered in time within the
   * call's `timeoutMs` it releases the grant in the background and rejects with `outcomeUnknown: true`.
   */
  async acquire(name: string, options: AcquireOptions): Promise<Lease> {
    const holder = options.holder ?? this.newOwnerId();
    const life = await this.#grantLife(options);
    const body: Record<string, unknown> = { holder, ...life.body };
    if (options.mode !== undefined) body['mode'] = options.mode;
    if (options.waitMs !== undefined) body['waitMs'] = options.waitMs;
    if (options.lockDelayMs !== undefined) body['lockDelayMs'] = options.lockDelayMs;
    if (options.maxHoldMs !== undefined) body['maxHoldMs'] = options.maxHoldMs;
    const held = await this.#holdGrant<LeaseGrantAnswer>(
      {
        kind: 'lease',
        name,
        holder,
        body,
        waitMs: options.waitMs ?? 0,
        sessionTtlMs: life.sessionTtlMs,
      },
      options,
    );
    const { name: granted, fencingToken } = held.grant;
    return new Lease(
      { name: granted, holder, fencingToken, ttlMs: held.ttlMs },
      held.datedFromMs,
      this.#grantOps('lease'),
      held.timing,
      options.autoRenew ?? true,
      // What the server answered, never what was asked.
      {
        session: answeredSession(held.grant.session, life.session),
        mode: held.grant.mode ?? 'exclusive',
      },
    );
  }

  /**
   * Acquires one permit of semaphore `name` (docs/api.md, Semaphores) and returns a self-renewing
   * Permit handle (the same machinery as `acquire`: renewals at ttl/3, safe deadline, late-grant
   * confirmation, `lost`). Rejects with TenureError: 409 `held` (details `{limit, live}`), 409
   * `limit_mismatch` (details `{limit}`: the current one), 404 (unknown session), 400, 429, …
   */
  async semaphore(name: string, options: SemaphoreOptions): Promise<Permit> {
    const holder = options.holder ?? this.newOwnerId();
    const life = await this.#grantLife(options);
    const body: Record<string, unknown> = { holder, limit: options.limit, ...life.body };
    if (options.waitMs !== undefined) body['waitMs'] = options.waitMs;
    const held = await this.#holdGrant<SemaphoreGrantAnswer>(
      {
        kind: 'semaphore',
        name,
        holder,
        body,
        waitMs: options.waitMs ?? 0,
        sessionTtlMs: life.sessionTtlMs,
      },
      options,
    );
    const { name: granted, fencingToken, limit } = held.grant;
    return new Permit(
      { name: granted, holder, fencingToken, limit, ttlMs: held.ttlMs },
      held.datedFromMs,
      this.#grantOps('semaphore'),
      held.timing,
      options.autoRenew ?? true,
      answeredSession(held.grant.session, life.session),
    );
  }

  /**
   * Creates a session (docs/api.md, Sessions) and returns its handle, which sends keepalives at
   * ttl/3 and aborts `signal` when the session ends or is lost. Rejects with TenureError (429 at
   * the server's session limit, 400 for a ttl out of range, …).
   */
  async session(options: SessionOptions): Promise<Session> {
    const body: Record<string, unknown> = { ttlMs: options.ttlMs };
    if (options.name !== undefined) body['name'] = options.name;
    const sendTimeMs = this.#clock.now();
    const answer = await this.#mutate<SessionAnswer>('POST', '/v1/sessions', body, options);
    return new Session(
      answer,
      options.name ?? null,
      sendTimeMs,
      this.#sessionOps(),
      this.#timing(answer.ttlMs),
      options.autoRenew ?? true,
    );
  }

  /**
   * The `ttlMs` / `session` part of a grant request: exactly one of them, else TenureError
   * `invalid_argument` naming the field (docs/api.md, Sessions). A session id is read once for
   * its ttl (404 → TenureError `not_found`).
   */
  async #grantLife(options: {
    readonly ttlMs?: number | undefined;
    readonly session?: Session | string | undefined;
  }): Promise<{
    body: Record<string, unknown>;
    session: Session | string | null;
    sessionTtlMs: number | null;
  }> {
    const invalid = (field: string, message: string): TenureError =>
      new TenureError(`${field}: ${message}`, { code: 'invalid_argument', details: { field } });
    const { session, ttlMs } = options;
    if (session !== undefined && ttlMs !== undefined)
      throw invalid('session', 'give ttlMs or session, not both');
    if (session === undefined) {
      if (ttlMs === undefined) throw invalid('ttlMs', 'give ttlMs or session (exactly one)');
      return { body: { ttlMs }, session: null, sessionTtlMs: null };
    }
    if (typeof session !== 'string')
      return { body: { session: session.sessionId }, session, sessionTtlMs: session.ttlMs };
    const view = await this.getSession(session);
    if (view === null)
      throw new TenureError(`session ${session} not found`, { code: 'not_found', status: 404 });
    return { body: { session }, session, sessionTtlMs: view.ttlMs };
  }

  /**
   * The effective ttl of a granted answer: its own `ttlMs`, or for a session-bound grant its
   * session's (`askedSessionTtlMs`, the ttl of the session that was asked for, when the answer
   * names it; else read once; null when that session is gone or no session is named).
   */
  async #effectiveTtlMs(
    grant: { readonly ttlMs: number | null; readonly session?: string | undefined },
    askedSessionTtlMs: number | null,
  ): Promise<number | null> {
    if (grant.ttlMs !== null) return grant.ttlMs;
    if (askedSessionTtlMs !== null || typeof grant.session !== 'string') return askedSessionTtlMs;
    return (await this.getSession(grant.session).catch(() => null))?.ttlMs ?? null;
  }

  /**
   * Sends one grant request (lease or semaphore acquire), checks the answer, and confirms a late
   * grant (docs/concepts.md): the grant, the send time the handle is dated from, its effective ttl
   * (a session-bound grant's is its session's) and timing. When the outcome is unknown, releases a
   * grant to `holder` in the background; a late grant that cannot be confirmed rejects as
   * `lease_lost` (gone) or with `outcomeUnknown` (after a background release).
   */
  async #holdGrant<G extends LeaseGrantAnswer | SemaphoreGrantAnswer>(
    req: {
      readonly kind: 'lease' | 'semaphore';
      readonly name: string;
      readonly holder: string;
      readonly body: Record<string, unknown>;
      readonly waitMs: number;
      /** The ttl of the session the grant is bound to, or null. */
      readonly sessionTtlMs: number | null;
    },
    options: MutationOptions,
  ): Promise<{ grant: G; datedFromMs: number; ttlMs: number; timing: GrantTiming }> {
    const { kind, name, holder } = req;
    const sendTimeMs = this.#clock.now();
    let grant: G;
    try {
      grant = await this.#mutate<G>(
        'POST',
        `${kindPath(kind)}/${enc(name)}/acquire`,
        req.body,
        options,
        req.waitMs,
      );
    } catch (error) {
      if (error instanceof TenureError && error.outcomeUnknown)
        this.#releaseIfGranted(kind, name, holder);
      throw error;
    }
    const asked = req.body['session'] === grant.session ? req.sessionTtlMs : null;
    const grantTtlMs = await this.#effectiveTtlMs(grant, asked);
    if (
      grant.holder !== holder ||
      !Number.isSafeInteger(grant.fencingToken) ||
      !(grantTtlMs! > 0)
    ) {
      this.#releaseIfGranted(kind, name, holder);
      throw new TenureError(`${kind} acquire answered a malformed grant`, {
        code: 'internal',
        status: 200,
        details: { grant },
      });
    }
    // A long wait (or slow retries) may have used up the ttl counted from our send time although the
    // server granted only now: confirm with a renewal of this very grant and date the handle from it.
    const timing = this.#timing(grantTtlMs!);
    if (!needsConfirmation(sendTimeMs, this.#clock.now(), grantTtlMs!, timing))
      return { grant, datedFromMs: sendTimeMs, ttlMs: grantTtlMs!, timing };
    const confirmed = await confirmGrant(
      async (timeoutMs, signal) => {
        const r = await this.#grantCall(kind, 'renew', name, holder, grant.fencingToken, {
          timeoutMs,
          ...(signal === undefined ? {} : { signal }),
        });
        return { fencingToken: r.fencingToken, ttlMs: r.ttlMs ?? grantTtlMs! };
      },
      grant.fencingToken,
      grantTtlMs!,
      timing,
      options.timeoutMs ?? this.#requestTimeoutMs,
      options.signal,
    );
    if (confirmed.kind !== 'held')
      throw this.#lateGrantFailed(kind, name, holder, grant, sendTimeMs, confirmed);
    return {
      grant,
      datedFromMs: confirmed.sendTimeMs,
      ttlMs: confirmed.ttlMs,
      timing: confirmed.ttlMs === grantTtlMs ? timing : this.#timing(confirmed.ttlMs),
    };
  }

  /**
   * Acquires `name`, runs `fn(lease)`, and releases in `finally` (release errors are logged, not thrown).
   * `fn` should stop when `lease.signal` aborts and pass `lease.fencingToken` to its writes (docs/concepts.md).
   * Resolves with `fn`'s result only if the lease was still held when `fn` finished (or `fn` released
   * it itself); a lease lost while `fn` ran — its safe deadline passed, e.g. during an event-loop
   * stall, or the server said it is gone — rejects with TenureError `lease_lost` (or the loss
   * reason), because `fn`'s effects were not all made under the lease.
   */
  async withLease<T>(
    name: string,
    options: AcquireOptions,
    fn: (lease: Lease) => Promise<T>,
  ): Promise<T> {
    const lease = await this.acquire(name, options);
    try {
      const result = await fn(lease);
      if (lease.endReason !== 'released') lease.assertHeld();
      return result;
    } finally {
      await lease
        .release()
        .catch((error: unknown) => this.#logger.warn?.({ name, err: error }, 'release failed'));
    }
  }

  /** One renewal of a grant (docs/api.md renew) without a handle, e.g. from the CLI. 409 → TenureError. */
  renewLease(...grant: GrantCallArgs): Promise<LeaseGrantAnswer> {
    return this.#grantCall('lease', 'renew', ...grant);
  }

  /** Releases a grant by `(holder, fencingToken)` (docs/api.md) without a handle. 409 → TenureError. */
  releaseLease(...grant: GrantCallArgs): Promise<ReleaseAnswer> {
    return this.#grantCall('lease', 'release', ...grant);
  }

  /**
   * Reads a lease; null when there is no live grant (404). A name held in shared mode reads as
   * `{name, mode: 'shared', holders}`.
   */
  getLease(name: string, options: ReadOptions = {}): Promise<LeaseView | SharedLeaseView | null> {
    return this.#read<LeaseView | SharedLeaseView>(`/v1/leases/${enc(name)}`, options, true);
  }

  // ---- semaphores, sessions, history, revoke --------------------------------------------------

  /** One renewal of a permit (docs/api.md semaphore renew) without a handle. 409 → TenureError. */
  renewSemaphore(...grant: GrantCallArgs): Promise<SemaphoreGrantAnswer> {
    return this.#grantCall('semaphore', 'renew', ...grant);
  }

  /** Releases a permit by `(holder, fencingToken)` without a handle. 409 → TenureError. */
  releaseSemaphore(...grant: GrantCallArgs): Promise<ReleaseAnswer> {
    return this.#grantCall('semaphore', 'release', ...grant);
  }

  /**
   * The renew or release of one grant of a lease or semaphore, named by `(holder, fencingToken)`
   * (docs/api.md: both routes take that body and answer 409 `not_holder`/`lease_expired` for a grant
   * that is not the live one). The one place these four calls are made; the typed public methods,
   * the handles' ops and the acquire clean-up all go through it.
   */
  #grantCall<K extends keyof GrantAnswers, A extends GrantAction>(
    kind: K,
    action: A,
    ...[name, holder, fencingToken, options = {}]: GrantCallArgs
  ): Promise<GrantAnswers[K][A]> {
    const path = `${kindPath(kind)}/${enc(name)}/${action}`;
    return this.#mutate('POST', path, { holder, fencingToken }, options);
  }

  /** Reads a semaphore: limit, live permits, waiter count; null when nobody holds or waits (404). */
  getSemaphore(name: string, options: ReadOptions = {}): Promise<SemaphoreView | null> {
    return this.#read<SemaphoreView>(`/v1/semaphores/${enc(name)}`, options, true);
  }

  /** Reads a session and what is bound to it; null once it ended or expired (404). */
  getSession(sessionId: string, options: ReadOptions = {}): Promise<SessionView | null> {
    return this.#read<SessionView>(`/v1/sessions/${enc(sessionId)}`, options, true);
  }

  /** One keepalive of a session by id, without a handle (the CLI). 404 → TenureError `not_found`. */
  keepaliveSession(sessionId: string, options: MutationOptions = {}): Promise<SessionAnswer> {
    return this.#mutate<SessionAnswer>(
      'POST',
      `/v1/sessions/${enc(sessionId)}/keepalive`,
      undefined,
      options,
    );
  }

  /** Ends a session by id (every grant bound to it ends at once). 404 → TenureError `not_found`. */
  endSession(
    sessionId: string,
    options: MutationOptions = {},
  ): Promise<{ sessionId: string; ended: true }> {
    return this.#mutate('DELETE', `/v1/sessions/${enc(sessionId)}`, undefined, options);
  }

  /**
   * Holder history of a lease (default), semaphore or election (docs/api.md, Holder history):
   * grants newest first, with grant/end times in cluster ms and end reasons; [] for a name never
   * granted.
   */
  async history(name: string, options: HistoryOptions = {}): Promise<HistoryGrant[]> {
    const query = options.limit === undefined ? '' : `?limit=${options.limit}`;
    const path = `${kindPath(options.kind ?? 'lease')}/${enc(name)}/history${query}`;
    const answer = await this.#read<{ grants: HistoryGrant[] }>(path, options, false);
    return answer?.grants ?? [];
  }

  /**
   * Operator revoke (docs/api.md): ends the grant with `fencingToken` (or every live grant) of a
   * lease (default), semaphore or election as if it had expired — its token is fenced, lock-delay
   * applies. Resolves with the revoked tokens ([] when nothing was live); 409 `not_holder` when the
   * given token is not live.
   */
  async revoke(name: string, options: RevokeOptions = {}): Promise<number[]> {
    const body: Record<string, unknown> = {};
    if (options.fencingToken !== undefined) body['fencingToken'] = options.fencingToken;
    if (options.reason !== undefined) body['reason'] = options.reason;
    const path = `${kindPath(options.kind ?? 'lease')}/${enc(name)}/revoke`;
    const answer = await this.#mutate<RevokeAnswer>('POST', path, body, options);
    return [...answer.revoked];
  }

  /**
   * Live leases (exclusive grants) whose names start with `query.prefix`, in name order, after
   * `query.after`, at most `query.limit`: the items of one page of `list('leases', query)`.
   */
  async listLeases(query: ListQuery = {}, options: ReadOptions = {}): Promise<LeaseView[]> {
    return (await this.list('leases', query, options)).items;
  }

  // ---- listings -------------------------------------------------------------------------------

  /**
   * One page of a listing (docs/api.md, Listings): live leases, election groups with candidates,
   * or KV keys (`{key, revision}`), in name order, filtered by `prefix`, after the cursor `after`,
   * at most `limit` (1–1000, server default 100); `nextCursor` is the `after` of the next page,
   * null on the last one. A bad query field is TenureError `invalid_argument` naming it.
   */
  async list<K extends ListKind>(
    kind: K,
    query: ListQuery = {},
    options: ReadOptions = {},
  ): Promise<ListPage<ListItems[K]>> {
    const answer = await this.#read<Record<string, unknown>>(listPath(kind, query), options, false);
    return pageOf(kind, answer ?? {});
  }

  /**
   * Every item of a listing, following `nextCursor` page after page (pages of `query.limit`); see
   * `list`. Items created or removed during the walk may or may not appear; none appears twice.
   */
  listAll<K extends ListKind>(
    kind: K,
    query: ListQuery = {},
    options: ReadOptions = {},
  ): AsyncGenerator<ListItems[K], void, undefined> {
    return walkPages(query.after, (after) =>
      this.list(kind, { ...query, ...(after === undefined ? {} : { after }) }, options),
    );
  }

  /**
   * Iterates the grants of lease `name`: the current one first (holder/token null when free), then each
   * change (docs/api.md watch long-poll with `afterToken`). Ends when `signal` aborts or the loop breaks.
   */
  watchLease(name: string, options: WatchOptions = {}): AsyncIterableIterator<LeaseWatchView> {
    const pollMs = pollTimeoutMs(options);
    return longPoll<LeaseWatchView>(
      {
        initial: async (signal) => {
          const view = await this.getLease(name, { signal });
          // The long-poll follows the exclusive grant: a shared or free name reads as no holder.
          return view === null || 'holders' in view
            ? { name, holder: null, fencingToken: null, changed: false }
            : { ...view, changed: false };
        },
        next: async (after, signal) => {
          const path = `/v1/leases/${enc(name)}/watch?afterToken=${after.fencingToken ?? 0}&timeoutMs=${pollMs}`;
          const view = await this.#transport.request<LeaseWatchView>({
            method: 'GET',
            path,
            mutating: false,
            signal,
            extraWaitMs: pollMs,
          });
          const changed =
            view.body.changed &&
            (view.body.fencingToken !== after.fencingToken || view.body.holder !== after.holder);
          return changed ? view.body : null;
        },
      },
      options,
      this.#pollDeps(),
    );
  }

  // ---- elections ------------------------------------------------------------------------------

  /**
   * Campaigns in `group` and resolves when elected (docs/api.md, elections), as a candidacy with its
   * own `ttlMs` or bound to a `session` (it then ends when the session ends): long-polls campaign in
   * a loop while renewing the candidacy at ttl/3, and returns a self-renewing Leadership (campaign.ts).
   * Rejects with TenureError `aborted` (after resigning) when `signal` aborts, or on a 4xx answer.
   * An election answered more than ttl/3 after its request was sent is confirmed first by a candidacy
   * renewal that must still elect us with the same token (the leadership is dated from it);
   * otherwise the candidacy is resigned and campaign rejects with `lease_lost`, or with
   * `outcomeUnknown: true` when no renewal was answered within `requestTimeoutMs`.
   */
  async campaign(group: string, options: CampaignOptions): Promise<Leadership> {
    const life = await this.#grantLife(options);
    const session = life.session;
    return runCampaign(this.#campaignDeps(), group, options.candidate ?? this.newOwnerId(), {
      ...options,
      ttlMs: life.sessionTtlMs ?? options.ttlMs!,
      sessionId:
        session === null ? null : typeof session === 'string' ? session : session.sessionId,
      sessionSignal: session === null || typeof session === 'string' ? null : session.signal,
    });
  }

  /** Reads an election (docs/api.md): leader or null, candidates in order, revision (never 404). */
  async getElection(group: string, options: ReadOptions = {}): Promise<ElectionView> {
    return (await this.#read<ElectionView>(`/v1/elections/${enc(group)}`, options, false))!;
  }

  /**
   * Iterates election views of `group`: the current one, then each change of leader or value
   * (docs/api.md observe long-poll with `afterRevision`). Ends when `signal` aborts or the loop breaks.
   */
  observe(group: string, options: WatchOptions = {}): AsyncIterableIterator<ElectionView> {
    const pollMs = pollTimeoutMs(options);
    return longPoll<ElectionView>(
      {
        initial: (signal) => this.getElection(group, { signal }),
        next: async (after, signal) => {
          const path = `/v1/elections/${enc(group)}/observe?afterRevision=${after.revision}&timeoutMs=${pollMs}`;
          const view = await this.#transport.request<ElectionObserveView>({
            method: 'GET',
            path,
            mutating: false,
            signal,
            extraWaitMs: pollMs,
          });
          if (!view.body.changed || view.body.revision === after.revision) return null;
          const { changed: _changed, ...rest } = view.body;
          return rest;
        },
      },
      options,
      this.#pollDeps(),
    );
  }

  // ---- fencing, cluster -----------------------------------------------------------------------

  /** docs/api.md fence check: `{valid, current}`; `current` null for a resource with no live grant. */
  async fenceCheck(fence: FenceSpec, options: CallOptions = {}): Promise<FenceCheckResult> {
    // A read: the check changes nothing, so it is retried freely and needs no idempotency key.
    const answer = await this.#transport.request<FenceCheckResult>({
      method: 'POST',
      path: '/v1/fence/check',
      body: fence,
      mutating: false,
      ...callFields(options),
    });
    return answer.body;
  }

  /**
   * `GET /v1/cluster` from the leader: asks the leader if known, else any node; when the answering
   * node names another leader whose endpoint is known, asks that leader once more (only the leader
   * reports replication progress: members' `matchIndex`, `lastContactMs`). If that second ask fails,
   * the first answer is returned. Also refreshes leader discovery.
   */
  async cluster(options: CallOptions = {}): Promise<ClusterView> {
    const first = await this.#clusterOnce(options);
    if (first.leader === null || first.leader === first.id) return first;
    if (this.#transport.leaderEndpoint() === null) return first;
    return this.#clusterOnce(options).catch(() => first);
  }

  /** `GET /v1/cluster/members`: the members in the leader's view (docs/api.md, Membership). */
  async members(options: CallOptions = {}): Promise<MembersView> {
    return (await this.#read<MembersView>('/v1/cluster/members', options, false))!;
  }

  /**
   * `POST /v1/cluster/members`: add `id` as a learner at its Raft and HTTP addresses (`host:port`);
   * resolves with the members once committed (docs/operations.md). 409 `reconfiguration_in_progress`
   * while another change commits.
   */
  addMember(
    id: string,
    addresses: { readonly raftAddress: string; readonly httpAddress: string },
    options: MutationOptions = {},
  ): Promise<MembersView> {
    return this.#mutate('POST', '/v1/cluster/members', { id, ...addresses }, options);
  }

  /** `POST /v1/cluster/members/{id}/promote`: the learner becomes a voter; 409 `not_caught_up` while it lags. */
  promoteMember(id: string, options: MutationOptions = {}): Promise<MembersView> {
    return this.#mutate('POST', `/v1/cluster/members/${enc(id)}/promote`, undefined, options);
  }

  /** `DELETE /v1/cluster/members/{id}`: remove a voter or learner (the leader hands over first). */
  removeMember(id: string, options: MutationOptions = {}): Promise<MembersView> {
    return this.#mutate('DELETE', `/v1/cluster/members/${enc(id)}`, undefined, options);
  }

  // ---- internals ------------------------------------------------------------------------------

  async #mutate<T>(
    method: 'POST' | 'PUT' | 'DELETE',
    path: string,
    body: unknown,
    options: MutationOptions,
    extraWaitMs = 0,
  ): Promise<T> {
    const spec: RequestSpec = {
      method,
      path,
      body,
      mutating: true,
      extraWaitMs,
      ...callFields(options),
      ...(options.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
    };
    return (await this.#transport.request<T>(spec)).body;
  }

  async #read<T>(path: string, options: ReadOptions, notFoundIsNull: boolean): Promise<T | null> {
    const fullPath =
      options.consistency === 'stale'
        ? `${path}${path.includes('?') ? '&' : '?'}consistency=stale`
        : path;
    try {
      return (
        await this.#transport.request<T>({
          method: 'GET',
          path: fullPath,
          mutating: false,
          ...callFields(options),
        })
      ).body;
    } catch (error) {
      if (notFoundIsNull && error instanceof TenureError && error.code === 'not_found') return null;
      throw error;
    }
  }

  #kvWrite(
    method: 'PUT' | 'DELETE',
    key: string,
    body: Record<string, unknown>,
    options: MutationOptions,
  ): Promise<unknown> {
    return this.#mutate(method, `/v1/kv/${enc(key)}`, body, options);
  }

  async #clusterOnce(options: CallOptions): Promise<ClusterView> {
    const answer = await this.#transport.request<ClusterView>({
      method: 'GET',
      path: '/v1/cluster',
      mutating: false,
      ...callFields(options),
    });
    this.#transport.learnCluster(answer.body, answer.endpoint);
    return answer.body;
  }

  #campaignRenew(group: string, candidate: string, options: CallOptions): Promise<CampaignAnswer> {
    return this.#mutate<CampaignAnswer>(
      'POST',
      `/v1/elections/${enc(group)}/renew`,
      { candidate },
      options,
    );
  }

  /**
   * The error of an acquire whose late grant could not be confirmed (docs/concepts.md): `lease_lost` with outcome
   * known when the server said the grant is gone; otherwise the confirmation's error with
   * `outcomeUnknown: true`, after starting a token-checked release in the background (harmless if gone).
   */
  #lateGrantFailed(
    kind: 'lease' | 'semaphore',
    name: string,
    holder: string,
    grant: { readonly fencingToken: number },
    sendTimeMs: number,
    result: Exclude<ConfirmResult, { kind: 'held' }>,
  ): TenureError {
    const waitedMs = Math.round(this.#clock.now() - sendTimeMs);
    const details = { fencingToken: grant.fencingToken, cause: result.error.code, waitedMs };
    const what = `${kind} ${name} was granted (token ${grant.fencingToken}) ${waitedMs} ms after the acquire was sent`;
    if (result.kind === 'lost') {
      return new TenureError(
        `${what} but was no longer held when confirmed: ${result.error.message}`,
        {
          code: 'lease_lost',
          status: result.error.status,
          details,
          cause: result.error,
        },
      );
    }
    this.#grantCall(kind, 'release', name, holder, grant.fencingToken).catch((error: unknown) =>
      this.#logger.warn?.({ name, err: error }, 'release of an unconfirmed grant failed'),
    );
    return new TenureError(`${what} and could not be confirmed: ${result.error.message}`, {
      code: result.error.code,
      status: result.error.status,
      details,
      outcomeUnknown: true,
      cause: result.error,
    });
  }

  /**
   * Background clean-up after an acquire with unknown outcome: release the grant (lease, shared
   * grant or permit) if one was granted to `holder`.
   */
  #releaseIfGranted(kind: 'lease' | 'semaphore', name: string, holder: string): void {
    void (async () => {
      const token = await this.#liveTokenOf(kind, name, holder);
      if (token === null) return;
      await this.#grantCall(kind, 'release', name, holder, token);
      this.#logger.info?.(
        { kind, name, fencingToken: token },
        'released a grant made by an acquire with unknown outcome',
      );
    })().catch((error: unknown) =>
      this.#logger.warn?.({ name, err: error }, 'clean-up after unknown acquire failed'),
    );
  }

  /** Token of `holder`'s live grant of the lease or semaphore `name`, or null. */
  async #liveTokenOf(
    kind: 'lease' | 'semaphore',
    name: string,
    holder: string,
  ): Promise<number | null> {
    const view = kind === 'lease' ? await this.getLease(name) : await this.getSemaphore(name);
    if (view === null) return null;
    if ('holders' in view)
      return view.holders.find((h) => h.holder === holder)?.fencingToken ?? null;
    return view.holder === holder ? view.fencingToken : null;
  }

  #timing(ttlMs: number): GrantTiming {
    const safetyMarginMs = this.#safetyMarginMs ?? Math.min(100, Math.floor(ttlMs / 10));
    return {
      clock: this.#clock,
      maxDriftRatio: this.#maxDriftRatio,
      safetyMarginMs,
      logger: this.#logger,
      random: this.#random,
    };
  }

  /** Renew and release of a held grant's handle (Lease, Permit), through `#grantCall`. */
  #grantOps(kind: 'lease' | 'semaphore'): LeaseOps {
    return {
      renew: (name, holder, fencingToken, options) =>
        this.#grantCall(kind, 'renew', name, holder, fencingToken, options),
      release: async (name, holder, fencingToken) => {
        await this.#grantCall(kind, 'release', name, holder, fencingToken);
      },
    };
  }

  #sessionOps(): SessionOps {
    return {
      keepalive: (sessionId, options) => this.keepaliveSession(sessionId, options),
      end: async (sessionId) => {
        await this.endSession(sessionId);
      },
    };
  }

  #leadershipOps(): LeadershipOps {
    return {
      renew: (group, candidate, options) => this.#campaignRenew(group, candidate, options),
      proclaim: async (group, candidate, fencingToken, value) => {
        await this.#mutate(
          'POST',
          `/v1/elections/${enc(group)}/proclaim`,
          { candidate, fencingToken, value },
          {},
        );
      },
      resign: async (group, candidate) => {
        await this.#mutate('POST', `/v1/elections/${enc(group)}/resign`, { candidate }, {});
      },
    };
  }

  #campaignDeps(): CampaignDeps {
    return {
      clock: this.#clock,
      sleep: this.#sleep,
      random: this.#random,
      requestTimeoutMs: this.#requestTimeoutMs,
      campaign: (group, body, signal) =>
        this.#mutate<CampaignAnswer>(
          'POST',
          `/v1/elections/${enc(group)}/campaign`,
          body,
          { signal },
          body.waitMs,
        ),
      renew: (group, candidate, options) => this.#campaignRenew(group, candidate, options),
      resign: async (group, candidate) => {
        await this.#mutate('POST', `/v1/elections/${enc(group)}/resign`, { candidate }, {});
      },
      timing: (ttlMs) => this.#timing(ttlMs),
      leadershipOps: this.#leadershipOps(),
    };
  }

  #pollDeps(): {
    sleep: (delayMs: number, signal?: AbortSignal) => Promise<void>;
    random: () => number;
    logger: Logger;
  } {
    return { sleep: this.#sleep, random: this.#random, logger: this.#logger };
  }
}

/** Generates a random idempotency key (exported for callers that manage their own retries). */
export function newIdempotencyKey(): string {
  return randomUUID();
}

/** The endpoints rule of TenureClientOptions, checked before anything else so the error names the field. */
function checkEndpoints(endpoints: unknown): void {
  const invalid = (message: string): TenureError =>
    new TenureError(`endpoints: ${message}`, {
      code: 'invalid_argument',
      details: { field: 'endpoints' },
    });
  const example = 'e.g. { endpoints: ["http://127.0.0.1:7001"] }';
  if (!Array.isArray(endpoints) || endpoints.length === 0)
    throw invalid(`at least one node URL is required, ${example}`);
  for (const endpoint of endpoints as unknown[]) {
    if (typeof endpoint !== 'string') throw invalid(`expected URL strings, ${example}`);
    try {
      normalizeEndpoint(endpoint);
    } catch {
      throw invalid(`"${endpoint}" is not an http(s) URL or host:port`);
    }
  }
}

/** The route prefix of a granted resource family. */
function kindPath(kind: GrantKind): string {
  return kind === 'lease'
    ? '/v1/leases'
    : kind === 'semaphore'
      ? '/v1/semaphores'
      : '/v1/elections';
}

function enc(segment: string): string {
  return encodeURIComponent(segment);
}

function callFields(options: CallOptions): { signal?: AbortSignal; timeoutMs?: number } {
  return {
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  };
}

function fenceFields(options: KvWriteOptions): Record<string, unknown> {
  return {
    ...(options.fence === undefined ? {} : { fence: options.fence }),
    ...(options.ifRevision === undefined ? {} : { ifRevision: options.ifRevision }),
  };
}

function pollTimeoutMs(options: WatchOptions): number {
  const ms = options.pollTimeoutMs ?? LONG_POLL_MS_DEFAULT;
  if (!(ms > 0 && ms <= LONG_POLL_MS_MAX))
    throw new RangeError(`pollTimeoutMs must be in (0, ${LONG_POLL_MS_MAX}]`);
  return ms;
}

/**
 * The session a granted answer is bound to: the caller's Session handle when the answer names it
 * (so the grant follows the handle), the answered id otherwise, null for a ttl grant.
 */
function answeredSession(
  answered: string | undefined,
  requested: Session | string | null,
): Session | string | null {
  if (answered === undefined) return null;
  if (requested !== null && typeof requested !== 'string' && requested.sessionId === answered)
    return requested;
  return answered;
}

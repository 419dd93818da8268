/**
 * HTTP transport of the client: endpoint choice with leader discovery, per-call deadlines, retries
 * with backoff and automatic idempotency keys (docs/api.md "Idempotency", "Deadlines"; §4; BC-13).
 *
 * Rules it keeps:
 * - every mutating call carries one `Idempotency-Key` (crypto.randomUUID), identical across all its
 *   retries, so a retry can never apply twice (docs/concepts.md); a mutation without a key is never resent
 *   once it may have reached a server;
 * - retried: 503 (`no_leader`, honouring `Retry-After`), 502, 504 (`timeout`), connection errors;
 *   never retried: any other answer (4xx are final, 2xx are results);
 * - a failed mutation that may have been committed (504, connection lost after send, deadline or
 *   abort mid-flight) is reported with `outcomeUnknown: true`, never as "did not happen".
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { backoffDelayMs, parseRetryAfterMs, type RetryPolicy } from './backoff.js';
import type { ClusterView } from './contract.js';
import { errorFromResponse, TenureError } from './errors.js';
import type { Logger } from './logger.js';
import { tlsTrustHint } from './tls.js';

/** HTTP methods the API uses. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Per-call options every TenureClient method accepts. */
export interface CallOptions {
  /** Aborts the call; the error is `aborted` (with `outcomeUnknown` if a mutation was in flight). */
  readonly signal?: AbortSignal;
  /** Deadline of the whole call including retries, in ms (waits/long-polls get their time on top). */
  readonly timeoutMs?: number;
}

/** One logical API call. */
export interface RequestSpec extends CallOptions {
  readonly method: HttpMethod;
  /** Path with encoded segments and query, e.g. `/v1/leases/a/acquire`. */
  readonly path: string;
  readonly body?: unknown;
  /** True for POST/PUT/DELETE that change state: gets an Idempotency-Key and outcome tracking. */
  readonly mutating: boolean;
  /** Explicit key; default a fresh randomUUID per call; null sends none (then no resend after send). */
  readonly idempotencyKey?: string | null;
  /** Server-side wait on top of the deadline (`waitMs` of an acquire, `timeoutMs` of a long-poll). */
  readonly extraWaitMs?: number;
}

/** A successful (2xx) answer. */
export interface ApiResponse<T> {
  readonly status: number;
  readonly body: T;
  /** Node id from `Tenure-Leader`, or null. */
  readonly leaderId: string | null;
  /** Base URL that answered. */
  readonly endpoint: string;
}

/** Injected effects of the transport (tests replace them). */
export interface TransportDeps {
  readonly fetch: typeof fetch;
  /** Monotonic ms. */
  readonly now: () => number;
  /** Waits `delayMs`; rejects with the signal's reason on abort. */
  readonly sleep: (delayMs: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform [0, 1), for jitter. */
  readonly random: () => number;
  readonly logger: Logger;
}

/** Transport configuration. */
export interface TransportOptions {
  /** Base URLs `http://host:port` (at least one). */
  readonly endpoints: readonly string[];
  /** Default call deadline (ms) when the call gives none. */
  readonly requestTimeoutMs: number;
  readonly retry: RetryPolicy;
  /** Add members' `httpAddress` from /v1/cluster that are not configured endpoints (off: proxies stay in path). */
  readonly discoverMembers: boolean;
  /** Sent as `Authorization: Bearer <token>` on every request (docs/security.md). */
  readonly token?: string;
}

/** Smallest / largest `Request-Timeout-Ms` the transport sends (server accepts ≥ 50, ≤ 120,000 by default). */
const REQUEST_TIMEOUT_HEADER_MS_MIN = 100;
const REQUEST_TIMEOUT_HEADER_MS_MAX = 120_000;
/** Time allowed for an answer to travel back after the server-side deadline. */
const RESPONSE_SLACK_MS_MAX = 500;
/** Extra time a wait or long-poll may take past its `waitMs` / `timeoutMs` (docs/api.md: within timeoutMs + 1 s). */
const WAIT_ANSWER_SLACK_MS = 1000;
/** Deadline of a /v1/cluster discovery probe. */
const DISCOVERY_TIMEOUT_MS = 1000;
/** An endpoint that failed is skipped for this long unless every endpoint failed. */
const ENDPOINT_COOLDOWN_MS = 1000;

/** Connection errors that prove the request never left (safe to resend even without a key). */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

type AttemptResult =
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly body: unknown;
      readonly headers: Headers;
    }
  | { readonly kind: 'network'; readonly sent: boolean; readonly error: unknown }
  | { readonly kind: 'deadline' }
  | { readonly kind: 'aborted' };

/** Normalises `http://h:p/` → `http://h:p`; throws TypeError on a non-http URL. */
export function normalizeEndpoint(endpoint: string): string {
  const url = new URL(endpoint.includes('://') ? endpoint : `http://${endpoint}`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`endpoint ${endpoint}: only http(s) URLs`);
  return `${url.protocol}//${url.host}`;
}

/**
 * Sends API calls to the cluster. Prefers the known leader (saves the follower's forwarding hop),
 * learns it from `Tenure-Leader` and maps node ids to endpoints via `GET /v1/cluster`; falls back
 * across endpoints on failure. Thread of control: any number of concurrent calls.
 */
export class Transport {
  readonly #opts: TransportOptions;
  readonly #deps: TransportDeps;
  /** Configured (and, with discoverMembers, discovered) base URLs; never empty. */
  readonly #endpoints: string[];
  /** nodeId → endpoint, learned from /v1/cluster. */
  readonly #endpointById = new Map<string, string>();
  /** Leader node id from the latest answer that named one. */
  #leaderId: string | null = null;
  /** Index into #endpoints of the endpoint to try when the leader's is unknown. */
  #cursor = 0;
  /** endpoint → monotonic ms of its last failure. */
  readonly #failedAtMs = new Map<string, number>();
  #discovery: Promise<void> | null = null;

  constructor(opts: TransportOptions, deps: TransportDeps) {
    if (opts.endpoints.length === 0)
      throw new TypeError('endpoints: at least one endpoint is required');
    if (!(opts.retry.attempts >= 1)) throw new RangeError('retry.attempts must be ≥ 1');
    this.#opts = opts;
    this.#deps = deps;
    this.#endpoints = [...new Set(opts.endpoints.map(normalizeEndpoint))];
  }

  /** Known leader id (from Tenure-Leader), or null. */
  get leaderId(): string | null {
    return this.#leaderId;
  }

  /** Endpoints in use (normalised). */
  get endpoints(): readonly string[] {
    return this.#endpoints;
  }

  /** Endpoint believed to be the leader's, or null. */
  leaderEndpoint(): string | null {
    return this.#leaderId === null ? null : (this.#endpointById.get(this.#leaderId) ?? null);
  }

  /**
   * Performs one logical call with retries until its deadline (`timeoutMs` or `requestTimeoutMs`, plus
   * `extraWaitMs` and a small answer slack), each retry after a jittered backoff delay (at least
   * `Retry-After`), except one immediate hop to a leader named by `Tenure-Leader`; `retry.attempts`
   * caps the tries. Resolves with the 2xx answer; rejects with TenureError (catalog code of the final
   * answer, `unavailable`, `aborted`, or `timeout` when the call deadline passed), `outcomeUnknown` set
   * for mutations that may have committed.
   */
  async request<T>(spec: RequestSpec): Promise<ApiResponse<T>> {
    const { now } = this.#deps;
    const key = spec.mutating
      ? spec.idempotencyKey === undefined
        ? randomUUID()
        : spec.idempotencyKey
      : null;
    const budgetMs = spec.timeoutMs ?? this.#opts.requestTimeoutMs;
    if (!(budgetMs > 0)) throw new RangeError('timeoutMs must be > 0');
    const extraWaitMs = spec.extraWaitMs ?? 0;
    // Waits and long-polls may answer up to 1 s after their time (docs/api.md "Long-polls"): allow for it.
    const slackMs =
      Math.min(RESPONSE_SLACK_MS_MAX, Math.ceil(budgetMs / 10)) +
      (extraWaitMs > 0 ? WAIT_ANSWER_SLACK_MS : 0);
    const deadlineMs = now() + budgetMs + extraWaitMs + slackMs;
    // Cap each attempt's server deadline so a black-holed node leaves time to try another (BC-15).
    const attemptServerMsMax = Math.max(250, Math.ceil(budgetMs / 2));
    const canResend = !spec.mutating || key !== null;

    let maybeCommitted = false;
    let lastError: TenureError | null = null;
    let hinted: string | null = null;
    /** True when the previous retry followed a leader hint without backing off. */
    let followedHint = false;
    /** Endpoints whose TLS certificate this call refused: when all did, retrying cannot help. */
    const certRefused = new Set<string>();
    // Retried until the deadline; `attempts` is only a safety cap (backoff bounds the rate, BC-16).
    for (let attempt = 0; attempt < this.#opts.retry.attempts; attempt++) {
      if (spec.signal?.aborted) throw this.#abortedError(spec, maybeCommitted);
      const remainingMs = deadlineMs - now();
      if (remainingMs <= 0) break;
      const endpoint = hinted ?? this.#pickEndpoint();
      hinted = null;
      const serverMs = clamp(
        Math.min(remainingMs - extraWaitMs - slackMs, attemptServerMsMax),
        REQUEST_TIMEOUT_HEADER_MS_MIN,
        REQUEST_TIMEOUT_HEADER_MS_MAX,
      );
      const attemptMs = Math.min(remainingMs, serverMs + extraWaitMs + slackMs);
      const result = await this.#attempt(endpoint, spec, key, serverMs, attemptMs);

      let retryAfterMs: number | null = null;
      switch (result.kind) {
        case 'aborted':
          throw this.#abortedError(spec, maybeCommitted || spec.mutating);
        case 'deadline':
          maybeCommitted ||= spec.mutating;
          this.#markFailed(endpoint);
          lastError = new TenureError(
            `no answer from ${endpoint} within ${Math.round(attemptMs)} ms`,
            {
              code: 'timeout',
              status: null,
            },
          );
          break;
        case 'network': {
          maybeCommitted ||= spec.mutating && result.sent;
          this.#markFailed(endpoint);
          lastError = new TenureError(
            `cannot reach ${endpoint}: ${describeNetworkError(result.error)}`,
            {
              code: 'unavailable',
              status: null,
              cause: result.error,
            },
          );
          if (result.sent && !canResend) return this.#fail(lastError, true);
          if (tlsTrustHint(networkErrorCode(result.error)) !== null) {
            certRefused.add(endpoint);
            if (certRefused.size >= this.#endpoints.length)
              return this.#fail(lastError, maybeCommitted);
          }
          break;
        }
        case 'answer': {
          const leaderId = result.headers.get('tenure-leader');
          this.#noteLeader(leaderId, endpoint);
          if (result.status >= 200 && result.status < 300) {
            return { status: result.status, body: result.body as T, leaderId, endpoint };
          }
          const error = errorFromResponse(result.status, result.body);
          // A final answer to a keyed request is the outcome of the first execution (docs/concepts.md replay).
          if (!isRetryableStatus(result.status))
            return this.#fail(error, key === null && maybeCommitted);
          // 503 may come from a leader that proposed and then lost leadership: count it as maybe sent.
          maybeCommitted ||= spec.mutating;
          lastError = error;
          if (!canResend) return this.#fail(error, true);
          retryAfterMs = parseRetryAfterMs(result.headers.get('retry-after'));
          hinted = await this.#leaderHint(leaderId, endpoint, deadlineMs);
          if (hinted === null) this.#markFailed(endpoint);
          break;
        }
      }
      if (attempt + 1 >= this.#opts.retry.attempts) break;
      // A hint to another node (the leader) is followed at once, but never twice in a row (nodes naming
      // each other during a failover must not turn into a request storm); otherwise back off, honouring
      // Retry-After.
      const immediate: boolean = hinted !== null && !followedHint;
      followedHint = immediate;
      const delayMs = immediate
        ? 0
        : Math.max(backoffDelayMs(this.#opts.retry, attempt, this.#deps.random), retryAfterMs ?? 0);
      if (now() + delayMs >= deadlineMs) break;
      this.#deps.logger.debug?.(
        { path: spec.path, attempt, delayMs, code: lastError?.code },
        'retrying request',
      );
      if (delayMs > 0) {
        try {
          await this.#deps.sleep(delayMs, spec.signal);
        } catch {
          throw this.#abortedError(spec, maybeCommitted);
        }
      }
    }
    const finalError =
      lastError ??
      new TenureError(`call deadline of ${budgetMs} ms passed`, { code: 'timeout', status: null });
    return this.#fail(finalError, maybeCommitted);
  }

  /** Asks a node for /v1/cluster and records which node ids live at which endpoints. */
  async discover(endpoint: string): Promise<ClusterView | null> {
    const result = await this.#attempt(
      endpoint,
      { method: 'GET', path: '/v1/cluster', mutating: false },
      null,
      DISCOVERY_TIMEOUT_MS,
      DISCOVERY_TIMEOUT_MS,
    );
    if (result.kind !== 'answer' || result.status !== 200) return null;
    return this.learnCluster(result.body, endpoint);
  }

  /**
   * Records what a `/v1/cluster` answer from `endpoint` says: its node id, the members whose
   * `httpAddress` is one of our endpoints (or any member, with discoverMembers), and the leader.
   */
  learnCluster(body: unknown, endpoint: string): ClusterView | null {
    const view = body as ClusterView;
    if (typeof view !== 'object' || view === null || typeof view.id !== 'string') return null;
    this.#endpointById.set(view.id, endpoint);
    for (const member of Array.isArray(view.members) ? view.members : []) {
      if (typeof member?.id !== 'string' || typeof member.httpAddress !== 'string') continue;
      let url: string;
      try {
        url = normalizeEndpoint(member.httpAddress);
      } catch {
        continue;
      }
      if (this.#endpoints.includes(url)) {
        if (!this.#endpointById.has(member.id)) this.#endpointById.set(member.id, url);
      } else if (this.#opts.discoverMembers) {
        this.#endpoints.push(url);
        this.#endpointById.set(member.id, url);
      }
    }
    if (typeof view.leader === 'string') this.#leaderId = view.leader;
    return view;
  }

  #fail(error: TenureError, maybeCommitted: boolean): never {
    throw error.withOutcomeUnknown(maybeCommitted);
  }

  #abortedError(spec: RequestSpec, maybeCommitted: boolean): TenureError {
    return new TenureError(`${spec.method} ${spec.path} aborted`, {
      code: 'aborted',
      status: null,
      outcomeUnknown: spec.mutating && maybeCommitted,
      cause: spec.signal?.reason,
    });
  }

  /** One HTTP exchange bounded by `attemptMs` and the caller's signal. */
  async #attempt(
    endpoint: string,
    spec: Pick<RequestSpec, 'method' | 'path' | 'body' | 'signal' | 'mutating'>,
    key: string | null,
    serverMs: number,
    attemptMs: number,
  ): Promise<AttemptResult> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, attemptMs);
    const onAbort = (): void => controller.abort();
    spec.signal?.addEventListener('abort', onAbort, { once: true });
    const headers: Record<string, string> = {
      accept: 'application/json',
      'request-timeout-ms': String(Math.round(serverMs)),
    };
    if (key !== null) headers['idempotency-key'] = key;
    if (this.#opts.token !== undefined) headers['authorization'] = `Bearer ${this.#opts.token}`;
    const hasBody = spec.body !== undefined;
    if (hasBody) headers['content-type'] = 'application/json';
    try {
      const response = await this.#deps.fetch(endpoint + spec.path, {
        method: spec.method,
        headers,
        signal: controller.signal,
        ...(hasBody ? { body: JSON.stringify(spec.body) } : {}),
      });
      const text = await response.text();
      let body: unknown = null;
      if (text.length > 0) {
        try {
          body = JSON.parse(text);
        } catch {
          body = { raw: text.slice(0, 200) };
        }
      }
      return { kind: 'answer', status: response.status, body, headers: response.headers };
    } catch (error) {
      if (spec.signal?.aborted) return { kind: 'aborted' };
      if (timedOut) return { kind: 'deadline' };
      const code = networkErrorCode(error);
      // A refused certificate fails the TLS handshake: no byte of the request was sent.
      const sent = !NOT_SENT_CODES.has(code ?? '') && tlsTrustHint(code) === null;
      return { kind: 'network', sent, error };
    } finally {
      clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
    }
  }

  #pickEndpoint(): string {
    const leader = this.leaderEndpoint();
    const nowMs = this.#deps.now();
    const healthy = (e: string): boolean =>
      nowMs - (this.#failedAtMs.get(e) ?? -Infinity) >= ENDPOINT_COOLDOWN_MS;
    if (leader !== null && healthy(leader)) return leader;
    for (let i = 0; i < this.#endpoints.length; i++) {
      const e = this.#endpoints[(this.#cursor + i) % this.#endpoints.length]!;
      if (healthy(e)) return e;
    }
    // Every endpoint failed recently: take the one that failed longest ago.
    let oldest = this.#endpoints[0]!;
    for (const e of this.#endpoints)
      if ((this.#failedAtMs.get(e) ?? 0) < (this.#failedAtMs.get(oldest) ?? 0)) oldest = e;
    return oldest;
  }

  #markFailed(endpoint: string): void {
    this.#failedAtMs.set(endpoint, this.#deps.now());
    if (this.leaderEndpoint() === endpoint) this.#leaderId = null;
    const index = this.#endpoints.indexOf(endpoint);
    if (index >= 0 && index === this.#cursor % this.#endpoints.length)
      this.#cursor = (index + 1) % this.#endpoints.length;
  }

  #noteLeader(leaderId: string | null, endpoint: string): void {
    this.#failedAtMs.delete(endpoint);
    if (leaderId === null || leaderId === '') return;
    this.#leaderId = leaderId;
    if (!this.#endpointById.has(leaderId)) void this.#discoverAll();
  }

  /**
   * After a retryable answer naming a leader: the leader's endpoint when it is another node
   * (waiting for discovery, within the call deadline, if its address is not known yet), else null.
   */
  async #leaderHint(
    leaderId: string | null,
    endpoint: string,
    deadlineMs: number,
  ): Promise<string | null> {
    if (leaderId === null || leaderId === '') return null;
    if (!this.#endpointById.has(leaderId)) {
      const waitMs = Math.min(DISCOVERY_TIMEOUT_MS, deadlineMs - this.#deps.now());
      if (waitMs > 0)
        await Promise.race([this.#discoverAll(), delay(waitMs, undefined, { ref: false })]);
    }
    const target = this.#endpointById.get(leaderId) ?? null;
    return target !== null && target !== endpoint ? target : null;
  }

  /** Probes every endpoint whose node id is unknown (single flight). */
  #discoverAll(): Promise<void> {
    if (this.#discovery !== null) return this.#discovery;
    const known = new Set(this.#endpointById.values());
    const probes = this.#endpoints
      .filter((e) => !known.has(e))
      .map((e) => this.discover(e).catch(() => null));
    this.#discovery = Promise.all(probes).then(
      () => {
        this.#discovery = null;
      },
      () => {
        this.#discovery = null;
      },
    );
    return this.#discovery;
  }
}

function isRetryableStatus(status: number): boolean {
  return status === 502 || status === 503 || status === 504;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

function networkErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function describeNetworkError(error: unknown): string {
  const code = networkErrorCode(error);
  const hint = tlsTrustHint(code);
  if (hint !== null) return `${hint} (${code})`;
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : null;
  return `${message}${cause !== null && cause !== message ? `: ${cause}` : ''}${code === undefined ? '' : ` (${code})`}`;
}

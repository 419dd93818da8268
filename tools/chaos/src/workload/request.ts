/**
 * One logical request of the workload, recorded attempt by attempt (docs/api.md Idempotency, Deadlines).
 *
 * Every HTTP attempt is one history op whose args are the route parameters + body + `idempotencyKey`
 * + `attempt`. Mutations carry an `Idempotency-Key`; when an attempt's outcome is unknown (transport
 * error, client deadline, 5xx, 503 `no_leader`) the same request is retried with the same key through
 * another node until a definite answer or the retry window ends. Reads are not retried. Outcomes
 * follow types.ts: 2xx ok, 4xx and 503 fail (code from the error body), anything else unknown.
 */
import type {
  ClusterHandle,
  HistorySink,
  Json,
  JsonObject,
  NodeId,
  OpKind,
  OpOutcome,
  Random,
} from '../types.js';
import { httpJson, HttpTransportError } from '../util/http.js';

/** A request to make. `body` is sent as JSON; `query` is appended to the path. */
export interface RequestSpec {
  readonly kind: OpKind;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly query?: string;
  readonly body?: JsonObject;
  /** Route parameters and meta recorded with the body (e.g. `{name}`, `{final: true}`). */
  readonly argsExtra: JsonObject;
  /** Extra server-side wait (waitMs / timeoutMs) added to the client deadline, ms. */
  readonly waitMs?: number;
}

/** The logical outcome: the definite attempt's outcome, or the last unknown one. */
export interface RequestResult {
  readonly outcome: OpOutcome;
  /** Send time (run clock) of the first attempt — the conservative lease base (docs/concepts.md). */
  readonly firstSendMs: number;
  readonly opIds: readonly number[];
  readonly idempotencyKey: string | null;
}

/** Timing and retry knobs. */
export interface RequesterOptions {
  /** Server deadline sent as `Request-Timeout-Ms`, ms. */
  readonly requestTimeoutMs: number;
  /** How long a mutation is retried after unknown outcomes, ms. */
  readonly retryWindowMs: number;
  /** Attempts per logical request at most. */
  readonly attemptsMax: number;
}

/** True when the outcome is definite for the workload's retry logic (2xx or 4xx). */
export function isDefinite(o: OpOutcome): boolean {
  return o.status === 'ok' || (o.status === 'fail' && o.httpStatus >= 400 && o.httpStatus < 500);
}

/** The ok body as an object, else null. */
export function bodyOf(o: OpOutcome): JsonObject | null {
  return o.status === 'ok' &&
    o.value !== null &&
    typeof o.value === 'object' &&
    !Array.isArray(o.value)
    ? o.value
    : null;
}

/** Issues recorded requests for one logical client process. */
export class Requester {
  readonly #cluster: ClusterHandle;
  readonly #history: HistorySink;
  readonly #random: Random;
  readonly #process: string;
  readonly #options: RequesterOptions;
  readonly #localAddress: string | null;
  #keySeq = 0;

  constructor(
    cluster: ClusterHandle,
    history: HistorySink,
    random: Random,
    process: string,
    options: RequesterOptions,
    localAddress: string | null,
  ) {
    this.#cluster = cluster;
    this.#history = history;
    this.#random = random;
    this.#process = process;
    this.#options = options;
    this.#localAddress = localAddress;
  }

  /** A fresh idempotency key (≤ 128 chars, unique in the run: process + sequence + random). */
  newKey(): string {
    return `${this.#process}-${++this.#keySeq}-${this.#random.int(0, 0xffffff).toString(36)}`;
  }

  /**
   * Sends `spec`, retrying unknown outcomes of mutations with the same key through other nodes.
   * `key` reuses an idempotency key (the end-of-run resolution pass). `signal` stops retries (not
   * an attempt in flight). Never throws for HTTP or network failures.
   */
  async send(
    spec: RequestSpec,
    options: { key?: string; signal?: AbortSignal; node?: NodeId } = {},
  ): Promise<RequestResult> {
    const mutating = spec.method !== 'GET' && spec.kind !== 'fence.check';
    const key = mutating ? (options.key ?? this.newKey()) : null;
    const startMs = this.#cluster.clock.now();
    const opIds: number[] = [];
    let node = options.node ?? this.#random.pick(this.#cluster.nodeIds);
    let outcome: OpOutcome = { status: 'unknown', reason: 'not sent' };
    let firstSendMs = -1;
    for (let attempt = 1; attempt <= this.#options.attemptsMax; attempt++) {
      const args: JsonObject = {
        ...spec.argsExtra,
        ...(spec.body ?? {}),
        ...(key === null ? {} : { idempotencyKey: key, attempt }),
      };
      const sendMs = this.#cluster.clock.now();
      if (firstSendMs < 0) firstSendMs = sendMs;
      const opId = this.#history.invoke(this.#process, spec.kind, args, node);
      opIds.push(opId);
      outcome = await this.#attempt(spec, node, key);
      this.#history.complete(opId, outcome, node);
      if (!mutating || isDefinite(outcome)) break;
      if (
        options.signal?.aborted === true ||
        this.#cluster.clock.now() - startMs > this.#options.retryWindowMs
      )
        break;
      await new Promise((r) => setTimeout(r, this.#random.int(50, 250)));
      const others = this.#cluster.nodeIds.filter((n) => n !== node);
      node = others.length > 0 ? this.#random.pick(others) : node;
    }
    return { outcome, firstSendMs, opIds, idempotencyKey: key };
  }

  async #attempt(spec: RequestSpec, node: NodeId, key: string | null): Promise<OpOutcome> {
    const url = `${this.#cluster.endpoint(node).httpUrl}${spec.path}${spec.query === undefined ? '' : `?${spec.query}`}`;
    const headers: Record<string, string> = {
      'request-timeout-ms': String(this.#options.requestTimeoutMs),
    };
    if (key !== null) headers['idempotency-key'] = key;
    const timeoutMs = this.#options.requestTimeoutMs + (spec.waitMs ?? 0) + 1_500;
    try {
      const reply = await httpJson(spec.method, url, spec.body, {
        timeoutMs,
        localAddress: this.#localAddress,
        headers,
      });
      const json = (reply.json ?? null) as Json;
      if (reply.status >= 200 && reply.status < 300)
        return { status: 'ok', httpStatus: reply.status, value: json };
      if ((reply.status >= 400 && reply.status < 500) || reply.status === 503) {
        const code = (reply.json as { error?: { code?: unknown } } | undefined)?.error?.code;
        return {
          status: 'fail',
          httpStatus: reply.status,
          code: typeof code === 'string' ? code : `http_${reply.status}`,
          value: json,
        };
      }
      return { status: 'unknown', reason: `http ${reply.status}` };
    } catch (error) {
      return {
        status: 'unknown',
        reason:
          error instanceof HttpTransportError ? `${error.kind}: ${error.message}` : String(error),
      };
    }
  }
}

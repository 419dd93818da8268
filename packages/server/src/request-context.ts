/**
 * Per-request context: the deadline (docs/api.md Deadlines: `Request-Timeout-Ms`, default 5,000),
 * the Idempotency-Key (≤ 128 chars), whether the request was already forwarded once, and an
 * AbortSignal that fires when the client goes away (long-polls and waits end cleanly).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Header marking a request forwarded by a follower; the receiver never forwards it again. */
export const FORWARDED_HEADER = 'tenure-forwarded';

export interface RequestContext {
  /** performance.now() at arrival. */
  readonly startMs: number;
  /** Base timeout (ms) from the header or the default; waits add their own time on top. */
  readonly timeoutMs: number;
  readonly idempotencyKey: string | null;
  readonly forwarded: boolean;
  /** Aborts when the client disconnects before the response is sent. */
  readonly signal: AbortSignal;
}

declare module 'fastify' {
  interface FastifyRequest {
    tenure: RequestContext;
  }
}

/**
 * The context of a request whose headers passed the route's header schema (schemas.ts
 * `headerSchema`: `Request-Timeout-Ms` is then an integer ≥ 1, `Idempotency-Key` 1–128
 * characters; a repeated header and a `Tenure-Forwarded` no node sent were refused on arrival,
 * arrival-headers.ts). `startMs` is the request's arrival (performance.now() ms); absent headers take
 * the default deadline and no key. A deadline above `timeouts.maxMs` counts as `maxMs`: a client
 * cannot know each node's maximum, and an answer by an earlier deadline still comes within its own.
 */
export function buildRequestContext(
  request: FastifyRequest,
  reply: FastifyReply,
  startMs: number,
  timeouts: { readonly defaultMs: number; readonly maxMs: number },
): RequestContext {
  // Typed as text by node:http; the header schema's validator has made the timeout a number.
  const timeoutMs: unknown = request.headers['request-timeout-ms'];
  const key: unknown = request.headers['idempotency-key'];
  return new LazyContext(
    startMs,
    typeof timeoutMs === 'number' ? Math.min(timeoutMs, timeouts.maxMs) : timeouts.defaultMs,
    typeof key === 'string' ? key : null,
    request.tenureForwardedBy !== null,
    reply,
  );
}

/**
 * RequestContext whose AbortSignal is built on first use: most requests (plain writes and reads)
 * never need it, and an AbortController plus a 'close' listener per request was a measurable
 * share of a node's per-request CPU (api-bench profile). Waits, long-polls and forwarding read
 * `signal` while the request is in flight; a client that already went away by then gets an
 * already-aborted signal.
 */
class LazyContext implements RequestContext {
  readonly startMs: number;
  readonly timeoutMs: number;
  readonly idempotencyKey: string | null;
  readonly forwarded: boolean;
  readonly #reply: FastifyReply;
  #controller: AbortController | null = null;

  constructor(
    startMs: number,
    timeoutMs: number,
    idempotencyKey: string | null,
    forwarded: boolean,
    reply: FastifyReply,
  ) {
    this.startMs = startMs;
    this.timeoutMs = timeoutMs;
    this.idempotencyKey = idempotencyKey;
    this.forwarded = forwarded;
    this.#reply = reply;
  }

  get signal(): AbortSignal {
    if (this.#controller === null) {
      const controller = new AbortController();
      this.#controller = controller;
      const res = this.#reply.raw;
      if (res.destroyed) {
        if (!res.writableFinished) controller.abort();
      } else {
        res.once('close', () => {
          if (!res.writableFinished) controller.abort();
        });
      }
    }
    return this.#controller.signal;
  }
}

/** Absolute deadline (performance.now() ms) of the request with `extraMs` of waiting on top. */
export function deadlineOf(ctx: RequestContext, extraMs = 0): number {
  return ctx.startMs + ctx.timeoutMs + extraMs;
}

/** ms left until the request's deadline (with `extraMs` on top), never negative. */
export function remainingMs(ctx: RequestContext, extraMs = 0): number {
  return Math.max(0, deadlineOf(ctx, extraMs) - performance.now());
}

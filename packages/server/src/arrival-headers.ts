/**
 * Header rules checked when a request arrives, before authentication and before its body is read
 * (docs/api.md "Request headers", docs/security.md "Forwarded requests"):
 *
 * - Every header Tenure reads (schemas.ts HEADER_NAMES) carries one value. node:http keeps the
 *   first `Authorization` or `Content-Type` of a request that repeats them and joins repeated
 *   custom headers with ", ", so two values would silently become one: a repeated one is 400
 *   naming it.
 * - `Tenure-Forwarded` is internal: a follower adds it when it forwards to the leader, and the
 *   receiver never forwards such a request again. With a forward key (auth on and a `root` token:
 *   auth/forward-proof.ts) it is trusted (not rate-counted again) only with a proof that verifies;
 *   a proof that does not verify (clocks far apart) makes it an unproven forward, counted again;
 *   no proof is 400. Without a key it is accepted (unproven) when it names another node of this
 *   cluster. Anything else is 400 naming the header, rather than the retryable 503 a follower
 *   would otherwise answer for a forward it cannot pass on.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { FORWARD_PROOF_HEADER, type ForwardProof } from './auth/forward-proof.js';
import { invalidArgument } from './http-error.js';
import { FORWARDED_HEADER } from './request-context.js';
import { HEADER_NAMES } from './schemas.js';

/** Who forwarded a request: the forwarding node, and whether its proof verified. */
export interface ForwardOrigin {
  readonly fromNodeId: string;
  /** True when a forward proof verified (only then does the leader skip the rate count). */
  readonly proven: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on arrival (checkArrivalHeaders): the node that forwarded this request, or null. */
    tenureForwardedBy: ForwardOrigin | null;
  }
}

/** What the checks need to know about this node and its cluster. */
export interface ArrivalContext {
  /** Signs and verifies forward proofs; null with auth off. */
  readonly proof: ForwardProof | null;
  /** True when `id` is another node of this cluster (not this one). */
  readonly isOtherNode: (id: string) => boolean;
}

/** One bit per header of HEADER_NAMES (a handful: they fit one number). */
const HEADER_BITS: ReadonlyMap<string, number> = new Map(
  Object.keys(HEADER_NAMES).map((name, i) => [name, 2 ** i]),
);

/** The canonical name of the first header of HEADER_NAMES given more than once, or null. */
export function repeatedHeader(rawHeaders: readonly string[]): string | null {
  // One pass over node:http's [name, value, …] list and no allocation but the lower-casing: this
  // runs on every request.
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    const bit = HEADER_BITS.get(name);
    if (bit === undefined) continue;
    if ((seen & bit) !== 0) return HEADER_NAMES[name]!;
    seen |= bit;
  }
  return null;
}

/** The problem of a `Tenure-Forwarded` that no node of this cluster sent. */
const NOT_A_FORWARD =
  'is set only by a node of this cluster forwarding a request to the leader; clients must not send it';

/**
 * The origin of `request` (null: not forwarded). Throws 400 naming `Tenure-Forwarded` when the
 * header is there but was not sent by a node of this cluster (see the module comment).
 */
export function forwardOrigin(request: FastifyRequest, ctx: ArrivalContext): ForwardOrigin | null {
  const from = request.headers[FORWARDED_HEADER];
  if (from === undefined) return null;
  const field = `header ${HEADER_NAMES[FORWARDED_HEADER]!}`;
  if (typeof from !== 'string') throw invalidArgument(field, NOT_A_FORWARD);
  if (ctx.proof !== null && ctx.proof.hasKey()) {
    const given = request.headers[FORWARD_PROOF_HEADER];
    const proven = ctx.proof.verify(
      { method: request.method, url: request.url, fromNodeId: from },
      typeof given === 'string' ? given : undefined,
      Date.now(),
    );
    if (proven) return { fromNodeId: from, proven };
    // A proof that does not verify, naming another node: a node whose clock is far from ours (or
    // that has not yet applied a new root token). Serve it as an unproven forward — counted here
    // too, never a way around the rate — rather than fail a client's write for a clock.
    if (given !== undefined && ctx.isOtherNode(from)) return { fromNodeId: from, proven: false };
    throw invalidArgument(field, NOT_A_FORWARD);
  }
  if (ctx.isOtherNode(from)) return { fromNodeId: from, proven: false };
  throw invalidArgument(field, NOT_A_FORWARD);
}

/** True when `request` announces a body (a non-zero Content-Length, or chunked). */
export function announcesBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return (
    (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined
  );
}

/**
 * Installs the checks as the first onRequest hook (callback style: no promise per request). A
 * request refused before its body was read closes its connection rather than reading the body.
 */
export function installArrivalChecks(app: FastifyInstance, ctx: ArrivalContext): void {
  app.decorateRequest('tenureForwardedBy', null);
  app.addHook('onRequest', (request, reply, done) => {
    try {
      const repeated = repeatedHeader(request.raw.rawHeaders);
      if (repeated !== null) throw invalidArgument(`header ${repeated}`, 'must be given once');
      request.tenureForwardedBy = forwardOrigin(request, ctx);
    } catch (err) {
      if (announcesBody(request)) void reply.header('connection', 'close');
      done(err as Error);
      return;
    }
    done();
  });
}

/**
 * Authentication, per-token rate and authorization on every request when `--auth` is on
 * (docs/security.md). `onRequest` (before the body is read): 401 for a missing or bad token, 429
 * over the token's rate on this node. `preHandler` (after validation): 403 unless the token's
 * roles cover what the route needs (access.ts). The request then carries its `principal`, which
 * the gateway puts in every command it proposes: the state machine records it as the owner of new
 * grants and refuses another token's renew, release or resign (one place for ownership).
 */
import {
  isAllowed,
  ROOT_TOKEN_NAME,
  type CoordState,
  type Principal,
  type TokenRecord,
} from '@tenure/coord-state';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServerConfig } from '../config.js';
import { HttpError } from '../http-error.js';
import { announcesBody } from '../arrival-headers.js';
import { accessFor, describeNeed, type Access } from './access.js';
import { Authenticator, unauthorized } from './authenticator.js';
import { RateLimiter } from './rate-limiter.js';

/** Who sent a request, once authenticated. */
export interface AuthContext {
  readonly token: TokenRecord;
  /** What commands of this request carry (caps resolved from the token's quota and defaults). */
  readonly principal: Principal;
  /** What the route needs (set before the handler runs; null until then). */
  readonly access: Access | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hooks when `--auth` is on and the request is not open; else null. */
    tenureAuth: AuthContext | null;
  }
  interface FastifyContextConfig {
    /** Overrides the access table (auth/access.ts) for this route. */
    access?: Access;
  }
}

/** The caps a token's commands carry: none for root, else its quota or the server defaults. */
export function principalOf(token: TokenRecord, config: ServerConfig): Principal {
  if (token.name === ROOT_TOKEN_NAME)
    return { token: token.name, leasesMax: null, sessionsMax: null, waitersMax: null };
  const q = token.quota ?? {};
  return {
    token: token.name,
    leasesMax: q.leasesMax ?? config.quotaLeasesMax,
    sessionsMax: q.sessionsMax ?? config.quotaSessionsMax,
    waitersMax: q.waitersMax ?? config.quotaWaitersMax,
  };
}

/** The token's requests per second (0 = unlimited; root is never limited). */
function rateOf(token: TokenRecord, config: ServerConfig): number {
  if (token.name === ROOT_TOKEN_NAME) return 0;
  return token.quota?.requestsPerSecond ?? config.quotaRequestsPerSecond;
}

function accessOf(request: FastifyRequest, coord: CoordState, withBody: boolean): Access {
  const declared = request.routeOptions.config?.access;
  if (declared !== undefined) return declared;
  // A path no route matches answers 404 to any valid token.
  if (request.routeOptions.url === undefined) return { anyToken: true };
  return accessFor({
    method: request.method,
    route: request.routeOptions.url,
    params: (request.params ?? {}) as Record<string, unknown>,
    body: withBody ? request.body : undefined,
    query: (request.query ?? {}) as Record<string, unknown>,
    sessionName: (id) => coord.getSession(id, coord.lastAppliedTimeMs())?.name ?? null,
  });
}

/** Installs the hooks (a no-op with auth off: nothing changes, `tenureAuth` stays null). */
export function installAuth(app: FastifyInstance, config: ServerConfig, coord: CoordState): void {
  app.decorateRequest('tenureAuth', null);
  if (!config.auth) return;
  const authenticator = new Authenticator((name) => coord.authToken(name));
  const limiter = new RateLimiter();
  app.addHook('onRequest', async (request, reply) => {
    if ('open' in accessOf(request, coord, false)) return;
    try {
      const token = await authenticator.authenticate(request.headers.authorization);
      const rate = rateOf(token, config);
      // A follower already counted a forwarded request against the rate where it was served; only
      // a proven forward (arrival-headers.ts, forward-proof.ts) skips it.
      if (rate > 0 && request.tenureForwardedBy?.proven !== true) limiter.take(token.name, rate);
      request.tenureAuth = { token, principal: principalOf(token, config), access: null };
    } catch (err) {
      // Refused before its body was read: close rather than read (and decrypt) whatever body an
      // unauthenticated client announced to keep the connection alive.
      if (announcesBody(request)) void reply.header('connection', 'close');
      throw err;
    }
  });
  app.addHook('preHandler', (request, _reply, done) => {
    const auth = request.tenureAuth;
    if (auth === null) return done();
    const access = accessOf(request, coord, true);
    request.tenureAuth = { ...auth, access };
    const refusal = authorize(coord, auth.token, access);
    if (refusal === null) done();
    else done(refusal);
  });
}

/**
 * The one authorization check (docs/security.md): null when `token` may do what `access` needs
 * in the node's applied auth state now; else 401 `unauthorized` when the token was revoked (or
 * re-created with another secret), or 403 `forbidden` naming the first need its roles no longer
 * cover. Runs before every handler, and again before every event of an open watch and before a
 * long-poll answers, so a revocation or a role change ends what the token has open.
 */
export function authorize(coord: CoordState, token: TokenRecord, access: Access): HttpError | null {
  if ('open' in access) return null;
  const current = coord.authToken(token.name);
  if (current === null || current.hash !== token.hash)
    return unauthorized('this token was revoked');
  if (!('needs' in access)) return null;
  const state = coord.authState();
  const missing = access.needs.find((need) => !isAllowed(state, current, need));
  return missing === undefined ? null : new HttpError('forbidden', describeNeed(missing));
}

/**
 * `authorize` for a request still being served (an open watch, a long-poll about to answer): null
 * while its token may still do what its route needs, or always with auth off.
 */
export function stillAuthorized(request: FastifyRequest, coord: CoordState): HttpError | null {
  const auth = request.tenureAuth;
  if (auth === null || auth.access === null) return null;
  return authorize(coord, auth.token, auth.access);
}

/** `stillAuthorized`, throwing its 401/403 HttpError (a long-poll about to answer). */
export function assertStillAuthorized(request: FastifyRequest, coord: CoordState): void {
  const refusal = stillAuthorized(request, coord);
  if (refusal !== null) throw refusal;
}

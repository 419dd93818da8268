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
import { Authenticator } from './authenticator.js';
import { RateLimiter } from './rate-limiter.js';

/** Who sent a request, once authenticated. */
export interface AuthContext {
  readonly token: TokenRecord;
  /** What commands of this request carry (caps resolved from the token's quota and defaults). */
  readonly principal: Principal;
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
      request.tenureAuth = { token, principal: principalOf(token, config) };
    } catch (err) {
      // Refused before its body was read: close rather than read (and decrypt) whatever body an
      // unauthenticated client announced to keep the connection alive.
      if (announcesBody(request)) void reply.header('connection', 'close');
      throw err;
    }
  });
  app.addHook('preHandler', (request, _reply, done) => {
    const auth = request.tenureAuth;
    const access = accessOf(request, coord, true);
    if (auth === null || !('needs' in access)) return done();
    const state = coord.authState();
    const missing = access.needs.find((need) => !isAllowed(state, auth.token, need));
    if (missing === undefined) return done();
    done(new HttpError('forbidden', describeNeed(missing)));
  });
}

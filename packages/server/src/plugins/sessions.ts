/**
 * Session routes (docs/api.md, Sessions): create, keepalive, get, end. A session is one ttl that
 * keeps many grants alive; when it ends (DELETE or expiry) every grant bound to it ends in the
 * same log entry.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SessionEndValue, SessionValue } from '@tenure/coord-state';
import { HttpError } from '../http-error.js';
import * as R from '../response-schemas.js';
import { routeSchema } from '../route-schema.js';
import { readQuery, sessionParams } from '../schemas.js';
import type { RoutePluginOptions } from './leases.js';

/** Write errors of a route on one session (404 once it ended), without a body of its own. */
const SESSION_WRITE_ERRORS = [400, 404, 422, 429, 503, 504] as const;

export const sessionRoutes: FastifyPluginAsyncTypebox<RoutePluginOptions> = async (app, opts) => {
  const { deps, gateway: gw } = opts;
  const { coord } = deps;
  const { headers: H, body: B } = opts.schemas;

  app.post(
    '/v1/sessions',
    {
      schema: routeSchema(
        {
          tags: ['sessions'],
          summary: 'Create a session',
          description:
            'Starts a session live for ttlMs (renewed by keepalive). Lease, semaphore and campaign requests ' +
            'may name it instead of a ttl; when it ends every grant bound to it ends at once. 429 at the session limit.',
          body: B.sessionCreate,
          response: { 200: R.session },
          errors: R.WRITE_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const b = request.body;
      return gw.onLeader(request, reply, 0, async () => {
        const { value } = await gw.write<SessionValue>(request, {
          type: 'session.create',
          ttlMs: b.ttlMs,
          name: b.name ?? null,
        });
        return { sessionId: value.sessionId, ttlMs: value.ttlMs };
      });
    },
  );

  app.post(
    '/v1/sessions/:sessionId/keepalive',
    {
      schema: routeSchema(
        {
          tags: ['sessions'],
          summary: 'Keep a session alive',
          description:
            'Restarts the session ttl; 404 not_found once the session ended or expired. Takes no body.',
          params: sessionParams,
          response: { 200: R.session },
          errors: SESSION_WRITE_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const { sessionId } = request.params;
      return gw.onLeader(request, reply, 0, async () => {
        const { value } = await gw.write<SessionValue>(request, {
          type: 'session.keepalive',
          sessionId,
        });
        return { sessionId: value.sessionId, ttlMs: value.ttlMs };
      });
    },
  );

  app.get(
    '/v1/sessions/:sessionId',
    {
      schema: routeSchema(
        {
          tags: ['sessions'],
          summary: 'Get a session',
          description:
            'The live session with its remaining time and the leases, permits and candidacies bound to it; 404 once ended.',
          params: sessionParams,
          querystring: readQuery,
          response: { 200: R.sessionView },
          errors: [...R.READ_ERRORS, 404],
        },
        H,
      ),
    },
    async (request, reply) => {
      const { sessionId } = request.params;
      const read = { consistency: request.query.consistency, extraMs: 0 };
      return gw.read(request, reply, read, (t) => {
        const v = coord.getSession(sessionId, t);
        if (v === null) throw new HttpError('not_found', `session ${sessionId} not found`);
        return {
          sessionId: v.sessionId,
          name: v.name,
          ttlMs: v.ttlMs,
          remainingMs: v.remainingMs,
          leases: [...v.leases],
          semaphores: [...v.semaphores],
          candidacies: [...v.candidacies],
        };
      });
    },
  );

  app.delete(
    '/v1/sessions/:sessionId',
    {
      schema: routeSchema(
        {
          tags: ['sessions'],
          summary: 'End a session',
          description:
            'Ends the session: in one log entry every grant bound to it ends (history reason session_ended) ' +
            'and its waiters and candidacies are withdrawn. 404 once ended. Takes no body.',
          params: sessionParams,
          response: { 200: R.sessionEnded },
          errors: SESSION_WRITE_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const { sessionId } = request.params;
      return gw.onLeader(request, reply, 0, async () => {
        await gw.write<SessionEndValue>(request, { type: 'session.end', sessionId });
        return { sessionId, ended: true as const };
      });
    },
  );
};

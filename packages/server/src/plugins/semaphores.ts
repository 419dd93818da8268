/**
 * Semaphore routes (docs/api.md, Semaphores): acquire (with FIFO waits), renew, release, get.
 * At most `limit` live permits per name, each with its own fencing token.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SemaphoreAcquireValue, SemaphoreGrant } from '@tenure/coord-state';
import { grantBinding } from '../grant-binding.js';
import { HttpError } from '../http-error.js';
import { LeaseWaits } from '../lease-waits.js';
import * as R from '../response-schemas.js';
import { routeSchema } from '../route-schema.js';
import { readQuery, semaphoreParams } from '../schemas.js';
import type { RoutePluginOptions } from './leases.js';

/** 200 body of acquire and renew: `session` when session-bound. */
function permitBody(g: SemaphoreGrant) {
  return {
    name: g.name,
    holder: g.holder,
    fencingToken: g.fencingToken,
    limit: g.limit,
    ttlMs: g.ttlMs,
    ...(g.session === undefined ? {} : { session: g.session }),
  };
}

export const semaphoreRoutes: FastifyPluginAsyncTypebox<RoutePluginOptions> = async (app, opts) => {
  const { deps, gateway: gw } = opts;
  const { coord } = deps;
  const { headers: H, body: B } = opts.schemas;
  const waits = new LeaseWaits(deps, gw);

  app.post(
    '/v1/semaphores/:name/acquire',
    {
      schema: routeSchema(
        {
          tags: ['semaphores'],
          summary: 'Acquire a semaphore permit',
          description:
            'Grants holder one of at most limit permits with a new fencing token, or renews the permit holder already has under the same binding (else 409 grant_mismatch). ' +
            'A full semaphore answers 409 held, or with waitMs > 0 queues the caller FIFO until a permit frees or waitMs passes. ' +
            'The first acquire of an idle name sets limit; another limit while it has holders or waiters is 409 limit_mismatch. ' +
            'Give ttlMs or session (exactly one).',
          params: semaphoreParams,
          body: B.semaphoreAcquire,
          response: { 200: R.semaphoreGrant },
          errors: R.WRITE_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const { name } = request.params;
      const b = request.body;
      const waitMs = b.waitMs ?? 0;
      const binding = grantBinding(b, deps.config.limits);
      return gw.onLeader(request, reply, waitMs, async () => {
        const { value } = await gw.write<SemaphoreAcquireValue>(request, {
          type: 'semaphore.acquire',
          name,
          holder: b.holder,
          limit: b.limit,
          ...binding,
          waitMs,
        });
        if (value.kind === 'granted') return permitBody(value);
        const queued = { name, holder: b.holder, waiterId: value.waiterId, waitMs };
        return permitBody(await waits.settlePermit(request, queued));
      });
    },
  );

  app.post(
    '/v1/semaphores/:name/renew',
    {
      schema: routeSchema(
        {
          tags: ['semaphores'],
          summary: 'Renew a semaphore permit',
          description:
            'Restarts the ttl of the permit named by holder and fencingToken (a session-bound permit: keeps its session alive). ' +
            '409 not_holder or lease_expired when that permit is gone.',
          params: semaphoreParams,
          body: B.leaseGrant,
          response: { 200: R.semaphoreGrant },
          errors: R.WRITE_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const { name } = request.params;
      const b = request.body;
      return gw.onLeader(request, reply, 0, async () => {
        const { value } = await gw.write<SemaphoreGrant>(request, {
          type: 'semaphore.renew',
          name,
          holder: b.holder,
          fencingToken: b.fencingToken,
        });
        return permitBody(value);
      });
    },
  );

  app.post(
    '/v1/semaphores/:name/release',
    {
      schema: routeSchema(
        {
          tags: ['semaphores'],
          summary: 'Release a semaphore permit',
          description:
            'Ends the permit named by holder and fencingToken; the next waiter (if any) gets a permit with a higher token.',
          params: semaphoreParams,
          body: B.leaseGrant,
          response: { 200: R.semaphoreReleased },
          errors: R.WRITE_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const { name } = request.params;
      const b = request.body;
      return gw.onLeader(request, reply, 0, async () => {
        await gw.write(request, {
          type: 'semaphore.release',
          name,
          holder: b.holder,
          fencingToken: b.fencingToken,
        });
        return { name, released: true as const };
      });
    },
  );

  app.get(
    '/v1/semaphores/:name',
    {
      schema: routeSchema(
        {
          tags: ['semaphores'],
          summary: 'Get a semaphore',
          description:
            'Its limit, live permits (oldest first) and the number of queued acquires; 404 when nobody holds or waits.',
          params: semaphoreParams,
          querystring: readQuery,
          response: { 200: R.semaphoreView },
          errors: [...R.READ_ERRORS, 404],
        },
        H,
      ),
    },
    async (request, reply) => {
      const { name } = request.params;
      const read = { consistency: request.query.consistency, extraMs: 0 };
      return gw.read(request, reply, read, (t) => {
        const v = coord.getSemaphore(name, t);
        if (v === null) throw new HttpError('not_found', `semaphore ${name} is not held`);
        return {
          name: v.name,
          limit: v.limit,
          holders: v.holders.map((h) => ({
            holder: h.holder,
            fencingToken: h.fencingToken,
            remainingMs: h.remainingMs,
            ...(h.session === undefined ? {} : { session: h.session }),
          })),
          waiters: v.waiters,
        };
      });
    },
  );
};

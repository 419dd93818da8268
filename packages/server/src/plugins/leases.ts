/**
 * Lease routes (docs/api.md, Leases): acquire (with FIFO waits), renew, release, get, list, watch.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type {
  AnyLeaseGrant,
  LeaseAcquireValue,
  LeaseView,
  SessionLeaseView,
  SharedLeaseView,
} from '@tenure/coord-state';
import { AUTH_CHANGE_KEY } from '@tenure/coord-state';
import { assertStillAuthorized, stillAuthorized } from '../auth/auth-hooks.js';
import { waitForChange } from '../change-hub.js';
import type { ServerDeps } from '../deps.js';
import type { Gateway } from '../gateway.js';
import { grantBinding } from '../grant-binding.js';
import { HttpError } from '../http-error.js';
import { LeaseWaits } from '../lease-waits.js';
import type { LongPolls } from '../long-polls.js';
import * as R from '../response-schemas.js';
import { pageOf } from '../page.js';
import { routeSchema } from '../route-schema.js';
import {
  LIST_LIMIT_DEFAULT,
  LONG_POLL_MS_DEFAULT,
  nameParams,
  readQuery,
  type AppSchemas,
} from '../schemas.js';

/** What every route plugin gets: the dependencies, the gateway and the app's request schemas. */
export interface RoutePluginOptions {
  readonly deps: ServerDeps;
  readonly gateway: Gateway;
  readonly schemas: AppSchemas;
  /** The node's bound on long-polls waiting at once. */
  readonly longPolls: LongPolls;
}

/** 200 body of acquire and renew: `session` when session-bound, `mode` when shared. */
function grantBody(g: AnyLeaseGrant) {
  return {
    name: g.name,
    holder: g.holder,
    fencingToken: g.fencingToken,
    ttlMs: g.ttlMs,
    ...('session' in g ? { session: g.session } : {}),
    ...(g.mode === 'shared' ? { mode: g.mode } : {}),
  };
}

/** An exclusive grant with its remaining time (`session` when session-bound). */
function viewBody(v: LeaseView | SessionLeaseView) {
  return {
    name: v.name,
    holder: v.holder,
    fencingToken: v.fencingToken,
    ttlMs: v.ttlMs,
    remainingMs: v.remainingMs,
    ...('session' in v ? { session: v.session } : {}),
  };
}

/** GET answer: the exclusive grant, or the shared grants. */
function stateBody(v: LeaseView | SessionLeaseView | SharedLeaseView) {
  if (!('holders' in v)) return viewBody(v);
  return {
    name: v.name,
    mode: v.mode,
    holders: v.holders.map((h) => ({
      holder: h.holder,
      fencingToken: h.fencingToken,
      remainingMs: h.remainingMs,
      ...(h.session === undefined ? {} : { session: h.session }),
    })),
  };
}

export const leaseRoutes: FastifyPluginAsyncTypebox<RoutePluginOptions> = async (app, opts) => {
  const { deps, gateway: gw } = opts;
  const { raft, coord, hub } = deps;
  const { headers: H, body: B, query: Q } = opts.schemas;
  const nowMs = (): number => Math.floor(raft.leadership().clusterTimeMs);

  const waits = new LeaseWaits(deps, gw);

  app.post(
    '/v1/leases/:name/acquire',
    {
      schema: routeSchema(
        {
          tags: ['leases'],
          summary: 'Acquire a lease',
          description:
            'Grants the lease to holder with a new fencing token, or renews it when holder already holds it in the same mode and binding (else 409 grant_mismatch). ' +
            'With waitMs > 0 a held lease queues the caller FIFO until granted or waitMs passes (then 409 held). ' +
            'lockDelayMs keeps an expired lease unavailable for that long; maxHoldMs caps the total hold time. ' +
            'Give ttlMs or session (exactly one): a session-bound grant lives until released or its session ends. ' +
            'mode: shared lets any number of shared holders in at once; a waiting exclusive acquire blocks later shared ones (FIFO).',
          params: nameParams,
          body: B.acquire,
          response: { 200: R.grant },
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
        const { value } = await gw.write<LeaseAcquireValue>(request, {
          type: 'lease.acquire',
          name,
          holder: b.holder,
          ...binding,
          waitMs,
          lockDelayMs: b.lockDelayMs ?? 0,
          maxHoldMs: b.maxHoldMs ?? null,
          ...(b.mode === undefined ? {} : { mode: b.mode }),
        });
        if (value.kind === 'granted') return grantBody(value);
        const queued = { name, holder: b.holder, waiterId: value.waiterId, waitMs };
        return grantBody(await waits.settle(request, queued));
      });
    },
  );

  app.post(
    '/v1/leases/:name/renew',
    {
      schema: routeSchema(
        {
          tags: ['leases'],
          summary: 'Renew a lease',
          description:
            'Restarts the ttl of the grant named by holder and fencingToken. 409 not_holder or lease_expired when that grant is gone.',
          params: nameParams,
          body: B.leaseGrant,
          response: { 200: R.grant },
          errors: R.WRITE_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const { name } = request.params;
      const b = request.body;
      return gw.onLeader(request, reply, 0, async () => {
        const { value } = await gw.write<AnyLeaseGrant>(request, {
          type: 'lease.renew',
          name,
          holder: b.holder,
          fencingToken: b.fencingToken,
        });
        return grantBody(value);
      });
    },
  );

  app.post(
    '/v1/leases/:name/release',
    {
      schema: routeSchema(
        {
          tags: ['leases'],
          summary: 'Release a lease',
          description:
            'Ends the grant named by holder and fencingToken; the next waiter (if any) is granted with a higher token.',
          params: nameParams,
          body: B.leaseGrant,
          response: { 200: R.released },
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
          type: 'lease.release',
          name,
          holder: b.holder,
          fencingToken: b.fencingToken,
        });
        return { name, released: true as const };
      });
    },
  );

  app.get(
    '/v1/leases/:name',
    {
      schema: routeSchema(
        {
          tags: ['leases'],
          summary: 'Get a lease',
          description:
            'The live grant of the lease with its remaining time, or (mode: shared) every live shared grant; 404 when not held.',
          params: nameParams,
          querystring: readQuery,
          response: { 200: R.leaseState },
          errors: [...R.READ_ERRORS, 404],
        },
        H,
      ),
    },
    async (request, reply) => {
      const { name } = request.params;
      const read = { consistency: request.query.consistency, extraMs: 0 };
      return gw.read(request, reply, read, (t) => {
        const v = coord.leaseState(name, t);
        if (!v) throw new HttpError('not_found', `lease ${name} is not held`);
        return stateBody(v);
      });
    },
  );

  app.get(
    '/v1/leases',
    {
      schema: routeSchema(
        {
          tags: ['leases'],
          summary: 'List leases',
          description:
            'Live leases in name order, optionally only those whose name starts with prefix; ' +
            'pages of at most limit, the next one after nextCursor.',
          querystring: Q.list,
          response: { 200: R.leaseList },
          errors: R.READ_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const q = request.query;
      const limit = q.limit ?? LIST_LIMIT_DEFAULT;
      return gw.read(request, reply, { consistency: q.consistency, extraMs: 0 }, (t) => {
        const fetched = coord.listLeases(q.prefix ?? '', limit + 1, t, q.after ?? null);
        const page = pageOf(fetched, limit, (l) => l.name);
        return { leases: page.items.map(viewBody), nextCursor: page.nextCursor };
      });
    },
  );

  app.get(
    '/v1/leases/:name/watch',
    {
      schema: routeSchema(
        {
          tags: ['leases'],
          summary: 'Watch a lease (long-poll)',
          description:
            'Answers when the grant differs from afterToken (default: the grant at arrival) or timeoutMs passes (changed: false).',
          params: nameParams,
          querystring: Q.watch,
          response: { 200: R.leaseWatch },
          errors: R.READ_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const { name } = request.params;
      const q = request.query;
      const timeoutMs = q.timeoutMs ?? LONG_POLL_MS_DEFAULT;
      const read = { consistency: q.consistency, extraMs: timeoutMs };
      return opts.longPolls.hold(() =>
        gw.read(request, reply, read, async () => {
          const tokenNow = (): number => coord.getLease(name, nowMs())?.fencingToken ?? 0;
          const baseline = q.afterToken ?? tokenNow();
          const changed = await waitForChange(
            hub,
            [`lease:${name}`, AUTH_CHANGE_KEY],
            () =>
              tokenNow() !== baseline || stillAuthorized(request, coord) !== null ? true : null,
            performance.now() + timeoutMs,
            request.tenure.signal,
          );
          // Answered only if the token may still read it (revoked or lost the right: 401/403).
          assertStillAuthorized(request, coord);
          const v = coord.getLease(name, nowMs());
          return v
            ? { ...viewBody(v), changed: changed === true }
            : { name, holder: null, fencingToken: null, changed: changed === true };
        }),
      );
    },
  );
};

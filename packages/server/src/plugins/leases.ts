/**
 * Lease routes (SPEC §3 Leases): acquire (with FIFO waits), renew, release, get, list, watch.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type {
  Command,
  LeaseAcquireValue,
  LeaseGrant,
  LeaseView,
  WaiterOutcome,
} from '@tenure/coord-state';
import { waitForChange } from '../change-hub.js';
import type { ServerDeps } from '../deps.js';
import type { Gateway } from '../gateway.js';
import { HttpError, timeoutError } from '../http-error.js';
import { queryInt, queryOptInt } from '../query.js';
import { deadlineOf } from '../request-context.js';
import { bodySchemas, listQuery, nameParams, readQuery, watchQuery } from '../schemas.js';

export interface RoutePluginOptions {
  readonly deps: ServerDeps;
  readonly gateway: Gateway;
}

type NameParams = Static<typeof nameParams>;

/** 200 body of acquire and renew. */
function grantBody(
  g: Pick<LeaseGrant, 'name' | 'holder' | 'fencingToken'> & { ttlMs: number | null },
): {
  name: string;
  holder: string;
  fencingToken: number;
  ttlMs: number | null;
} {
  return { name: g.name, holder: g.holder, fencingToken: g.fencingToken, ttlMs: g.ttlMs };
}

function viewBody(v: LeaseView): Record<string, unknown> {
  return {
    name: v.name,
    holder: v.holder,
    fencingToken: v.fencingToken,
    ttlMs: v.ttlMs,
    remainingMs: v.remainingMs,
  };
}

export async function leaseRoutes(app: FastifyInstance, opts: RoutePluginOptions): Promise<void> {
  const { deps, gateway: gw } = opts;
  const { raft, coord, hub, config } = deps;
  const S = bodySchemas(config.limits);
  const nowMs = (): number => Math.floor(raft.status().clusterTimeMs);

  /** 409 held with the current holder (or lock-delay) — the answer of a wait that ran out. */
  const heldError = (name: string): HttpError => {
    const t = nowMs();
    const delay = coord.lockDelayRemainingMs(name, t);
    const holder = coord.getLease(name, t)?.holder ?? null;
    return new HttpError(
      'held',
      `lease ${name} is held`,
      delay > 0 && holder === null ? { holder, lockDelayRemainingMs: delay } : { holder },
    );
  };

  /**
   * BC-27: the client of a waiting acquire went away. Withdraw its waiter; if it was granted in the
   * meantime (nobody will ever use that grant), release the grant. Best effort, leader only.
   */
  const withdraw = (name: string, holder: string, waiterId: number): void => {
    const propose = (command: Command) =>
      raft.propose(deps.encodeEnvelope({ v: 1, command, idempotency: null }), {
        timeoutMs: config.requestTimeoutMsDefault,
      });
    if (raft.status().role !== 'leader') return;
    propose({ type: 'lease.cancelWait', name, holder, waiterId })
      .then(() => {
        const o = coord.waiterOutcome(name, waiterId);
        const live = coord.getLease(name, nowMs());
        if (o.kind === 'granted' && live !== null && live.fencingToken === o.fencingToken) {
          return propose({ type: 'lease.release', name, holder, fencingToken: o.fencingToken });
        }
        return undefined;
      })
      .catch((err: unknown) =>
        deps.logger.debug({ err, name, waiterId }, 'withdrawing an abandoned waiter failed'),
      );
  };

  /** Wait for a queued waiter's fate (granted / timed out); withdraw it if the client goes away. */
  const awaitWaiter = async (
    request: FastifyRequest,
    name: string,
    holder: string,
    waiterId: number,
    waitMs: number,
  ) => {
    const ctx = request.tenure;
    const settled = (): WaiterOutcome | null => {
      const o = coord.waiterOutcome(name, waiterId);
      return o.kind === 'pending' ? null : o;
    };
    const outcome = await waitForChange(
      hub,
      `lease:${name}`,
      settled,
      deadlineOf(ctx, waitMs),
      ctx.signal,
    );
    if (outcome === null) {
      if (ctx.signal.aborted) withdraw(name, holder, waiterId);
      throw timeoutError('the wait did not settle within the deadline; outcome unknown');
    }
    switch (outcome.kind) {
      case 'granted':
        return grantBody(outcome);
      case 'timed_out':
        // The holder at the deadline, as the replicated answer (and its replay) has it.
        if (typeof outcome.holder === 'string')
          throw new HttpError('held', `lease ${name} is held`, { holder: outcome.holder });
        throw heldError(name);
      case 'cancelled':
        throw heldError(name);
      case 'unknown':
        throw timeoutError('the waiter is no longer known; outcome unknown');
      default:
        throw timeoutError();
    }
  };

  app.post(
    '/v1/leases/:name/acquire',
    { schema: { tags: ['leases'], params: nameParams, body: S.acquire } },
    async (request, reply: FastifyReply) => {
      const { name } = request.params as NameParams;
      const b = request.body as Static<typeof S.acquire>;
      const waitMs = b.waitMs ?? 0;
      return gw.onLeader(request, reply, waitMs, async () => {
        const { value } = await gw.write<LeaseAcquireValue>(request, {
          type: 'lease.acquire',
          name,
          holder: b.holder,
          ttlMs: b.ttlMs,
          waitMs,
          lockDelayMs: b.lockDelayMs ?? 0,
          maxHoldMs: b.maxHoldMs ?? null,
        });
        if (value.kind === 'granted') return grantBody(value);
        return awaitWaiter(request, name, b.holder, value.waiterId, waitMs);
      });
    },
  );

  app.post(
    '/v1/leases/:name/renew',
    { schema: { tags: ['leases'], params: nameParams, body: S.leaseGrant } },
    async (request, reply) => {
      const { name } = request.params as NameParams;
      const b = request.body as Static<typeof S.leaseGrant>;
      return gw.onLeader(request, reply, 0, async () => {
        const { value } = await gw.write<LeaseGrant>(request, {
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
    { schema: { tags: ['leases'], params: nameParams, body: S.leaseGrant } },
    async (request, reply) => {
      const { name } = request.params as NameParams;
      const b = request.body as Static<typeof S.leaseGrant>;
      return gw.onLeader(request, reply, 0, async () => {
        await gw.write(request, {
          type: 'lease.release',
          name,
          holder: b.holder,
          fencingToken: b.fencingToken,
        });
        return { name, released: true };
      });
    },
  );

  app.get(
    '/v1/leases/:name',
    { schema: { tags: ['leases'], params: nameParams, querystring: readQuery } },
    async (request, reply) => {
      const { name } = request.params as NameParams;
      return gw.read(request, reply, 0, (t) => {
        const v = coord.getLease(name, t);
        if (!v) throw new HttpError('not_found', `lease ${name} is not held`);
        return viewBody(v);
      });
    },
  );

  app.get(
    '/v1/leases',
    { schema: { tags: ['leases'], querystring: listQuery } },
    async (request, reply) => {
      const q = request.query as Static<typeof listQuery>;
      const limit = queryInt(q.limit, 'query.limit', 100, 1, 1000);
      return gw.read(request, reply, 0, (t) => ({
        leases: coord.listLeases(q.prefix ?? '', limit, t).map(viewBody),
      }));
    },
  );

  app.get(
    '/v1/leases/:name/watch',
    { schema: { tags: ['leases'], params: nameParams, querystring: watchQuery } },
    async (request, reply) => {
      const { name } = request.params as NameParams;
      const q = request.query as Static<typeof watchQuery>;
      const timeoutMs = queryInt(q.timeoutMs, 'query.timeoutMs', 30_000, 0, config.longPollMsMax);
      const afterToken = queryOptInt(q.afterToken, 'query.afterToken', 0, Number.MAX_SAFE_INTEGER);
      return gw.read(request, reply, timeoutMs, async () => {
        const tokenNow = (): number => coord.getLease(name, nowMs())?.fencingToken ?? 0;
        const baseline = afterToken ?? tokenNow();
        const changed = await waitForChange(
          hub,
          `lease:${name}`,
          () => (tokenNow() !== baseline ? true : null),
          performance.now() + timeoutMs,
          request.tenure.signal,
        );
        const v = coord.getLease(name, nowMs());
        return v
          ? { ...viewBody(v), changed: changed === true }
          : { name, holder: null, fencingToken: null, changed: changed === true };
      });
    },
  );
}

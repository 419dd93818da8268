/**
 * Election routes (docs/api.md, Elections): campaign (with waits), renew, resign, proclaim, get,
 * observe.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AUTH_CHANGE_KEY, type CampaignValue, type ElectionView } from '@tenure/coord-state';
import { assertStillAuthorized, stillAuthorized } from '../auth/auth-hooks.js';
import { waitForChange } from '../change-hub.js';
import { grantBinding } from '../grant-binding.js';
import { checkJsonValue } from '../json-limits.js';
import { deadlineOf } from '../request-context.js';
import * as R from '../response-schemas.js';
import { routeSchema } from '../route-schema.js';
import { pageOf } from '../page.js';
import { groupParams, LIST_LIMIT_DEFAULT, LONG_POLL_MS_DEFAULT, readQuery } from '../schemas.js';
import type { RoutePluginOptions } from './leases.js';

function campaignBody(
  group: string,
  candidate: string,
  v: ElectionView,
  session: string | null,
): CampaignValue {
  const elected = v.leader !== null && v.leader.candidate === candidate;
  const bound = session === null ? {} : { session };
  return elected
    ? {
        group,
        candidate,
        elected,
        fencingToken: v.leader!.fencingToken,
        leader: v.leader,
        ...bound,
      }
    : { group, candidate, elected, leader: v.leader, ...bound };
}

function viewBody(v: ElectionView) {
  return { group: v.group, leader: v.leader, candidates: [...v.candidates], revision: v.revision };
}

export const electionRoutes: FastifyPluginAsyncTypebox<RoutePluginOptions> = async (app, opts) => {
  const { deps, gateway: gw } = opts;
  const { coord, hub, config } = deps;
  const { headers: H, body: B, query: Q } = opts.schemas;

  app.post(
    '/v1/elections/:group/campaign',
    {
      schema: routeSchema(
        {
          tags: ['elections'],
          summary: 'Campaign for leadership',
          description:
            'Joins the group as a candidate with a ttl (renewed by /renew). The first live candidate leads and gets a fencing token. ' +
            'With waitMs > 0 the call waits until this candidate leads, leaves, or waitMs passes (then elected: false). ' +
            'Give ttlMs or session (exactly one): a session-bound candidacy lives until it resigns or its session ends.',
          params: groupParams,
          body: B.campaign,
          response: { 200: R.campaign },
          errors: R.WRITE_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const { group } = request.params;
      const b = request.body;
      const announced = checkJsonValue(b.value, config.limits.valueBytesMax, 'body.value') ?? null;
      const waitMs = b.waitMs ?? 0;
      const binding = grantBinding(b, config.limits);
      return gw.onLeader(request, reply, waitMs, async () => {
        const { value } = await gw.write<CampaignValue>(request, {
          type: 'election.campaign',
          group,
          candidate: b.candidate,
          ...binding,
          value: announced,
        });
        if (value.elected || waitMs === 0) return value;
        // Long-poll until this candidacy leads, disappears, or waitMs passes (then elected:false).
        const settled = (): ElectionView | null => {
          const v = coord.getElection(group);
          if (v.leader?.candidate === b.candidate) return v;
          if (!v.candidates.some((c) => c.candidate === b.candidate)) return v;
          return null;
        };
        const deadline = Math.min(deadlineOf(request.tenure, waitMs), performance.now() + waitMs);
        const v =
          (await waitForChange(
            hub,
            `election:${group}`,
            settled,
            deadline,
            request.tenure.signal,
          )) ?? coord.getElection(group);
        return campaignBody(group, b.candidate, v, binding.session);
      });
    },
  );

  app.post(
    '/v1/elections/:group/renew',
    {
      schema: routeSchema(
        {
          tags: ['elections'],
          summary: 'Renew a candidacy',
          description:
            "Restarts the candidate's ttl; 409 not_holder when it is no longer a candidate.",
          params: groupParams,
          body: B.candidate,
          response: { 200: R.campaign },
          errors: R.WRITE_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const { group } = request.params;
      const b = request.body;
      return gw.onLeader(request, reply, 0, async () => {
        const { value } = await gw.write<CampaignValue>(request, {
          type: 'election.renew',
          group,
          candidate: b.candidate,
        });
        return value;
      });
    },
  );

  app.post(
    '/v1/elections/:group/resign',
    {
      schema: routeSchema(
        {
          tags: ['elections'],
          summary: 'Resign',
          description:
            'Leaves the group; when the candidate led, the next candidate leads with a higher token.',
          params: groupParams,
          body: B.candidate,
          response: { 200: R.resigned },
          errors: R.WRITE_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const { group } = request.params;
      const b = request.body;
      return gw.onLeader(request, reply, 0, async () => {
        await gw.write(request, { type: 'election.resign', group, candidate: b.candidate });
        return { group, resigned: true as const };
      });
    },
  );

  app.post(
    '/v1/elections/:group/proclaim',
    {
      schema: routeSchema(
        {
          tags: ['elections'],
          summary: "Change the leader's value",
          description:
            'The leader (candidate and its fencingToken) announces a new value; 409 not_holder from anyone else.',
          params: groupParams,
          body: B.proclaim,
          response: { 200: R.proclaimed },
          errors: R.WRITE_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const { group } = request.params;
      const b = request.body;
      const proclaimed = checkJsonValue(b.value, config.limits.valueBytesMax, 'body.value') ?? null;
      return gw.onLeader(request, reply, 0, async () => {
        const { value } = await gw.write<{ group?: string; leader?: unknown }>(request, {
          type: 'election.proclaim',
          group,
          candidate: b.candidate,
          fencingToken: b.fencingToken,
          value: proclaimed,
        });
        const leader =
          value && typeof value === 'object' && 'leader' in value
            ? value.leader
            : { candidate: b.candidate, value: proclaimed, fencingToken: b.fencingToken };
        return { group, leader };
      });
    },
  );

  app.get(
    '/v1/elections',
    {
      schema: routeSchema(
        {
          tags: ['elections'],
          summary: 'List elections',
          description:
            'Election groups with candidates in group order, optionally only those starting with prefix; ' +
            'pages of at most limit, the next one after nextCursor.',
          querystring: Q.list,
          response: { 200: R.electionList },
          errors: R.READ_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const q = request.query;
      const limit = q.limit ?? LIST_LIMIT_DEFAULT;
      return gw.read(request, reply, { consistency: q.consistency, extraMs: 0 }, () => {
        const fetched = coord.listElections(q.prefix ?? '', limit + 1, q.after ?? null);
        const page = pageOf(fetched, limit, (e) => e.group);
        return { elections: page.items.map(viewBody), nextCursor: page.nextCursor };
      });
    },
  );

  app.get(
    '/v1/elections/:group',
    {
      schema: routeSchema(
        {
          tags: ['elections'],
          summary: 'Get an election',
          description: 'The leader (or null), the live candidates and the revision of the group.',
          params: groupParams,
          querystring: readQuery,
          response: { 200: R.electionView },
          errors: R.READ_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const { group } = request.params;
      const read = { consistency: request.query.consistency, extraMs: 0 };
      return gw.read(request, reply, read, () => viewBody(coord.getElection(group)));
    },
  );

  app.get(
    '/v1/elections/:group/observe',
    {
      schema: routeSchema(
        {
          tags: ['elections'],
          summary: 'Observe an election (long-poll)',
          description:
            'Answers when the leader token differs from afterToken or the revision from afterRevision ' +
            '(default: the revision at arrival), or when timeoutMs passes (changed: false).',
          params: groupParams,
          querystring: Q.observe,
          response: { 200: R.electionObserve },
          errors: R.READ_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const { group } = request.params;
      const q = request.query;
      const timeoutMs = q.timeoutMs ?? LONG_POLL_MS_DEFAULT;
      const read = { consistency: q.consistency, extraMs: timeoutMs };
      return opts.longPolls.hold(() =>
        gw.read(request, reply, read, async () => {
          const afterRevision =
            q.afterRevision ??
            (q.afterToken === undefined ? coord.getElection(group).revision : undefined);
          const differs = (): true | null => {
            const v = coord.getElection(group);
            if (afterRevision !== undefined && v.revision !== afterRevision) return true;
            if (q.afterToken !== undefined && (v.leader?.fencingToken ?? 0) !== q.afterToken)
              return true;
            return null;
          };
          const changed = await waitForChange(
            hub,
            [`election:${group}`, AUTH_CHANGE_KEY],
            () => (stillAuthorized(request, coord) !== null ? true : differs()),
            performance.now() + timeoutMs,
            request.tenure.signal,
          );
          // Answered only if the token may still read it (revoked or lost the right: 401/403).
          assertStillAuthorized(request, coord);
          return { ...viewBody(coord.getElection(group)), changed: changed === true };
        }),
      );
    },
  );
};

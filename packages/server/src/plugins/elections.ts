/**
 * Election routes (SPEC §3 Elections): campaign (with waits), renew, resign, proclaim, get, observe.
 */
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { CampaignValue, ElectionView, JsonValue } from '@tenure/coord-state';
import { waitForChange } from '../change-hub.js';
import { checkJsonValue } from '../json-limits.js';
import { queryInt, queryOptInt } from '../query.js';
import { deadlineOf } from '../request-context.js';
import { bodySchemas, groupParams, observeQuery, readQuery } from '../schemas.js';
import type { RoutePluginOptions } from './leases.js';

type GroupParams = Static<typeof groupParams>;

function campaignBody(group: string, candidate: string, v: ElectionView): CampaignValue {
  const elected = v.leader !== null && v.leader.candidate === candidate;
  return elected
    ? { group, candidate, elected, fencingToken: v.leader!.fencingToken, leader: v.leader }
    : { group, candidate, elected, leader: v.leader };
}

function viewBody(v: ElectionView): Record<string, unknown> {
  return { group: v.group, leader: v.leader, candidates: v.candidates, revision: v.revision };
}

export async function electionRoutes(
  app: FastifyInstance,
  opts: RoutePluginOptions,
): Promise<void> {
  const { deps, gateway: gw } = opts;
  const { coord, hub, config } = deps;
  const S = bodySchemas(config.limits);

  app.post(
    '/v1/elections/:group/campaign',
    { schema: { tags: ['elections'], params: groupParams, body: S.campaign } },
    async (request, reply) => {
      const { group } = request.params as GroupParams;
      const b = request.body as Static<typeof S.campaign>;
      checkJsonValue(b.value, config.limits.valueBytesMax, 'body.value');
      const waitMs = b.waitMs ?? 0;
      return gw.onLeader(request, reply, waitMs, async () => {
        const { value } = await gw.write<CampaignValue>(request, {
          type: 'election.campaign',
          group,
          candidate: b.candidate,
          ttlMs: b.ttlMs,
          value: (b.value ?? null) as JsonValue,
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
        return campaignBody(group, b.candidate, v);
      });
    },
  );

  app.post(
    '/v1/elections/:group/renew',
    { schema: { tags: ['elections'], params: groupParams, body: S.candidate } },
    async (request, reply) => {
      const { group } = request.params as GroupParams;
      const b = request.body as Static<typeof S.candidate>;
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
    { schema: { tags: ['elections'], params: groupParams, body: S.candidate } },
    async (request, reply) => {
      const { group } = request.params as GroupParams;
      const b = request.body as Static<typeof S.candidate>;
      return gw.onLeader(request, reply, 0, async () => {
        await gw.write(request, { type: 'election.resign', group, candidate: b.candidate });
        return { group, resigned: true };
      });
    },
  );

  app.post(
    '/v1/elections/:group/proclaim',
    { schema: { tags: ['elections'], params: groupParams, body: S.proclaim } },
    async (request, reply) => {
      const { group } = request.params as GroupParams;
      const b = request.body as Static<typeof S.proclaim>;
      checkJsonValue(b.value, config.limits.valueBytesMax, 'body.value');
      return gw.onLeader(request, reply, 0, async () => {
        const { value } = await gw.write<{ group?: string; leader?: unknown }>(request, {
          type: 'election.proclaim',
          group,
          candidate: b.candidate,
          fencingToken: b.fencingToken,
          value: (b.value ?? null) as JsonValue,
        });
        const leader =
          value && typeof value === 'object' && 'leader' in value
            ? value.leader
            : { candidate: b.candidate, value: b.value ?? null, fencingToken: b.fencingToken };
        return { group, leader };
      });
    },
  );

  app.get(
    '/v1/elections/:group',
    { schema: { tags: ['elections'], params: groupParams, querystring: readQuery } },
    async (request, reply) => {
      const { group } = request.params as GroupParams;
      return gw.read(request, reply, 0, () => viewBody(coord.getElection(group)));
    },
  );

  app.get(
    '/v1/elections/:group/observe',
    { schema: { tags: ['elections'], params: groupParams, querystring: observeQuery } },
    async (request, reply) => {
      const { group } = request.params as GroupParams;
      const q = request.query as Static<typeof observeQuery>;
      const timeoutMs = queryInt(q.timeoutMs, 'query.timeoutMs', 30_000, 0, config.longPollMsMax);
      const afterToken = queryOptInt(q.afterToken, 'query.afterToken', 0, Number.MAX_SAFE_INTEGER);
      const afterRevisionQ = queryOptInt(
        q.afterRevision,
        'query.afterRevision',
        0,
        Number.MAX_SAFE_INTEGER,
      );
      return gw.read(request, reply, timeoutMs, async () => {
        const afterRevision =
          afterRevisionQ ??
          (afterToken === undefined ? coord.getElection(group).revision : undefined);
        const differs = (): true | null => {
          const v = coord.getElection(group);
          if (afterRevision !== undefined && v.revision !== afterRevision) return true;
          if (afterToken !== undefined && (v.leader?.fencingToken ?? 0) !== afterToken) return true;
          return null;
        };
        const changed = await waitForChange(
          hub,
          `election:${group}`,
          differs,
          performance.now() + timeoutMs,
          request.tenure.signal,
        );
        return { ...viewBody(coord.getElection(group)), changed: changed === true };
      });
    },
  );
}

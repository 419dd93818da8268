/**
 * Holder history and operator revoke (docs/api.md, Holder history and Operator revoke) of the
 * three granted resource families: leases and semaphores (by `name`), elections (by `group`).
 * History lists grants newest first with their end reasons, in cluster time; revoke ends the
 * named grant (or every live grant of the resource) as if it had expired: its token is fenced and
 * the lease's lock-delay applies.
 */
import type { TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { GrantResourceKind, HistoryEntry, RevokeValue } from '@tenure/coord-state';
import { emptyBodyAsObject } from '../json-body.js';
import * as R from '../response-schemas.js';
import { routeSchema } from '../route-schema.js';
import {
  groupParams,
  HISTORY_LIMIT_DEFAULT,
  historyQuery,
  nameParams,
  semaphoreParams,
  type Consistency,
} from '../schemas.js';
import type { RoutePluginOptions } from './leases.js';

/** One resource family: its route prefix, path parameter and how the API names its parts. */
interface Family {
  readonly kind: GrantResourceKind;
  readonly path: string;
  readonly params: TSchema;
  /** Path parameter and answer field naming the resource. */
  readonly key: 'name' | 'group';
  /** Answer field naming who held a grant. */
  readonly who: 'holder' | 'candidate';
  readonly tag: string;
  readonly noun: string;
}

const FAMILIES: readonly Family[] = [
  {
    kind: 'lease',
    path: '/v1/leases/:name',
    params: nameParams,
    key: 'name',
    who: 'holder',
    tag: 'leases',
    noun: 'lease',
  },
  {
    kind: 'semaphore',
    path: '/v1/semaphores/:name',
    params: semaphoreParams,
    key: 'name',
    who: 'holder',
    tag: 'semaphores',
    noun: 'semaphore',
  },
  {
    kind: 'election',
    path: '/v1/elections/:group',
    params: groupParams,
    key: 'group',
    who: 'candidate',
    tag: 'elections',
    noun: 'election leadership',
  },
];

/** One history entry as the API answers it (an election's holder is its `candidate`). */
function entryBody(f: Family, e: HistoryEntry) {
  return {
    [f.who]: e.holder,
    fencingToken: e.fencingToken,
    ...(e.mode === undefined ? {} : { mode: e.mode }),
    ...(e.session === undefined ? {} : { session: e.session }),
    grantedAtMs: e.grantedAtMs,
    endedAtMs: e.endedAtMs,
    endReason: e.endReason,
  };
}

export const historyRevokeRoutes: FastifyPluginAsyncTypebox<RoutePluginOptions> = async (
  app,
  opts,
) => {
  const { deps, gateway: gw } = opts;
  const { coord } = deps;
  const { headers: H, body: B } = opts.schemas;

  for (const f of FAMILIES) {
    app.get(
      `${f.path}/history`,
      {
        schema: routeSchema(
          {
            tags: [f.tag],
            summary: `Holder history of a ${f.kind}`,
            description:
              `The last grants of the ${f.noun}, newest first (live ones included), with grant and end times in cluster time ` +
              'and the end reason (released, expired, revoked, max_hold, session_ended, resigned). A name never granted answers grants: [].',
            params: f.params,
            querystring: historyQuery,
            response: { 200: R.history },
            errors: R.READ_ERRORS,
          },
          H,
        ),
      },
      async (request, reply) => {
        const id = (request.params as Record<string, string>)[f.key]!;
        const q = request.query as { limit?: number; consistency: Consistency };
        const limit = q.limit ?? HISTORY_LIMIT_DEFAULT;
        return gw.read(request, reply, { consistency: q.consistency, extraMs: 0 }, () => ({
          [f.key]: id,
          grants: coord.history(f.kind, id, limit).map((e) => entryBody(f, e)),
        }));
      },
    );

    app.post(
      `${f.path}/revoke`,
      {
        schema: routeSchema(
          {
            tags: [f.tag],
            summary: `Revoke a ${f.kind}`,
            description:
              `Operator revoke: ends the ${f.noun} with fencingToken (or, without it, every live grant) as if it had expired: ` +
              "history reason revoked, the holder's renew and release then get 409, its token is fenced and lock-delay applies. " +
              'Answers the revoked tokens ([] when nothing was live); 409 not_holder when the given token is not live. The body is optional.',
            params: f.params,
            body: B.revoke,
            bodyOptional: true,
            response: { 200: R.revoked },
            errors: R.WRITE_ERRORS,
          },
          H,
        ),
        preValidation: emptyBodyAsObject,
      },
      async (request, reply) => {
        const id = (request.params as Record<string, string>)[f.key]!;
        const b = request.body as { fencingToken?: number; reason?: string };
        const fields = { fencingToken: b.fencingToken ?? null, reason: b.reason ?? null };
        return gw.onLeader(request, reply, 0, async () => {
          const { value } = await gw.write<RevokeValue>(
            request,
            f.kind === 'election'
              ? { type: 'election.revoke', group: id, ...fields }
              : { type: `${f.kind}.revoke`, name: id, ...fields },
          );
          return { [f.key]: id, revoked: [...value.revoked] };
        });
      },
    );
  }
};

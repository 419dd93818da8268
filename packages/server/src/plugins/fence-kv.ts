/**
 * Fencing and fenced KV routes (SPEC §3 Fencing and fenced writes): fence check, KV put/get/delete.
 */
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { FenceRef, JsonValue } from '@tenure/coord-state';
import { HttpError, invalidArgument } from '../http-error.js';
import { bodySchemas, keyParams, readQuery } from '../schemas.js';
import { checkJsonValue } from '../json-limits.js';
import type { RoutePluginOptions } from './leases.js';

type KeyParams = Static<typeof keyParams>;
interface FenceBody {
  readonly lease?: string;
  readonly election?: string;
  readonly fencingToken: number;
}

/** Exactly one of `lease` / `election` must name the resource. Throws 400 naming `field`. */
export function toFenceRef(f: FenceBody, field: string): FenceRef {
  if (f.lease !== undefined && f.election !== undefined)
    throw invalidArgument(field, 'must name either lease or election, not both');
  if (f.lease !== undefined) return { lease: f.lease, fencingToken: f.fencingToken };
  if (f.election !== undefined) return { election: f.election, fencingToken: f.fencingToken };
  throw invalidArgument(`${field}.lease`, 'or election is required');
}

export async function fenceKvRoutes(app: FastifyInstance, opts: RoutePluginOptions): Promise<void> {
  const { deps, gateway: gw } = opts;
  const { coord, config } = deps;
  const S = bodySchemas(config.limits);

  app.post(
    '/v1/fence/check',
    { schema: { tags: ['fencing'], body: S.fenceCheck, querystring: readQuery } },
    async (request, reply) => {
      const ref = toFenceRef(request.body as FenceBody, 'body');
      return gw.read(request, reply, 0, () => coord.fenceCheck(ref));
    },
  );

  app.put(
    '/v1/kv/:key',
    { schema: { tags: ['kv'], params: keyParams, body: S.kvPut } },
    async (request, reply) => {
      const { key } = request.params as KeyParams;
      const b = request.body as Static<typeof S.kvPut>;
      checkJsonValue(b.value, config.limits.valueBytesMax, 'body.value');
      const fence = b.fence === undefined ? null : toFenceRef(b.fence, 'body.fence');
      return gw.onLeader(request, reply, 0, async () => {
        const { value, index } = await gw.write<{ revision?: number }>(request, {
          type: 'kv.put',
          key,
          value: (b.value ?? null) as JsonValue,
          fence,
          ifRevision: b.ifRevision ?? null,
        });
        return { key, revision: typeof value?.revision === 'number' ? value.revision : index };
      });
    },
  );

  app.get(
    '/v1/kv/:key',
    { schema: { tags: ['kv'], params: keyParams, querystring: readQuery } },
    async (request, reply) => {
      const { key } = request.params as KeyParams;
      return gw.read(request, reply, 0, () => {
        const v = coord.getKv(key);
        if (!v) throw new HttpError('not_found', `key ${key} does not exist`);
        return { key: v.key, value: v.value, revision: v.revision };
      });
    },
  );

  app.delete(
    '/v1/kv/:key',
    {
      schema: { tags: ['kv'], params: keyParams, body: S.kvDelete },
      // The body is optional on DELETE.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
    },
    async (request, reply) => {
      const { key } = request.params as KeyParams;
      const b = request.body as Static<typeof S.kvDelete>;
      const fence = b.fence === undefined ? null : toFenceRef(b.fence, 'body.fence');
      return gw.onLeader(request, reply, 0, async () => {
        await gw.write(request, {
          type: 'kv.delete',
          key,
          fence,
          ifRevision: b.ifRevision ?? null,
        });
        return { key, deleted: true };
      });
    },
  );
}

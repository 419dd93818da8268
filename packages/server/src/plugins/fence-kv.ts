/**
 * Fencing and fenced KV routes (docs/api.md, Fencing and fenced writes): fence check, KV
 * put/get/delete.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FenceRef } from '@tenure/coord-state';
import { HttpError, invalidArgument } from '../http-error.js';
import { emptyBodyAsObject } from '../json-body.js';
import { checkJsonValue } from '../json-limits.js';
import * as R from '../response-schemas.js';
import { routeSchema } from '../route-schema.js';
import { pageOf } from '../page.js';
import { keyParams, LIST_LIMIT_DEFAULT, readQuery } from '../schemas.js';
import type { RoutePluginOptions } from './leases.js';

interface FenceBody {
  readonly lease?: string;
  readonly election?: string;
  readonly semaphore?: string;
  readonly fencingToken: number;
}

/**
 * Exactly one of `lease` / `election` / `semaphore` must name the resource. Throws 400 naming
 * `field`.
 */
export function toFenceRef(f: FenceBody, field: string): FenceRef {
  const named = [f.lease, f.election, f.semaphore].filter((n) => n !== undefined).length;
  if (named > 1)
    throw invalidArgument(field, 'must name exactly one of lease, election or semaphore');
  const { fencingToken } = f;
  if (f.lease !== undefined) return { lease: f.lease, fencingToken };
  if (f.election !== undefined) return { election: f.election, fencingToken };
  if (f.semaphore !== undefined) return { semaphore: f.semaphore, fencingToken };
  throw invalidArgument(`${field}.lease`, 'or election or semaphore is required');
}

export const fenceKvRoutes: FastifyPluginAsyncTypebox<RoutePluginOptions> = async (app, opts) => {
  const { deps, gateway: gw } = opts;
  const { coord, config } = deps;
  const { headers: H, body: B, query: Q } = opts.schemas;

  app.post(
    '/v1/fence/check',
    {
      schema: routeSchema(
        {
          tags: ['fencing'],
          summary: 'Check a fencing token',
          description:
            'Whether fencingToken is the current token of the lease, election or semaphore (exactly one of them); ' +
            'a resource never granted answers {valid: false, current: null}.',
          body: B.fenceCheck,
          querystring: readQuery,
          response: { 200: R.fenceCheck },
          errors: [400, 413, 415, 503, 504],
        },
        H,
      ),
    },
    async (request, reply) => {
      const ref = toFenceRef(request.body, 'body');
      const read = { consistency: request.query.consistency, extraMs: 0 };
      return gw.read(request, reply, read, () => coord.fenceCheck(ref));
    },
  );

  app.put(
    '/v1/kv/:key',
    {
      schema: routeSchema(
        {
          tags: ['kv'],
          summary: 'Write a key',
          description:
            'Stores a JSON value. With fence, only while that token is current (else 409 stale_token); ' +
            "with ifRevision, only if the key's revision is that (0: only if absent; else 409 revision_mismatch).",
          params: keyParams,
          body: B.kvPut,
          response: { 200: R.kvPut },
          errors: R.WRITE_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const { key } = request.params;
      const b = request.body;
      const stored = checkJsonValue(b.value, config.limits.valueBytesMax, 'body.value') ?? null;
      const fence = b.fence === undefined ? null : toFenceRef(b.fence, 'body.fence');
      return gw.onLeader(request, reply, 0, async () => {
        const { value, index } = await gw.write<{ revision?: number }>(request, {
          type: 'kv.put',
          key,
          value: stored,
          fence,
          ifRevision: b.ifRevision ?? null,
        });
        return { key, revision: typeof value?.revision === 'number' ? value.revision : index };
      });
    },
  );

  app.get(
    '/v1/kv',
    {
      schema: routeSchema(
        {
          tags: ['kv'],
          summary: 'List keys',
          description:
            'Keys and their revisions in key order (values: GET /v1/kv/{key}), optionally only those ' +
            'starting with prefix; pages of at most limit, the next one after nextCursor.',
          querystring: Q.list,
          response: { 200: R.kvList },
          errors: R.READ_ERRORS,
        },
        H,
      ),
    },
    async (request, reply) => {
      const q = request.query;
      const limit = q.limit ?? LIST_LIMIT_DEFAULT;
      return gw.read(request, reply, { consistency: q.consistency, extraMs: 0 }, () => {
        const fetched = coord.listKv(q.prefix ?? '', limit + 1, q.after ?? null);
        const page = pageOf(fetched, limit, (e) => e.key);
        const keys = page.items.map((e) => ({ key: e.key, revision: e.revision }));
        return { keys, nextCursor: page.nextCursor };
      });
    },
  );

  app.get(
    '/v1/kv/:key',
    {
      schema: routeSchema(
        {
          tags: ['kv'],
          summary: 'Read a key',
          description: 'The value and revision of the key; 404 when absent.',
          params: keyParams,
          querystring: readQuery,
          response: { 200: R.kvEntry },
          errors: [400, 404, 503, 504],
        },
        H,
      ),
    },
    async (request, reply) => {
      const { key } = request.params;
      const read = { consistency: request.query.consistency, extraMs: 0 };
      return gw.read(request, reply, read, () => {
        const v = coord.getKv(key);
        if (!v) throw new HttpError('not_found', `key ${key} does not exist`);
        return { key: v.key, value: v.value, revision: v.revision };
      });
    },
  );

  app.delete(
    '/v1/kv/:key',
    {
      schema: routeSchema(
        {
          tags: ['kv'],
          summary: 'Delete a key',
          description:
            'Deletes the key; 404 when absent. The body is optional; fence and ifRevision as for a write.',
          params: keyParams,
          body: B.kvDelete,
          bodyOptional: true,
          response: { 200: R.kvDeleted },
          errors: [...R.WRITE_ERRORS, 404],
        },
        H,
      ),
      preValidation: emptyBodyAsObject,
    },
    async (request, reply) => {
      const { key } = request.params;
      const b = request.body;
      const fence = b.fence === undefined ? null : toFenceRef(b.fence, 'body.fence');
      return gw.onLeader(request, reply, 0, async () => {
        await gw.write(request, {
          type: 'kv.delete',
          key,
          fence,
          ifRevision: b.ifRevision ?? null,
        });
        return { key, deleted: true as const };
      });
    },
  );
};

/**
 * The OpenAPI document (served at /docs/json, browsable at /docs) generated from the route
 * schemas: summaries, descriptions, headers, query and path parameters, bodies and every response
 * status with its schema (docs/api.md is the prose around it). OpenAPI 3.1, so nullable fields are
 * plain JSON-Schema type lists.
 */
import type { SwaggerOptions } from '@fastify/swagger';
import { BODY_OPTIONAL_KEY } from './route-schema.js';

/** An operation as @fastify/swagger builds it, with the parts this module adjusts. */
interface Operation {
  requestBody?: { required?: boolean };
  [key: string]: unknown;
}

/**
 * Routes whose body is optional (their schema carries BODY_OPTIONAL_KEY, which the generator copies
 * into the operation): the request body is not required. The marker itself is removed.
 */
function markOptionalBodies(paths: Record<string, Record<string, Operation>>): void {
  for (const operations of Object.values(paths)) {
    for (const op of Object.values(operations)) {
      if (op[BODY_OPTIONAL_KEY] !== true) continue;
      delete op[BODY_OPTIONAL_KEY];
      if (op.requestBody !== undefined) op.requestBody.required = false;
    }
  }
}

/** Methods that never have an effect: an Idempotency-Key means nothing there (docs/api.md). */
const READ_METHODS: ReadonlySet<string> = new Set(['get', 'head', 'options']);

/** Drop the `Idempotency-Key` header parameter from read operations (the header schema is shared). */
function dropKeyOnReads(paths: Record<string, Record<string, Operation>>): void {
  for (const operations of Object.values(paths)) {
    for (const [method, op] of Object.entries(operations)) {
      if (!READ_METHODS.has(method) || !Array.isArray(op.parameters)) continue;
      op.parameters = (op.parameters as { in?: string; name?: string }[]).filter(
        (p) => !(p.in === 'header' && p.name === 'idempotency-key'),
      );
    }
  }
}

/** Options of @fastify/swagger for the app. */
export function openapiOptions(): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tenure',
        version: '1',
        description:
          'Leases, elections and fencing tokens over Raft. Every node serves every route: a follower ' +
          'forwards writes and linearizable reads to the leader and answers with header Tenure-Leader. ' +
          'Errors are {"error": {"code", "message", ...details}}; writes may carry Idempotency-Key, every ' +
          'request Request-Timeout-Ms.',
      },
      tags: [
        { name: 'leases', description: 'Exclusive leases (locks) with fencing tokens' },
        { name: 'elections', description: 'Leader election with values and fencing tokens' },
        { name: 'sessions', description: 'Sessions: one keepalive for many grants' },
        {
          name: 'semaphores',
          description: 'Semaphores: at most N holders, a fencing token per permit',
        },
        { name: 'fencing', description: 'Fencing-token checks at the write boundary' },
        { name: 'kv', description: 'Fenced key-value writes' },
        { name: 'watch', description: 'Streaming watch of every change (Server-Sent Events)' },
        { name: 'cluster', description: 'Cluster status and leadership' },
        { name: 'operations', description: 'Health, readiness and metrics' },
        { name: 'auth', description: 'Tokens and roles (admin only; docs/security.md)' },
      ],
    },
    transformObject: (documentObject) => {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
      const doc = documentObject.openapiObject;
      if (doc.paths !== undefined) {
        markOptionalBodies(doc.paths as Record<string, Record<string, Operation>>);
        dropKeyOnReads(doc.paths as Record<string, Record<string, Operation>>);
      }
      return doc;
    },
  };
}

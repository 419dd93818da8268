/**
 * One route's complete schema from a short spec: summary, description and tags for OpenAPI, the
 * request parts, the success response, and the error statuses the route answers. Every route gets
 * the common request headers, a strict query schema (a route that takes no query parameters
 * rejects any), and the error body for each of its error statuses plus 500 (docs/api.md).
 */
import type { TSchema } from '@sinclair/typebox';
import { errorResponses, type ErrorStatus } from './response-schemas.js';
import { noQuery, type headerSchema } from './schemas.js';

type Headers = ReturnType<typeof headerSchema>;

/** What a route declares; `errors` lists its error statuses (500 is added for every route). */
export interface RouteSpec {
  readonly tags: readonly string[];
  readonly summary: string;
  readonly description: string;
  readonly params?: TSchema;
  readonly querystring?: TSchema;
  readonly body?: TSchema;
  readonly response: { readonly 200: TSchema };
  readonly errors: readonly ErrorStatus[];
  /** A body may be left out (OpenAPI says the request body is optional). */
  readonly bodyOptional?: boolean;
  /** Left out of OpenAPI. */
  readonly hide?: boolean;
}

/** Marker in a route schema that the body is optional; the OpenAPI transform reads it. */
export const BODY_OPTIONAL_KEY = 'x-tenure-body-optional';

/** The Fastify schema of `spec` with the common `headers`. */
export function routeSchema<const S extends RouteSpec>(spec: S, headers: Headers) {
  const { errors, bodyOptional, response, querystring, ...rest } = spec;
  return {
    ...rest,
    tags: [...spec.tags],
    querystring: (querystring ?? noQuery) as S['querystring'] extends TSchema
      ? S['querystring']
      : typeof noQuery,
    headers,
    response: { ...response, ...errorResponses(errors as S['errors']) },
    ...(bodyOptional === true ? { [BODY_OPTIONAL_KEY]: true } : {}),
  };
}

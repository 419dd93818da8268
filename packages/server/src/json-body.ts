/**
 * The request body parser: `application/json` only, in UTF-8, uncompressed (docs/api.md, Input
 * rules). Every refusal is an HttpError in the error shape naming `body`: 415 for another charset
 * or a content-encoding, 400 for bytes that are not UTF-8 (never replaced by U+FFFD) or text that
 * is not JSON or nests too deep (checked on the bytes first: json-depth.ts). An empty body is 400 too,
 * except on routes whose body is optional (their route schema carries BODY_OPTIONAL_KEY) or that
 * take no body (no body schema), where it is no body at all; a route that takes no body refuses
 * any field (400 naming it).
 */
import type { FastifyRequest, preValidationHookHandler } from 'fastify';
import { HttpError, invalidArgument } from './http-error.js';
import { BODY_DEPTH_MAX, nestsDeeperThan } from './json-depth.js';
import { fieldPath, findUnsafeInteger } from './json-limits.js';
import { BODY_OPTIONAL_KEY } from './route-schema.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The `charset` parameter of a content type, lower-cased, or null. */
function charsetOf(contentType: string | undefined): string | null {
  if (contentType === undefined) return null;
  for (const param of contentType.split(';').slice(1)) {
    const [k, v] = param.split('=');
    if (k?.trim().toLowerCase() === 'charset')
      return (v ?? '').trim().replace(/^"|"$/g, '').toLowerCase();
  }
  return null;
}

/** 415 unless the body is plain UTF-8: no content-encoding, charset absent or utf-8. */
function checkEncoding(request: FastifyRequest): void {
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity')
    throw new HttpError(
      'unsupported_media_type',
      `content-encoding ${encoding} is not supported: send the body uncompressed`,
      { field: 'header Content-Encoding' },
    );
  const charset = charsetOf(request.headers['content-type']);
  if (charset !== null && charset !== 'utf-8' && charset !== 'utf8')
    throw new HttpError(
      'unsupported_media_type',
      `charset ${charset} is not supported: send application/json in UTF-8`,
      { field: 'header Content-Type' },
    );
}

/**
 * Parse a JSON body (Fastify content-type parser, `parseAs: 'buffer'`). Returns the value, or
 * undefined for an empty body on a body-optional route. Throws HttpError (see the module doc).
 */
export function parseJsonBody(request: FastifyRequest, raw: Buffer): unknown {
  checkEncoding(request);
  const schema = request.routeOptions.schema ?? {};
  const takesNoBody = !('body' in schema);
  if (raw.length === 0) {
    if (takesNoBody || BODY_OPTIONAL_KEY in schema) return undefined;
    throw invalidArgument('body', 'is empty but content-type is application/json');
  }
  let text: string;
  try {
    text = UTF8.decode(raw);
  } catch {
    throw invalidArgument('body', 'is not valid UTF-8');
  }
  if (nestsDeeperThan(raw, BODY_DEPTH_MAX))
    throw invalidArgument('body', `nests deeper than ${BODY_DEPTH_MAX} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    throw invalidArgument('body', `is not valid JSON: ${(err as Error).message}`);
  }
  // Only text with a run of 16+ digits can hold an integer past 2^53 − 1: the walk is skipped
  // otherwise. Such an integer was rounded by JSON.parse; refuse it rather than store another number.
  if (LONG_DIGITS.test(text)) {
    const path = findUnsafeInteger(value);
    if (path !== null)
      throw invalidArgument(
        fieldPath('body', path),
        'is an integer beyond ±(2^53 − 1), which is not kept exactly: send it as a string',
      );
  }
  if (takesNoBody) refuseBodyFields(value);
  return value;
}

/**
 * A route that takes no body (its schema has none: keepalive, DELETE of a session, …) accepts no
 * body, an empty one, or `{}`; any field is 400 naming it (`body.ttlMs`), like unknown fields of
 * every other route (docs/api.md, Input rules).
 */
function refuseBodyFields(value: unknown): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw invalidArgument('body', 'must be empty or {}: this route takes no body');
  const field = Object.keys(value)[0];
  if (field !== undefined)
    throw invalidArgument(fieldPath('body', [field]), 'is not a field: this route takes no body');
}

/** A run of digits long enough to be an integer beyond 2^53 − 1 (9007199254740991: 16 digits). */
const LONG_DIGITS = /[0-9]{16}/;

/** preValidation of a body-optional route: no body (or `null`) is validated as `{}`. */
export const emptyBodyAsObject: preValidationHookHandler = (request, _reply, done) => {
  if (request.body === undefined || request.body === null) request.body = {};
  done();
};

/**
 * Every failure a request can meet, mapped to the error catalog through one table per source
 * (docs/api.md, Errors): the server's own HttpErrors pass as they are; schema validation failures
 * name the field; Fastify's errors by their `FST_…` code; Raft operating errors by their code
 * (the table is typed by `RaftErrorCode`, so a new Raft code does not compile until it is mapped);
 * other errors carrying a 4xx status by that status. Anything else is a bug: `toHttpError`
 * answers null and the caller reports `internal`.
 */
import type { RaftErrorCode } from '@tenure/raft';
import { HttpError, invalidArgument, noLeader, timeoutError } from './http-error.js';
import { describeValidation, type AjvErrorLike } from './validation-message.js';

/** The parts of a thrown value the tables look at. */
interface ErrorLike {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly statusCode?: unknown;
  readonly validation?: unknown;
  readonly validationContext?: unknown;
  readonly reason?: unknown;
}

function messageOf(err: ErrorLike, fallback: string): string {
  return typeof err.message === 'string' && err.message.length > 0 ? err.message : fallback;
}

/** Fastify's errors by code. */
const FASTIFY_ERRORS: Readonly<Record<string, (err: ErrorLike) => HttpError>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new HttpError('unsupported_media_type', 'the request body must be application/json'),
  FST_ERR_CTP_INVALID_TYPE: () =>
    new HttpError('unsupported_media_type', 'the request body must be application/json'),
  FST_ERR_CTP_BODY_TOO_LARGE: () =>
    new HttpError('payload_too_large', 'the request body is over the size limit'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    invalidArgument('header Content-Length', 'does not match the length of the body'),
  FST_ERR_BAD_URL: (err) => invalidArgument('url', messageOf(err, 'is malformed')),
  FST_ERR_MAX_PARAM_LENGTH: (err) =>
    invalidArgument(longParamField(messageOf(err, '')), 'must be at most 200 characters'),
};

/** Path parameter of each collection (docs/api.md): the field a too-long path segment is. */
const PARAM_OF_COLLECTION: Readonly<Record<string, string>> = {
  leases: 'name',
  elections: 'group',
  kv: 'key',
};

/**
 * The field of Fastify's "'<path>' is exceeding the max param length" (the router refuses a
 * segment long before validation could name it): `params.name` under /v1/leases, and so on.
 */
function longParamField(message: string): string {
  const collection = /^'\/v1\/([a-z]+)\//.exec(message)?.[1] ?? '';
  const param = Object.hasOwn(PARAM_OF_COLLECTION, collection)
    ? PARAM_OF_COLLECTION[collection]
    : undefined;
  return param === undefined ? 'params' : `params.${param}`;
}

/** Raft operating errors by code (packages/raft/src/errors.ts). */
const RAFT_ERRORS: Readonly<Record<RaftErrorCode, ((err: ErrorLike) => HttpError) | null>> = {
  // Nothing was applied; forwarding already happened where it could.
  not_leader: (err) => noLeader(messageOf(err, 'no leader is known; retry shortly')),
  stopped: (err) => noLeader(messageOf(err, 'this node is stopping; retry shortly')),
  timeout: () => timeoutError(),
  resource_exhausted: (err) =>
    new HttpError(
      'resource_exhausted',
      messageOf(err, 'a limit was reached'),
      {},
      {
        'retry-after': '1',
      },
    ),
  invalid_argument: (err) => new HttpError('invalid_argument', messageOf(err, 'invalid argument')),
  membership_refused: (err) => membershipRefusal(err),
  // Raised at start-up only; during a request it is a bug.
  storage_identity: null,
  removed: null,
};

/**
 * A refused membership change (packages/raft MembershipChangeError.reason) → docs/api.md error:
 * one change at a time and a lagging learner are 409s of their own; a change that no longer applies
 * is `already_exists` / `not_found`; a leader that has not committed in its term yet is `no_leader`
 * (retry shortly).
 */
const MEMBERSHIP_REFUSALS: Readonly<Record<string, (message: string) => HttpError>> = {
  reconfiguration_in_progress: (m) => new HttpError('reconfiguration_in_progress', m),
  not_caught_up: (m) => new HttpError('not_caught_up', m),
  already_member: (m) => new HttpError('already_exists', m),
  not_a_learner: (m) => new HttpError('already_exists', m),
  not_a_member: (m) => new HttpError('not_found', m),
  last_voter: (m) => new HttpError('invalid_argument', m, { field: 'params.id' }),
  leader_not_ready: (m) => noLeader(m),
};

function membershipRefusal(err: ErrorLike): HttpError {
  const message = messageOf(err, 'membership change refused');
  const reason = typeof err.reason === 'string' ? err.reason : '';
  const make = MEMBERSHIP_REFUSALS[reason];
  return make !== undefined ? make(message) : new HttpError('invalid_argument', message);
}

/** Errors known only by their 4xx HTTP status. Other 4xx statuses are invalid input. */
const STATUS_ERRORS: Readonly<Record<number, (err: ErrorLike) => HttpError>> = {
  404: (err) => new HttpError('not_found', messageOf(err, 'not found')),
  413: (err) => new HttpError('payload_too_large', messageOf(err, 'payload too large')),
  415: (err) => new HttpError('unsupported_media_type', messageOf(err, 'unsupported media type')),
};

function isRaftCode(code: unknown): code is RaftErrorCode {
  return typeof code === 'string' && Object.hasOwn(RAFT_ERRORS, code);
}

/** The HttpError to answer for `thrown`, or null when it is a bug (answered `internal`). */
export function toHttpError(thrown: unknown): HttpError | null {
  if (thrown instanceof HttpError) return thrown;
  if (typeof thrown !== 'object' || thrown === null) return null;
  const err = thrown as ErrorLike;
  if (Array.isArray(err.validation)) {
    const context = typeof err.validationContext === 'string' ? err.validationContext : 'body';
    const { field, message } = describeValidation(context, err.validation as AjvErrorLike[]);
    return new HttpError('invalid_argument', message, { field });
  }
  if (typeof err.code === 'string' && Object.hasOwn(FASTIFY_ERRORS, err.code))
    return FASTIFY_ERRORS[err.code]!(err);
  if (isRaftCode(err.code)) return RAFT_ERRORS[err.code]?.(err) ?? null;
  const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
  if (status < 400 || status >= 500) return null;
  const byStatus = STATUS_ERRORS[status];
  return byStatus !== undefined
    ? byStatus(err)
    : new HttpError('invalid_argument', messageOf(err, 'bad request'));
}

/**
 * Request schemas (TypeBox) of every route: params, query strings, bodies and headers, built from
 * coord-state's input rules and the configured limits (docs/api.md). Bodies and params are strict
 * (no coercion, no unknown fields: `"1000"` is not a number); query strings and headers arrive as
 * text, so the validator coerces them (validator.ts) and their numeric fields are integer schemas
 * with the accepted range.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  DEFAULT_LIMITS as COORD_DEFAULT_LIMITS,
  IDEMPOTENCY_KEY_CHARS_MAX,
  NAME_PREFIX_RULE,
  NAME_RULE,
  NODE_ID_RULE,
  PRINTABLE_RULE,
} from '@tenure/coord-state';
import type { LimitsConfig } from './config.js';

/** Default long-poll `timeoutMs` of watch/observe, ms. */
export const LONG_POLL_MS_DEFAULT = 30_000;
/** Default and largest `limit` of a listing. */
export const LIST_LIMIT_DEFAULT = 100;
export const LIST_LIMIT_MAX = 1000;
/** Largest `maxHoldMs` of an acquire: one year, ms. */
export const MAX_HOLD_MS_MAX = 31_536_000_000;

const strict = { additionalProperties: false } as const;

const name = (description: string) =>
  Type.String({ pattern: NAME_RULE.pattern, maxLength: NAME_RULE.charsMax, description });
const printable = (description: string) =>
  Type.String({
    pattern: PRINTABLE_RULE.pattern,
    minLength: 1,
    maxLength: PRINTABLE_RULE.charsMax,
    description,
  });
const token = (description = 'fencing token') =>
  Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });
const revision = (description: string) =>
  Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });
const jsonValue = (description: string) => Type.Unknown({ description });

/** A name prefix (NAME_PREFIX_RULE): in listings, and in role rules, where a prefix no name can have would match nothing. */
export function namePrefix(description: string) {
  return Type.String({
    pattern: NAME_PREFIX_RULE.pattern,
    maxLength: NAME_PREFIX_RULE.charsMax,
    description,
  });
}

export const nameParams = Type.Object({ name: name('lease name') }, strict);
export const groupParams = Type.Object({ group: name('election group') }, strict);
export const keyParams = Type.Object({ key: name('KV key') }, strict);
export const semaphoreParams = Type.Object({ name: name('semaphore name') }, strict);
export const sessionParams = Type.Object(
  { sessionId: name('session id (chosen by the server at create)') },
  strict,
);

/** Default and largest `limit` of a holder-history read (docs/api.md, holder history). */
export const HISTORY_LIMIT_DEFAULT = 20;
export const HISTORY_LIMIT_MAX = 100;

/** Query string of a route that takes none: every parameter is an unknown field. */
export const noQuery = Type.Object({}, strict);

const consistency = Type.Optional(
  Type.Union([Type.Literal('linearizable'), Type.Literal('stale')], {
    description:
      'linearizable (default) reads through the leader; stale answers locally with header Tenure-Stale: true',
  }),
);
export const readQuery = Type.Object({ consistency }, strict);
export type Consistency = Static<typeof readQuery>['consistency'];
/** Query of a holder-history read: how many grants, newest first. */
export const historyQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: HISTORY_LIMIT_MAX,
        default: HISTORY_LIMIT_DEFAULT,
        description: 'most grants returned, newest first',
      }),
    ),
    consistency,
  },
  strict,
);

/** Query schemas of listings and long-polls; `longPollMsMax` bounds `timeoutMs`. */
export function querySchemas(longPollMsMax: number) {
  const timeoutMs = Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: longPollMsMax,
      default: LONG_POLL_MS_DEFAULT,
      description: 'long-poll timeout, ms',
    }),
  );
  return {
    list: Type.Object(
      {
        prefix: Type.Optional(namePrefix('only names starting with this prefix')),
        after: Type.Optional(
          name('cursor: only names after this one (the nextCursor of the previous page)'),
        ),
        limit: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: LIST_LIMIT_MAX,
            default: LIST_LIMIT_DEFAULT,
            description: 'most items returned',
          }),
        ),
        consistency,
      },
      strict,
    ),
    watch: Type.Object(
      {
        afterToken: Type.Optional(
          token(
            'answer when the grant differs from this token (0 = no grant); default: the grant at arrival',
          ),
        ),
        timeoutMs,
        consistency,
      },
      strict,
    ),
    observe: Type.Object(
      {
        afterToken: Type.Optional(token('answer when the leader token differs (0 = no leader)')),
        afterRevision: Type.Optional(
          revision('answer when the revision differs; default: the revision at arrival'),
        ),
        timeoutMs,
        consistency,
      },
      strict,
    ),
  };
}

const fenceRef = Type.Object(
  {
    lease: Type.Optional(name('lease name (give exactly one of lease, election or semaphore)')),
    election: Type.Optional(
      name('election group (give exactly one of lease, election or semaphore)'),
    ),
    semaphore: Type.Optional(
      name('semaphore name (give exactly one of lease, election or semaphore)'),
    ),
    fencingToken: token('the token to check'),
  },
  strict,
);

/** Body schemas built from the configured limits. */
export function bodySchemas(limits: LimitsConfig) {
  const ttlMs = Type.Integer({
    minimum: limits.ttlMsMin,
    maximum: limits.ttlMsMax,
    description: 'time to live, ms',
  });
  // A grant lives by its own ttlMs or by a session: exactly one of them (grant-binding.ts).
  const grantTtlMs = Type.Optional(
    Type.Integer({
      minimum: limits.ttlMsMin,
      maximum: limits.ttlMsMax,
      description: 'time to live, ms (give ttlMs or session, exactly one)',
    }),
  );
  const session = Type.Optional(
    name('session id that keeps the grant alive instead of a ttl (give ttlMs or session)'),
  );
  const waitMs = Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: limits.waitMsMax,
      default: 0,
      description: 'how long to wait, ms',
    }),
  );
  const ifRevision = Type.Optional(
    revision("write only if the key's revision is this (0: only if the key is absent)"),
  );
  return {
    acquire: Type.Object(
      {
        holder: printable('holder id (unique per process incarnation)'),
        ttlMs: grantTtlMs,
        session,
        mode: Type.Optional(
          Type.Union([Type.Literal('exclusive'), Type.Literal('shared')], {
            description:
              'exclusive (default) excludes every other grant; any number of shared grants may be live at once',
          }),
        ),
        waitMs,
        lockDelayMs: Type.Optional(
          Type.Integer({
            minimum: 0,
            maximum: limits.ttlMsMax,
            default: 0,
            description: 'lock-delay after expiry, ms',
          }),
        ),
        maxHoldMs: Type.Optional(
          Type.Integer({
            minimum: limits.ttlMsMin,
            maximum: MAX_HOLD_MS_MAX,
            description: 'cap on total hold time, ms',
          }),
        ),
      },
      strict,
    ),
    leaseGrant: Type.Object({ holder: printable('holder id'), fencingToken: token() }, strict),
    campaign: Type.Object(
      {
        candidate: printable('candidate id'),
        ttlMs: grantTtlMs,
        session,
        value: Type.Optional(jsonValue('JSON value announced while leading')),
        waitMs,
      },
      strict,
    ),
    candidate: Type.Object({ candidate: printable('candidate id') }, strict),
    proclaim: Type.Object(
      {
        candidate: printable('candidate id'),
        fencingToken: token('the leader token'),
        value: jsonValue('new JSON value'),
      },
      strict,
    ),
    semaphoreAcquire: Type.Object(
      {
        holder: printable('holder id (unique per process incarnation)'),
        limit: Type.Integer({
          minimum: 1,
          maximum: COORD_DEFAULT_LIMITS.semaphoreLimitMax,
          description:
            'most live permits; set by the first acquire of an idle name, must match while it has holders or waiters',
        }),
        ttlMs: grantTtlMs,
        session,
        waitMs,
      },
      strict,
    ),
    sessionCreate: Type.Object(
      {
        ttlMs,
        name: Type.Optional(printable('free label for operators')),
      },
      strict,
    ),
    revoke: Type.Object(
      {
        fencingToken: Type.Optional(token('revoke only the grant with this token')),
        reason: Type.Optional(printable("free text for the operator's log")),
      },
      strict,
    ),
    fenceCheck: fenceRef,
    kvPut: Type.Object(
      {
        value: jsonValue('JSON value'),
        fence: Type.Optional(fenceRef),
        ifRevision,
      },
      strict,
    ),
    kvDelete: Type.Object({ fence: Type.Optional(fenceRef), ifRevision }, strict),
    transfer: Type.Object(
      {
        to: Type.Optional(
          Type.String({
            pattern: NODE_ID_RULE.pattern,
            maxLength: NODE_ID_RULE.charsMax,
            description: 'target node id (default: the most caught-up follower)',
          }),
        ),
      },
      strict,
    ),
  };
}

/**
 * Canonical spelling of every request header Tenure reads (header names arrive lower-cased). Each
 * carries one value: a repeated one is 400 (arrival-headers.ts).
 */
export const HEADER_NAMES: Readonly<Record<string, string>> = {
  'idempotency-key': 'Idempotency-Key',
  'request-timeout-ms': 'Request-Timeout-Ms',
  'last-event-id': 'Last-Event-ID',
  authorization: 'Authorization',
  'content-type': 'Content-Type',
  'tenure-forwarded': 'Tenure-Forwarded',
  'tenure-forwarded-proof': 'Tenure-Forwarded-Proof',
};

/**
 * Problems stated whole for a header, whatever rule of its schema failed: `Request-Timeout-Ms` has
 * one message for 0, a negative number and text (docs/api.md, Request headers).
 */
export const HEADER_PROBLEMS: Readonly<Record<string, string>> = {
  'request-timeout-ms': 'must be a whole number of milliseconds, at least 1',
};

/**
 * Request headers of every route: `Idempotency-Key` (1–128 characters, at-most-once effects) and
 * `Request-Timeout-Ms` (the server-side deadline, ≥ 1 ms; a value above `requestTimeoutMsMax`
 * counts as that maximum: request-context.ts). Other headers pass.
 */
export function headerSchema(requestTimeoutMsDefault: number, requestTimeoutMsMax: number) {
  return Type.Object({
    'idempotency-key': Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: IDEMPOTENCY_KEY_CHARS_MAX,
        description: `at-most-once key of a write (1-${IDEMPOTENCY_KEY_CHARS_MAX} characters): a repeat within the idempotency window answers the first status and body`,
      }),
    ),
    'request-timeout-ms': Type.Optional(
      Type.Integer({
        minimum: 1,
        default: requestTimeoutMsDefault,
        description: `server-side deadline, ms (a value above this node's maximum, ${requestTimeoutMsMax}, counts as the maximum); waits and long-polls get their waitMs/timeoutMs on top`,
      }),
    ),
  });
}

/** The header schema's type (numbers after coercion). */
export type RequestHeaders = Static<ReturnType<typeof headerSchema>>;

/** Every request schema of one app, built once from its configuration. */
export function appSchemas(config: {
  readonly limits: LimitsConfig;
  readonly longPollMsMax: number;
  readonly requestTimeoutMsDefault: number;
  readonly requestTimeoutMsMax: number;
}) {
  return {
    headers: headerSchema(config.requestTimeoutMsDefault, config.requestTimeoutMsMax),
    body: bodySchemas(config.limits),
    query: querySchemas(config.longPollMsMax),
  };
}

/** The request schemas of an app (see appSchemas). */
export type AppSchemas = ReturnType<typeof appSchemas>;

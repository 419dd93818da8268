/**
 * JSON schemas (TypeBox) of every SPEC §3 route: params, query strings and bodies. Bodies are
 * strict (no coercion, no unknown fields); query strings arrive as text, so numeric query fields
 * are digit-string patterns parsed by the routes. Ranges come from the configured limits.
 */
import { Type } from '@sinclair/typebox';
import {
  IDEMPOTENCY_KEY_CHARS_MAX,
  NAME_PREFIX_RULE,
  NAME_RULE,
  NODE_ID_RULE,
  PRINTABLE_RULE,
} from '@tenure/coord-state';
import type { LimitsConfig } from './config.js';

const DIGITS = '^[0-9]{1,15}$';

const name = (description: string) =>
  Type.String({ pattern: NAME_RULE.pattern, maxLength: NAME_RULE.charsMax, description });
const printable = (description: string) =>
  Type.String({
    pattern: PRINTABLE_RULE.pattern,
    minLength: 1,
    maxLength: PRINTABLE_RULE.charsMax,
    description,
  });
const token = Type.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'fencing token',
});
const strict = { additionalProperties: false } as const;

export const nameParams = Type.Object({ name: name('lease name') }, strict);
export const groupParams = Type.Object({ group: name('election group') }, strict);
export const keyParams = Type.Object({ key: name('KV key') }, strict);

const consistency = Type.Optional(
  Type.Union([Type.Literal('linearizable'), Type.Literal('stale')], {
    description: '`stale` answers locally (header Tenure-Stale: true)',
  }),
);
const digits = (description: string) =>
  Type.Optional(Type.String({ pattern: DIGITS, description }));

export const readQuery = Type.Object({ consistency }, strict);
export const listQuery = Type.Object(
  {
    prefix: Type.Optional(
      Type.String({
        pattern: NAME_PREFIX_RULE.pattern,
        maxLength: NAME_PREFIX_RULE.charsMax,
        description: 'name prefix',
      }),
    ),
    limit: digits('max leases returned (1..1000, default 100)'),
    consistency,
  },
  strict,
);
export const watchQuery = Type.Object(
  {
    afterToken: digits(
      'answer when the grant differs from this token (0 = no grant); default: the grant at arrival',
    ),
    timeoutMs: digits('long-poll timeout (≤ 60000, default 30000)'),
    consistency,
  },
  strict,
);
export const observeQuery = Type.Object(
  {
    afterToken: digits('answer when the leader token differs (0 = no leader)'),
    afterRevision: digits('answer when the revision differs; default: the revision at arrival'),
    timeoutMs: digits('long-poll timeout (≤ 60000, default 30000)'),
    consistency,
  },
  strict,
);

const fenceRef = Type.Object(
  {
    lease: Type.Optional(name('lease name')),
    election: Type.Optional(name('election group')),
    fencingToken: token,
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
  const waitMs = Type.Optional(
    Type.Integer({ minimum: 0, maximum: limits.waitMsMax, description: 'how long to wait, ms' }),
  );
  return {
    acquire: Type.Object(
      {
        holder: printable('holder id (unique per process incarnation)'),
        ttlMs,
        waitMs,
        lockDelayMs: Type.Optional(
          Type.Integer({
            minimum: 0,
            maximum: limits.ttlMsMax,
            description: 'lock-delay after expiry, ms',
          }),
        ),
        maxHoldMs: Type.Optional(
          Type.Integer({
            minimum: limits.ttlMsMin,
            maximum: 31_536_000_000,
            description: 'cap on total hold time, ms',
          }),
        ),
      },
      strict,
    ),
    leaseGrant: Type.Object({ holder: printable('holder id'), fencingToken: token }, strict),
    campaign: Type.Object(
      {
        candidate: printable('candidate id'),
        ttlMs,
        value: Type.Optional(Type.Unknown({ description: 'JSON value' })),
        waitMs,
      },
      strict,
    ),
    candidate: Type.Object({ candidate: printable('candidate id') }, strict),
    proclaim: Type.Object(
      {
        candidate: printable('candidate id'),
        fencingToken: token,
        value: Type.Unknown({ description: 'JSON value' }),
      },
      strict,
    ),
    fenceCheck: fenceRef,
    kvPut: Type.Object(
      {
        value: Type.Unknown({ description: 'JSON value' }),
        fence: Type.Optional(fenceRef),
        ifRevision: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
      },
      strict,
    ),
    kvDelete: Type.Object(
      {
        fence: Type.Optional(fenceRef),
        ifRevision: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
      },
      strict,
    ),
    transfer: Type.Object(
      {
        to: Type.Optional(
          Type.String({
            pattern: NODE_ID_RULE.pattern,
            maxLength: NODE_ID_RULE.charsMax,
            description: 'target node id',
          }),
        ),
      },
      strict,
    ),
  };
}

/** Request header schema shared by every route (documented; validated by the request-context hook). */
export const commonHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      maxLength: IDEMPOTENCY_KEY_CHARS_MAX,
      description: `at-most-once key (≤ ${IDEMPOTENCY_KEY_CHARS_MAX} chars)`,
    }),
  ),
  'request-timeout-ms': Type.Optional(
    Type.String({ pattern: DIGITS, description: 'server-side deadline, ms (default 5000)' }),
  ),
});

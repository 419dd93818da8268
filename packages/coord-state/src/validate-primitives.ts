/**
 * Validation of the session, semaphore and revoke commands, and of the session/mode fields of
 * lease acquire and campaign (docs/api.md sessions, semaphores, shared locks, revoke). Built on
 * the shared rules of validate.ts (names, holders, integers, the invalid_argument shape); this
 * file adds only what is new. Same contract: a StateError naming the field, or null.
 */
import type { Command } from './api.js';
import type { StateError } from './errors.js';
import type { CoordLimitsFull } from './limits.js';
import { checkField, invalidArgument, rangeError, type FieldKind } from './validate.js';

/** Field kinds added here: an optional session id, an optional lease mode, optional free text. */
type ExtraKind = 'sessionOpt' | 'modeOpt' | 'textOrNull' | 'nameOrNull';
type Spec = readonly (readonly [string, FieldKind | ExtraKind])[];

const REVOKE_NAME: Spec = [
  ['name', 'name'],
  ['fencingToken', 'intOrNull'],
  ['reason', 'textOrNull'],
];
const PERMIT_REF: Spec = [
  ['name', 'name'],
  ['holder', 'holder'],
  ['fencingToken', 'int'],
];

/** Fields of the commands this file owns (checked in order; the first error wins). */
const COMMAND_FIELDS: ReadonlyMap<string, Spec> = new Map<string, Spec>([
  [
    'session.create',
    [
      ['ttlMs', 'int'],
      ['name', 'textOrNull'],
    ],
  ],
  ['session.keepalive', [['sessionId', 'name']]],
  ['session.end', [['sessionId', 'name']]],
  [
    'semaphore.acquire',
    [
      ['name', 'name'],
      ['holder', 'holder'],
      ['limit', 'int'],
      ['ttlMs', 'intOrNull'],
      ['session', 'nameOrNull'],
      ['waitMs', 'int'],
    ],
  ],
  ['semaphore.renew', PERMIT_REF],
  ['semaphore.release', PERMIT_REF],
  [
    'semaphore.cancelWait',
    [
      ['name', 'name'],
      ['holder', 'holder'],
      ['waiterId', 'int'],
    ],
  ],
  ['semaphore.revoke', REVOKE_NAME],
  ['lease.revoke', REVOKE_NAME],
  [
    'election.revoke',
    [
      ['group', 'name'],
      ['fencingToken', 'intOrNull'],
      ['reason', 'textOrNull'],
    ],
  ],
]);

/** Optional fields this file adds to existing commands. */
const EXTRA_FIELDS: ReadonlyMap<string, Spec> = new Map<string, Spec>([
  [
    'lease.acquire',
    [
      ['session', 'sessionOpt'],
      ['mode', 'modeOpt'],
    ],
  ],
  ['election.campaign', [['session', 'sessionOpt']]],
]);

function checkExtra(
  cmd: Record<string, unknown>,
  field: string,
  kind: ExtraKind,
): StateError | null {
  const v = cmd[field];
  switch (kind) {
    case 'sessionOpt':
      return v === undefined ? null : checkExtra(cmd, field, 'nameOrNull');
    case 'nameOrNull':
      return v === null ? null : checkField(cmd, field, 'name');
    case 'modeOpt':
      return v === undefined || v === 'exclusive' || v === 'shared'
        ? null
        : invalidArgument(field, 'must be "exclusive" or "shared"');
    case 'textOrNull':
      return v === null ? null : checkField(cmd, field, 'holder');
  }
}

function checkSpec(cmd: Record<string, unknown>, spec: Spec): StateError | null {
  for (const [field, kind] of spec) {
    const err =
      kind === 'sessionOpt' || kind === 'modeOpt' || kind === 'textOrNull' || kind === 'nameOrNull'
        ? checkExtra(cmd, field, kind)
        : checkField(cmd, field, kind);
    if (err !== null) return err;
  }
  return null;
}

/**
 * Shape of the fields this file owns: for its own command types every field (then the result is
 * an error or null), for lease.acquire/election.campaign the added optional fields. Returns
 * `undefined` for a type it does not know at all.
 */
export function checkPrimitiveShape(
  type: string,
  cmd: Record<string, unknown>,
): StateError | null | undefined {
  const own = COMMAND_FIELDS.get(type);
  if (own !== undefined) return checkSpec(cmd, own);
  const extra = EXTRA_FIELDS.get(type);
  return extra === undefined ? undefined : checkSpec(cmd, extra);
}

/** True for the command types this file owns. */
export function isPrimitiveCommandType(type: string): boolean {
  return COMMAND_FIELDS.has(type);
}

/**
 * A grant takes exactly one of `ttlMs` and `session` (giving both, or neither, is
 * invalid_argument); a ttl must lie in [ttlMsMin, ttlMsMax]; a session-bound grant takes no
 * `maxHoldMs` (the session bounds it).
 */
export function checkGrantBinding(
  cmd: {
    readonly ttlMs: number | null;
    readonly session?: string | null;
    readonly maxHoldMs?: number | null;
  },
  limits: Pick<CoordLimitsFull, 'ttlMsMin' | 'ttlMsMax'>,
): StateError | null {
  const session = cmd.session ?? null;
  if (cmd.ttlMs === null && session === null)
    return invalidArgument('ttlMs', 'give ttlMs or session (exactly one)');
  if (cmd.ttlMs !== null && session !== null)
    return invalidArgument('session', 'give ttlMs or session, not both');
  if (session !== null && (cmd.maxHoldMs ?? null) !== null)
    return invalidArgument('maxHoldMs', 'not with a session (the session bounds the grant)');
  return cmd.ttlMs === null
    ? null
    : rangeError('ttlMs', cmd.ttlMs, limits.ttlMsMin, limits.ttlMsMax);
}

/**
 * Ranges of the commands this file owns, and of the new fields of lease acquire and campaign:
 * session ttlMs as a lease's; semaphore `limit` in [1, semaphoreLimitMax], `waitMs` ≤ waitMsMax;
 * a session-bound lease takes no maxHoldMs; waiterIds are positive.
 */
export function checkPrimitiveRanges(cmd: Command, limits: CoordLimitsFull): StateError | null {
  switch (cmd.type) {
    case 'lease.acquire':
    case 'election.campaign':
      return checkGrantBinding(cmd, limits);
    case 'session.create':
      return rangeError('ttlMs', cmd.ttlMs, limits.ttlMsMin, limits.ttlMsMax);
    case 'semaphore.acquire':
      return (
        rangeError('limit', cmd.limit, 1, limits.semaphoreLimitMax) ??
        checkGrantBinding(cmd, limits) ??
        rangeError('waitMs', cmd.waitMs, 0, limits.waitMsMax)
      );
    case 'semaphore.cancelWait':
      return cmd.waiterId >= 1 ? null : invalidArgument('waiterId', 'must be a positive integer');
    default:
      return null;
  }
}

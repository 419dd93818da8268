/**
 * Validation of commands as values (docs/architecture.md habit 4): `checkEnvelopeShape` checks structure and
 * types (used by `decodeEnvelope` and again by `apply`, which must not trust its input);
 * `checkCommandRanges` checks docs/api.md names and ranges against the configured limits. Both return
 * an `invalid_argument` StateError whose message and `details.field` name the field, or null.
 */
import type { Command, JsonValue } from './api.js';
import { checkAuthShape, checkPrincipalShape, isAuthCommandType } from './auth.js';
import type { StateError } from './errors.js';
import { isJsonValue, isName, isPrintableId, NAME_RULE, PRINTABLE_RULE } from './input-rules.js';
import type { CoordLimitsFull } from './limits.js';
import {
  checkPrimitiveRanges,
  checkPrimitiveShape,
  isPrimitiveCommandType,
} from './validate-primitives.js';

export { isJsonValue, isWellFormedString, JSON_DEPTH_MAX } from './input-rules.js';

/** Idempotency keys: docs/api.md, ≤ 128 characters. */
export const IDEMPOTENCY_KEY_CHARS_MAX = 128;
/** Fingerprints are server hashes; bounded so records stay small. */
export const FINGERPRINT_CHARS_MAX = 256;

/** The field kinds of the command tables (shared with validate-primitives.ts). */
export type FieldKind = 'name' | 'holder' | 'int' | 'intOrNull' | 'json' | 'fence';

const FIELDS: Readonly<Record<string, readonly (readonly [string, FieldKind])[]>> = {
  'lease.acquire': [
    ['name', 'name'],
    ['holder', 'holder'],
    ['ttlMs', 'intOrNull'],
    ['waitMs', 'int'],
    ['lockDelayMs', 'int'],
    ['maxHoldMs', 'intOrNull'],
  ],
  'lease.renew': [
    ['name', 'name'],
    ['holder', 'holder'],
    ['fencingToken', 'int'],
  ],
  'lease.release': [
    ['name', 'name'],
    ['holder', 'holder'],
    ['fencingToken', 'int'],
  ],
  'lease.cancelWait': [
    ['name', 'name'],
    ['holder', 'holder'],
    ['waiterId', 'int'],
  ],
  'election.campaign': [
    ['group', 'name'],
    ['candidate', 'holder'],
    ['ttlMs', 'intOrNull'],
    ['value', 'json'],
  ],
  'election.renew': [
    ['group', 'name'],
    ['candidate', 'holder'],
  ],
  'election.resign': [
    ['group', 'name'],
    ['candidate', 'holder'],
  ],
  'election.proclaim': [
    ['group', 'name'],
    ['candidate', 'holder'],
    ['fencingToken', 'int'],
    ['value', 'json'],
  ],
  'kv.put': [
    ['key', 'name'],
    ['value', 'json'],
    ['fence', 'fence'],
    ['ifRevision', 'intOrNull'],
  ],
  'kv.delete': [
    ['key', 'name'],
    ['fence', 'fence'],
    ['ifRevision', 'intOrNull'],
  ],
  'time.advance': [],
};

/** FIELDS as a Map: a hot lookup on every apply (objects with dotted keys are slow dictionaries). */
const FIELDS_BY_TYPE: ReadonlyMap<string, readonly (readonly [string, FieldKind])[]> = new Map(
  Object.entries(FIELDS),
);

/** An `invalid_argument` error naming `field`. */
export function invalidArgument(field: string, message: string): StateError {
  return { code: 'invalid_argument', message: `${field}: ${message}`, details: { field } };
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x) && !ArrayBuffer.isView(x);
}

function isNonNegativeInt(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
}

/** UTF-8 size of the JSON text of `value` (the size docs/api.md limits). */
export function jsonSizeBytes(value: JsonValue): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/** Checks `obj[field]` against a field kind; an invalid_argument error naming the field, or null. */
export function checkField(
  obj: Record<string, unknown>,
  field: string,
  kind: FieldKind,
): StateError | null {
  const v = obj[field];
  switch (kind) {
    case 'name':
      return isName(v) ? null : invalidArgument(field, NAME_RULE.problem);
    case 'holder':
      return isPrintableId(v) ? null : invalidArgument(field, PRINTABLE_RULE.problem);
    case 'int':
      return isNonNegativeInt(v) ? null : invalidArgument(field, 'must be a non-negative integer');
    case 'intOrNull':
      return v === null || isNonNegativeInt(v)
        ? null
        : invalidArgument(field, 'must be a non-negative integer or null');
    case 'json':
      return v !== undefined && isJsonValue(v)
        ? null
        : invalidArgument(
            field,
            'must be a JSON value (well-formed Unicode strings, no __proto__ keys)',
          );
    case 'fence':
      return v === null ? null : checkFence(v);
  }
}

function checkFence(v: unknown): StateError | null {
  if (!isRecord(v)) return invalidArgument('fence', 'must be an object or null');
  if (!isNonNegativeInt(v['fencingToken']))
    return invalidArgument('fence.fencingToken', 'must be a non-negative integer');
  const named = (['lease', 'election', 'semaphore'] as const).filter((f) => v[f] !== undefined);
  if (named.length !== 1)
    return invalidArgument('fence', 'must name exactly one of lease, election or semaphore');
  const field = named[0]!;
  const name = v[field];
  return isName(name) ? null : invalidArgument(`fence.${field}`, 'must be a valid name');
}

/** Structure and types of an envelope (v, command.type, every field, idempotency). Null if fine. */
export function checkEnvelopeShape(x: unknown): StateError | null {
  if (!isRecord(x)) return invalidArgument('envelope', 'must be an object');
  if (x['v'] !== 1) return invalidArgument('v', 'must be 1');
  const idem = x['idempotency'];
  if (idem !== null && idem !== undefined) {
    if (!isRecord(idem)) return invalidArgument('idempotency', 'must be an object or null');
    const key = idem['key'];
    if (typeof key !== 'string' || key.length < 1 || key.length > IDEMPOTENCY_KEY_CHARS_MAX)
      return invalidArgument(
        'idempotency.key',
        `must be 1–${IDEMPOTENCY_KEY_CHARS_MAX} characters`,
      );
    const fp = idem['fingerprint'];
    if (typeof fp !== 'string' || fp.length > FINGERPRINT_CHARS_MAX)
      return invalidArgument(
        'idempotency.fingerprint',
        `must be a string of ≤ ${FINGERPRINT_CHARS_MAX} characters`,
      );
  }
  const principalError = checkPrincipalShape(x['principal']);
  if (principalError !== null) return principalError;
  const cmd = x['command'];
  if (!isRecord(cmd)) return invalidArgument('command', 'must be an object');
  const type = cmd['type'];
  if (typeof type === 'string' && isAuthCommandType(type)) return checkAuthShape(cmd);
  if (typeof type === 'string' && isPrimitiveCommandType(type))
    return checkPrimitiveShape(type, cmd) ?? null;
  const fields = typeof type === 'string' ? FIELDS_BY_TYPE.get(type) : undefined;
  if (fields === undefined) return invalidArgument('command.type', 'unknown command type');
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    const err = checkField(cmd, f[0], f[1]);
    if (err !== null) return err;
  }
  return checkPrimitiveShape(type as string, cmd) ?? null;
}

/** invalid_argument naming `field` unless min ≤ value ≤ max. */
export function rangeError(
  field: string,
  value: number,
  min: number,
  max: number,
): StateError | null {
  return value < min || value > max
    ? invalidArgument(field, `must be between ${min} and ${max}`)
    : null;
}

/**
 * docs/api.md ranges of a well-shaped command: ttlMs in [ttlMsMin, ttlMsMax], waitMs ≤ waitMsMax,
 * lockDelayMs ≤ lockDelayMsMax, maxHoldMs in [ttlMsMin, maxHoldMsMax]. Sizes are checked by the
 * handlers (payload_too_large is not invalid_argument).
 */
export function checkCommandRanges(cmd: Command, limits: CoordLimitsFull): StateError | null {
  switch (cmd.type) {
    case 'lease.acquire':
      return (
        checkPrimitiveRanges(cmd, limits) ??
        rangeError('waitMs', cmd.waitMs, 0, limits.waitMsMax) ??
        rangeError('lockDelayMs', cmd.lockDelayMs, 0, limits.lockDelayMsMax) ??
        (cmd.maxHoldMs === null
          ? null
          : rangeError('maxHoldMs', cmd.maxHoldMs, limits.ttlMsMin, limits.maxHoldMsMax))
      );
    case 'lease.cancelWait':
      return cmd.waiterId >= 1 ? null : invalidArgument('waiterId', 'must be a positive integer');
    default:
      return checkPrimitiveRanges(cmd, limits);
  }
}

/**
 * Gateway checks of JSON values in bodies (KV values, election values), before anything recurses
 * over them: nesting depth (iteratively, so a 100,000-deep array cannot overflow the stack), text
 * that survives encoding unchanged (no lone UTF-16 surrogates in strings or keys: MessagePack's
 * UTF-8 would turn them into U+FFFD and the value read back would differ), no `__proto__` keys
 * (a decoder assigning it would set a prototype), and size in bytes (SPEC §3: over-size values get
 * 413 payload_too_large).
 */
import { HttpError, invalidArgument } from './http-error.js';

/** Deepest nesting the state machine accepts (coord-state's JSON_DEPTH_MAX). */
export const JSON_DEPTH_MAX = 64;

/** A lone surrogate: not well-formed Unicode (String.prototype.isWellFormed is not in the ES2023 typings). */
const LONE_SURROGATE_RE = /\p{Cs}/u;

/** Why a JSON value cannot be stored as is, with the path (from `field`) of the offending part. */
interface ValueProblem {
  readonly path: string;
  readonly problem: string;
}

/** Path of a child: `a.b` for identifier-like keys, `a["x y"]` otherwise, `a[3]` for array items. */
function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)
    ? `${path}.${key}`
    : `${path}[${JSON.stringify(key)}]`;
}

/**
 * The first problem of `value` (depth over `depthMax`, a lone surrogate in a string or key, a
 * `__proto__` key), or null. Iterative; `field` is the path prefix (e.g. `body.value`).
 */
export function findValueProblem(
  value: unknown,
  depthMax: number,
  field: string,
): ValueProblem | null {
  const stack: [unknown, number, string][] = [[value, 0, field]];
  while (stack.length > 0) {
    const [v, depth, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (LONE_SURROGATE_RE.test(v))
        return { path, problem: 'contains a lone UTF-16 surrogate (not well-formed Unicode)' };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= depthMax) return { path: field, problem: `nests deeper than ${depthMax} levels` };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], depth + 1, childPath(path, i)]);
      continue;
    }
    for (const [k, c] of Object.entries(v as Record<string, unknown>)) {
      if (k === '__proto__')
        return { path: childPath(path, k), problem: 'keys named __proto__ are not allowed' };
      if (LONE_SURROGATE_RE.test(k))
        return {
          path,
          problem: `has a key with a lone UTF-16 surrogate (not well-formed Unicode): ${JSON.stringify(k)}`,
        };
      stack.push([c, depth + 1, childPath(path, k)]);
    }
  }
  return null;
}

/** True when `value` nests arrays/objects deeper than `depthMax` levels. Iterative. */
export function jsonTooDeep(value: unknown, depthMax: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= depthMax) return true;
    const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    for (const c of children) if (c !== null && typeof c === 'object') stack.push([c, depth + 1]);
  }
  return false;
}

/**
 * Throws 400 invalid_argument (too deep, a lone surrogate, a `__proto__` key — naming the path
 * under `field`) or 413 payload_too_large (over `valueBytesMax`).
 */
export function checkJsonValue(value: unknown, valueBytesMax: number, field: string): void {
  const bad = findValueProblem(value, JSON_DEPTH_MAX, field);
  if (bad !== null) throw invalidArgument(bad.path, bad.problem);
  const bytes = Buffer.byteLength(JSON.stringify(value ?? null));
  if (bytes > valueBytesMax)
    throw new HttpError(
      'payload_too_large',
      `${field} is ${bytes} bytes; the limit is ${valueBytesMax}`,
      { field, sizeBytes: bytes, sizeBytesMax: valueBytesMax },
    );
}

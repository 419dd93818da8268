/**
 * Gateway checks of JSON values in bodies (KV values, election values), before anything recurses
 * over them: the state machine's own JSON-value rule (coord-state `findJsonValueProblem`: nesting
 * depth, well-formed Unicode, no `__proto__` keys), reported as a 400 naming the path under the
 * body field, and the size in bytes (413 payload_too_large over the limit; docs/api.md).
 */
import { findJsonValueProblem, type JsonPath, type JsonValue } from '@tenure/coord-state';
import { HttpError, invalidArgument } from './http-error.js';

/** Path of a child: `a.b` for identifier-like keys, `a["x y"]` otherwise, `a[3]` for array items. */
export function fieldPath(field: string, path: JsonPath): string {
  let out = field;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  }
  return out;
}

/**
 * Throws 400 invalid_argument (too deep, a lone surrogate, a `__proto__` key — naming the path
 * under `field`, e.g. `body.value.a[1]`) or 413 payload_too_large (over `valueBytesMax`); returns
 * the value, typed. An absent (`undefined`) value passes.
 */
export function checkJsonValue(
  value: unknown,
  valueBytesMax: number,
  field: string,
): JsonValue | undefined {
  if (value === undefined) return undefined; // an optional value that is absent (stored as null)
  const bad = findJsonValueProblem(value);
  if (bad !== null) throw invalidArgument(fieldPath(field, bad.path), bad.problem);
  const bytes = Buffer.byteLength(JSON.stringify(value ?? null));
  if (bytes > valueBytesMax)
    throw new HttpError(
      'payload_too_large',
      `${field} is ${bytes} bytes; the limit is ${valueBytesMax}`,
      { field, sizeBytes: bytes, sizeBytesMax: valueBytesMax },
    );
  return value as JsonValue; // findJsonValueProblem found nothing: it is a JSON value
}

/**
 * Path of the first integer in `x` that JSON.parse could not hold exactly (|n| > 2^53 − 1, so it
 * was rounded), or null. Iterative (no recursion on deep input); `x` is what JSON.parse returned.
 */
export function findUnsafeInteger(x: unknown): JsonPath | null {
  const stack: { value: unknown; path: JsonPath }[] = [{ value: x, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'number') {
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) return path;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i], path: [...path, i] });
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) stack.push({ value: v, path: [...path, k] });
    }
  }
  return null;
}

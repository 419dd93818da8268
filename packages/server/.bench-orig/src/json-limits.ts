/**
 * Gateway checks of JSON values in bodies (KV values, election values), before anything recurses
 * over them: nesting depth (iteratively, so a 100,000-deep array cannot overflow the stack) and
 * size in bytes (SPEC §3: over-size values get 413 payload_too_large).
 */
import { HttpError, invalidArgument } from './http-error.js';

/** Deepest nesting the state machine accepts (coord-state's JSON_DEPTH_MAX). */
export const JSON_DEPTH_MAX = 64;

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

/** Throws 400 (too deep, naming `field`) or 413 (over `valueBytesMax`). */
export function checkJsonValue(value: unknown, valueBytesMax: number, field: string): void {
  if (jsonTooDeep(value, JSON_DEPTH_MAX)) throw invalidArgument(field, `nests deeper than ${JSON_DEPTH_MAX} levels`);
  const bytes = Buffer.byteLength(JSON.stringify(value ?? null));
  if (bytes > valueBytesMax) throw new HttpError('payload_too_large', `${field} is ${bytes} bytes; the limit is ${valueBytesMax}`, { field, sizeBytes: bytes, sizeBytesMax: valueBytesMax });
}

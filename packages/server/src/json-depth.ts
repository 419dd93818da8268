/**
 * The nesting bound of a request body, checked on its bytes before JSON.parse (docs/security.md,
 * Abuse resistance): parsing `[[[[…` 100,000 deep costs hundreds of milliseconds and the walks
 * after it more, while this scan is one pass over bytes with no allocation. Values keep their own
 * finer rule (coord-state `findJsonValueProblem`, JSON_DEPTH_MAX), reported with a path; the body
 * bound leaves room above it for the envelope, so that rule still names the field.
 */
import { JSON_DEPTH_MAX } from '@tenure/coord-state';

/** Deepest nesting of arrays and objects a body may have: a value's bound plus the envelope's. */
export const BODY_DEPTH_MAX = JSON_DEPTH_MAX + 8;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * True when the JSON text in `bytes` opens more than `depthMax` arrays/objects inside each other
 * (brackets inside strings do not count). Malformed text is left to JSON.parse.
 */
export function nestsDeeperThan(bytes: Uint8Array, depthMax: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      if (++depth > depthMax) return true;
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) depth--;
  }
  return false;
}

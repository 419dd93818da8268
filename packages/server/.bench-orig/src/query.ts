/**
 * Numeric query-string fields arrive as digit strings (schemas check the pattern); these helpers
 * parse them and check ranges, throwing 400 invalid_argument naming the field.
 */
import { invalidArgument } from './http-error.js';

/** Parse an optional digit string; `def` when absent. Throws 400 outside [min, max]. */
export function queryInt(raw: string | undefined, field: string, def: number, min: number, max: number): number {
  if (raw === undefined) return def;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw invalidArgument(field, `must be an integer between ${min} and ${max}`);
  return n;
}

/** Parse an optional digit string into a number or undefined. */
export function queryOptInt(raw: string | undefined, field: string, min: number, max: number): number | undefined {
  return raw === undefined ? undefined : queryInt(raw, field, 0, min, max);
}

/**
 * Numeric query-string fields arrive as digit strings (schemas check the pattern); these helpers
 * parse them and check ranges, throwing 400 invalid_argument naming the field.
 */
import { invalidArgument } from './http-error.js';

/** Parse an optional digit string; `def` when absent. Throws 400 outside [min, max]. */
export function queryInt(
  raw: string | undefined,
  field: string,
  def: number,
  min: number,
  max: number,
): number {
  if (raw === undefined) return def;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw invalidArgument(field, `must be an integer between ${min} and ${max}`);
  return n;
}

/** Parse an optional digit string into a number or undefined. */
export function queryOptInt(
  raw: string | undefined,
  field: string,
  min: number,
  max: number,
): number | undefined {
  return raw === undefined ? undefined : queryInt(raw, field, 0, min, max);
}

/**
 * Query-string rules shared by every route (SPEC §3 strict input): a parameter given more than once
 * is 400 `query.<name> must be given once`; on a route without a query schema (all writes,
 * /v1/cluster, /healthz, ...) any parameter is 400 `query.<name> is not allowed (unknown field)`
 * — routes with a query schema reject unknown ones through it, with the same message.
 * Unknown routes (404) and the /docs UI are left alone. Throws HttpError 400 naming the parameter.
 */
export function checkQueryString(query: unknown, hasQuerySchema: boolean): void {
  if (query === null || typeof query !== 'object') return;
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
    if (Array.isArray(value)) throw invalidArgument(`query.${name}`, 'must be given once');
    if (!hasQuerySchema)
      throw invalidArgument(
        `query.${name}`,
        'is not allowed (unknown field; this route takes no query parameters)',
      );
  }
}

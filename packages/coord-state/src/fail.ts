/**
 * The one way handlers build an error result (errors are values inside the state machine,
 * docs/api.md error table): `{ok: false, error: {code, message, details?}}`.
 */
import type { CommandResult } from './api.js';
import type { StateError } from './errors.js';

/** An error result with `code`, a message naming the resource, and optional detail fields. */
export function fail(
  code: StateError['code'],
  message: string,
  details?: Record<string, unknown>,
): CommandResult<never> {
  return {
    ok: false,
    error: details === undefined ? { code, message } : { code, message, details },
  };
}

/** `resource_exhausted` naming the limit (docs/configuration.md lists the limits). */
export function exhausted(limit: string, max: number, what = ''): CommandResult<never> {
  return fail('resource_exhausted', `${limit} (${max}) reached${what}`, { limit });
}

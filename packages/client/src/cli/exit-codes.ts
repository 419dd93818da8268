/**
 * Exit codes of the `tenure` CLI: 0 ok, 1 conflict (409 family, lost lease/leadership), 2 bad usage
 * or 400-family input error, 3 unavailable (503/504/connection, or outcome unknown), 4 not found,
 * 5 anything else.
 */
import { ERROR_HTTP_STATUS } from '../contract.js';
import { isCatalogCode, TenureError } from '../errors.js';

/** Exit code constants of the CLI. */
export const EXIT = {
  ok: 0,
  conflict: 1,
  usage: 2,
  unavailable: 3,
  notFound: 4,
  other: 5,
} as const;

/** A CLI usage error (bad flag value, missing argument): exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Exit code of each HTTP status of the error catalog (docs/api.md, Errors); others are `other`. */
const EXIT_OF_STATUS: Readonly<Record<number, number>> = {
  400: EXIT.usage,
  404: EXIT.notFound,
  409: EXIT.conflict,
  413: EXIT.usage,
  415: EXIT.usage,
  503: EXIT.unavailable,
  504: EXIT.unavailable,
};

/**
 * Maps an error to the CLI exit code above: a catalog code by its HTTP status (every 409 is a
 * conflict), the client's own codes by name.
 */
export function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError || error instanceof RangeError) return EXIT.usage;
  if (!(error instanceof TenureError)) return EXIT.other;
  if (error.outcomeUnknown) return EXIT.unavailable;
  if (error.code === 'lease_lost') return EXIT.conflict;
  if (error.code === 'unavailable') return EXIT.unavailable;
  if (!isCatalogCode(error.code)) return EXIT.other;
  return EXIT_OF_STATUS[ERROR_HTTP_STATUS[error.code]] ?? EXIT.other;
}

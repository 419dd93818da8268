/**
 * Exit codes of the `tenure` CLI: 0 ok, 1 conflict (409 family, lost lease/leadership), 2 bad usage
 * or 400-family input error, 3 unavailable (503/504/connection, or outcome unknown), 4 not found,
 * 5 anything else.
 */
import { TenureError } from '../errors.js';

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

/** Maps an error to the CLI exit code above. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError || error instanceof RangeError) return EXIT.usage;
  if (!(error instanceof TenureError)) return EXIT.other;
  if (error.outcomeUnknown) return EXIT.unavailable;
  switch (error.code) {
    case 'held':
    case 'not_holder':
    case 'lease_expired':
    case 'stale_token':
    case 'revision_mismatch':
    case 'reconfiguration_in_progress':
    case 'not_caught_up':
    case 'already_exists':
    case 'in_use':
    case 'last_admin':
    case 'lease_lost':
      return EXIT.conflict;
    case 'invalid_argument':
    case 'payload_too_large':
    case 'unsupported_media_type':
      return EXIT.usage;
    case 'no_leader':
    case 'timeout':
    case 'unavailable':
      return EXIT.unavailable;
    case 'not_found':
      return EXIT.notFound;
    default:
      return EXIT.other;
  }
}

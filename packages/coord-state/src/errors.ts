/**
 * The closed catalog of stable error codes (docs/api.md Errors), shared by state machine, server and
 * client. The HTTP status for each code lives here so server and client agree. `internal` (500) is
 * the one code of a server bug that is not a failed assertion (those stop the process instead).
 */
export const ERROR_HTTP_STATUS = {
  invalid_argument: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  held: 409,
  not_holder: 409,
  lease_expired: 409,
  stale_token: 409,
  revision_mismatch: 409,
  limit_mismatch: 409,
  grant_mismatch: 409,
  reconfiguration_in_progress: 409,
  not_caught_up: 409,
  already_exists: 409,
  in_use: 409,
  last_admin: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  resource_exhausted: 429,
  no_leader: 503,
  timeout: 504,
  internal: 500,
} as const;

/** One of the stable error codes of docs/api.md. */
export type ErrorCode = keyof typeof ERROR_HTTP_STATUS;

/** Codes the replicated state machine itself can produce as command results. */
export type StateErrorCode =
  | 'invalid_argument'
  | 'forbidden'
  | 'not_found'
  | 'held'
  | 'not_holder'
  | 'lease_expired'
  | 'stale_token'
  | 'revision_mismatch'
  | 'limit_mismatch'
  | 'grant_mismatch'
  | 'already_exists'
  | 'in_use'
  | 'last_admin'
  | 'payload_too_large'
  | 'idempotency_key_reused'
  | 'resource_exhausted';

/**
 * An error as a value (never thrown by `apply`). `details` are extra JSON fields of the docs/api.md
 * error body, e.g. `{holder}` for `held`, `{lockDelayRemainingMs}` during lock-delay,
 * `{current}` for `stale_token`, `{revision}` for `revision_mismatch`.
 */
export interface StateError {
  readonly code: StateErrorCode;
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

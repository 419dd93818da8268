/**
 * The server's coded operating error: a catalog error code, its HTTP status (from the shared
 * catalog in coord-state), a message naming the field or cause, and extra JSON details.
 * The error handler renders it as `{"error": {"code", "message", ...details}}`.
 */
import { ERROR_HTTP_STATUS, type ErrorCode } from '@tenure/coord-state';

/** Thrown by routes and helpers for every non-2xx answer the server decides itself. */
export class HttpError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly details: Readonly<Record<string, unknown>>;
  /** Extra response headers, e.g. `Retry-After` for `no_leader`. */
  readonly headers: Readonly<Record<string, string>>;
  constructor(
    code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.code = code;
    this.statusCode = ERROR_HTTP_STATUS[code];
    this.details = details;
    this.headers = headers;
  }
}

/** 400 invalid_argument naming `field`. */
export function invalidArgument(field: string, problem: string): HttpError {
  return new HttpError('invalid_argument', `${field} ${problem}`, { field });
}

/** 503 no_leader with `Retry-After` (seconds). */
export function noLeader(message = 'no leader is known; retry shortly'): HttpError {
  return new HttpError('no_leader', message, {}, { 'retry-after': '1' });
}

/** 504 timeout: the outcome is unknown (docs/api.md, Deadlines). */
export function timeoutError(
  message = 'not known to be committed within the deadline; outcome unknown, retry with the same Idempotency-Key',
): HttpError {
  return new HttpError('timeout', message);
}

/** 500 internal: a bug that is not a failed assertion (those stop the process instead). */
export function internalError(): HttpError {
  return new HttpError('internal', 'internal error');
}

/** Longest message an error body carries: a message quoting a huge input is cut (with its length). */
export const ERROR_MESSAGE_CHARS_MAX = 300;

/** `message`, cut to ERROR_MESSAGE_CHARS_MAX characters (saying how long it was) when longer. */
export function boundedMessage(message: string): string {
  if (message.length <= ERROR_MESSAGE_CHARS_MAX) return message;
  return `${message.slice(0, ERROR_MESSAGE_CHARS_MAX - 40)}… (${message.length} characters)`;
}

/**
 * The JSON error body `{"error": {"code", "message", ...details}}` (docs/api.md, Errors); the
 * message is bounded (boundedMessage), so an error never echoes a huge input back.
 */
export function errorBody(
  code: ErrorCode,
  message: string,
  details: Readonly<Record<string, unknown>> = {},
): { error: Record<string, unknown> } {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(details)) if (k !== 'code' && k !== 'message') rest[k] = v;
  return { error: { code, message: boundedMessage(message), ...rest } };
}

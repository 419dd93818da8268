/**
 * Typed client errors. Every failure of a TenureClient call is a `TenureError` whose `code` is a
 * docs/api.md catalog code, or one of the client-side codes below.
 */
import { ERROR_HTTP_STATUS, type ErrorCode } from './contract.js';

/**
 * Client-side codes: `unavailable` (no node answered: connection errors, retries exhausted without an
 * HTTP answer), `aborted` (the caller's AbortSignal fired), `internal` (a 5xx or answer outside the
 * docs/api.md catalog), `lease_lost` (a handle's safe local deadline passed, docs/concepts.md), `released` (the
 * handle was released/resigned by its owner), `compacted` (a watch cannot resume: the changes after
 * its revision are no longer kept, see WatchCompactedError).
 */
export type ClientErrorCode =
  'unavailable' | 'aborted' | 'internal' | 'lease_lost' | 'released' | 'compacted';

/** Either a docs/api.md catalog code or a client-side code. */
export type TenureErrorCode = ErrorCode | ClientErrorCode;

/** Fields of a TenureError besides the message. */
export interface TenureErrorInit {
  readonly code: TenureErrorCode;
  /** HTTP status of the answer, or null when there was none. */
  readonly status?: number | null;
  /** Extra fields of the docs/api.md error body, e.g. `{holder}` for `held`. */
  readonly details?: Readonly<Record<string, unknown>>;
  /**
   * True when a mutation may have been committed even though the call failed (timeout or lost
   * connection after the request was sent, retries exhausted). Never set for reads.
   */
  readonly outcomeUnknown?: boolean;
  readonly cause?: unknown;
}

/**
 * The error type of every TenureClient call (docs/api.md Errors, §4).
 * `code`: catalog or client code; `status`: HTTP status or null; `details`: extra body fields;
 * `outcomeUnknown`: the mutation may have taken effect — never treat it as "did not happen".
 */
export class TenureError extends Error {
  readonly code: TenureErrorCode;
  readonly status: number | null;
  readonly details: Readonly<Record<string, unknown>>;
  readonly outcomeUnknown: boolean;

  constructor(message: string, init: TenureErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'TenureError';
    this.code = init.code;
    this.status = init.status ?? null;
    this.details = init.details ?? {};
    this.outcomeUnknown = init.outcomeUnknown ?? false;
  }

  /** A copy with `outcomeUnknown` set (the answer of one attempt, seen at the end of a retried call). */
  withOutcomeUnknown(outcomeUnknown: boolean): TenureError {
    if (outcomeUnknown === this.outcomeUnknown) return this;
    return new TenureError(this.message, {
      code: this.code,
      status: this.status,
      details: this.details,
      outcomeUnknown,
      cause: this.cause,
    });
  }
}

/** True for the 409 codes that mean "you no longer hold it" (docs/api.md "Details": not_holder, lease_expired). */
export function isLossCode(code: TenureErrorCode): boolean {
  return code === 'not_holder' || code === 'lease_expired' || code === 'not_found';
}

/** True if `code` is one of the docs/api.md catalog codes. */
export function isCatalogCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(ERROR_HTTP_STATUS, code);
}

/**
 * Builds a TenureError from an HTTP error answer `{"error": {code, message, ...details}}` (docs/api.md).
 * An answer outside the catalog becomes `internal` (5xx) or the code implied by its status.
 */
export function errorFromResponse(status: number, body: unknown): TenureError {
  const err =
    typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  if (typeof err === 'object' && err !== null) {
    const { code, message, ...details } = err as Record<string, unknown>;
    if (isCatalogCode(code)) {
      return new TenureError(typeof message === 'string' ? message : code, {
        code,
        status,
        details,
      });
    }
  }
  return new TenureError(`unexpected HTTP ${status} answer`, {
    code: codeForStatus(status),
    status,
    details: { body },
  });
}

/**
 * Builds a TenureError from an error body with no HTTP status of its own (a watch stream's
 * `event: error`, docs/api.md): the status is the one its catalog code maps to (500 outside it).
 */
export function errorFromBody(body: unknown): TenureError {
  const code =
    typeof body === 'object' && body !== null
      ? ((body as { error?: { code?: unknown } }).error?.code ?? null)
      : null;
  return errorFromResponse(isCatalogCode(code) ? ERROR_HTTP_STATUS[code] : 500, body);
}

function codeForStatus(status: number): TenureErrorCode {
  for (const [code, s] of Object.entries(ERROR_HTTP_STATUS)) {
    // 409 has several codes; a bare 409 without a catalog body is not one we can name.
    if (s === status && status !== 409 && isCatalogCode(code)) return code;
  }
  return 'internal';
}

/**
 * Thrown by `FenceGuard.check` when a fencing token is lower than the highest already seen for its
 * resource (docs/concepts.md write-boundary contract): the writer's grant has been superseded.
 */
export class StaleTokenError extends Error {
  readonly resource: string;
  readonly fencingToken: number;
  readonly highestFencingToken: number;

  constructor(resource: string, fencingToken: number, highestFencingToken: number) {
    super(
      `stale fencing token ${fencingToken} for ${resource}: highest seen is ${highestFencingToken}`,
    );
    this.name = 'StaleTokenError';
    this.resource = resource;
    this.fencingToken = fencingToken;
    this.highestFencingToken = highestFencingToken;
  }
}

/**
 * How a grant asked for over HTTP stays alive (docs/api.md, Sessions): by its own `ttlMs` or by a
 * `session`, exactly one of them. The rule is the state machine's (`checkGrantBinding`); this
 * module only answers it before anything is proposed, as a 400 naming the body field.
 */
import { checkGrantBinding, type CoordLimitsFull } from '@tenure/coord-state';
import { HttpError } from './http-error.js';

/** The binding fields of an acquire or campaign body. */
export interface BindingBody {
  readonly ttlMs?: number;
  readonly session?: string;
  /** Leases only; not allowed with a session. */
  readonly maxHoldMs?: number | null;
}

/** What the command carries: the ttl or null, the session or null (exactly one non-null). */
export interface GrantBinding {
  readonly ttlMs: number | null;
  readonly session: string | null;
}

/**
 * The binding of `body`, or a 400 `invalid_argument` naming `body.ttlMs` (neither given),
 * `body.session` (both given) or `body.maxHoldMs` (with a session). Ranges are the schema's; `limits` only satisfies the shared rule.
 */
export function grantBinding(
  body: BindingBody,
  limits: Pick<CoordLimitsFull, 'ttlMsMin' | 'ttlMsMax'>,
): GrantBinding {
  const binding = { ttlMs: body.ttlMs ?? null, session: body.session ?? null };
  const err = checkGrantBinding({ ...binding, maxHoldMs: body.maxHoldMs ?? null }, limits);
  if (err !== null) {
    const field = `body.${String(err.details?.['field'] ?? 'ttlMs')}`;
    throw new HttpError('invalid_argument', `body.${err.message}`, { field });
  }
  return binding;
}

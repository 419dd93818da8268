/**
 * Server `invalid_argument` errors name request fields (`body.ttlMs`); the CLI user typed flags
 * (`--ttl`). This module maps one to the other so an error names what the user can change.
 */
import { TenureError } from '../errors.js';

/**
 * Request fields (as named in the server's `invalid_argument` answers, docs/api.md) and the CLI flag
 * or argument that sets each. `value` is per command (`--value` for elect, `VALUE` for kv put).
 */
const FIELD_FLAGS: Readonly<Record<string, string>> = {
  ttlMs: '--ttl',
  waitMs: '--wait',
  lockDelayMs: '--lock-delay',
  maxHoldMs: '--max-hold',
  holder: '--holder',
  candidate: '--candidate',
  fencingToken: '--token',
  lease: '--fence-lease',
  election: '--fence-election',
  session: '--session',
  sessionId: 'SESSION_ID',
  mode: '--shared',
  reason: '--reason',
  ifRevision: '--if-revision',
  prefix: '--prefix',
  limit: '--limit',
  name: 'NAME',
  group: 'GROUP',
  key: 'KEY',
  'Request-Timeout-Ms': '--timeout',
};

/**
 * Rewrites a server `invalid_argument` error (field `body.ttlMs`, `ttlMs`, `params.name`,
 * `header Request-Timeout-Ms`, from `details.field` or the start of the message) so that its message
 * names the CLI flag first: `--ttl: ttlMs must be between 100 and 3600000`. The flag is also put in
 * `details.flag`. Other errors, and fields no flag sets, are returned unchanged.
 */
export function withFlagName(error: unknown, valueFlag = 'VALUE'): unknown {
  if (!(error instanceof TenureError) || error.code !== 'invalid_argument') return error;
  const detailField = error.details['field'];
  const field =
    typeof detailField === 'string'
      ? detailField
      : /^((?:body\.|query\.|params\.|header )?[A-Za-z][\w.-]*)/.exec(error.message)?.[1];
  if (field === undefined) return error;
  const path = field.replace(/^(?:body\.|query\.|params\.|header )/, '');
  const leaf = path.split('.').at(-1) ?? path;
  const flag = leaf === 'value' ? valueFlag : FIELD_FLAGS[leaf];
  if (flag === undefined) return error;
  const rest = error.message.startsWith(field)
    ? `${path}${error.message.slice(field.length).replace(/^:/, '')}`
    : error.message;
  return new TenureError(`${flag}: ${rest}`, {
    code: error.code,
    status: error.status,
    details: { ...error.details, flag },
    outcomeUnknown: error.outcomeUnknown,
    cause: error,
  });
}

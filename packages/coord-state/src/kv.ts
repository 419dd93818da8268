/**
 * Fenced KV writes (SPEC §3 Fencing and fenced writes, §5 write boundary): a write with a fence
 * commits only if the named resource's current live grant carries exactly that token at the
 * entry's cluster time; `ifRevision` (0 = only if absent) guards against lost updates.
 */
import type { CommandResult, FenceRef, FencingToken, KvCommand } from './api.js';
import type { Core } from './core.js';
import type { StateError } from './errors.js';
import { kvKey, type ApplyContext } from './model.js';
import type { KvDeleteValue, KvPutValue } from './results.js';
import { jsonSizeBytes } from './validate.js';

type Put = Extract<KvCommand, { type: 'kv.put' }>;
type Delete = Extract<KvCommand, { type: 'kv.delete' }>;

function fail(
  code: StateError['code'],
  message: string,
  details?: Record<string, unknown>,
): CommandResult<never> {
  return {
    ok: false,
    error: details === undefined ? { code, message } : { code, message, details },
  };
}

/** Token of the resource's current live grant (lease holder or election leader), or null. */
export function currentToken(core: Core, ref: FenceRef): FencingToken | null {
  if ('lease' in ref) return core.leases.get(ref.lease)?.grant?.fencingToken ?? null;
  const rec = core.elections.get(ref.election);
  return rec?.leader != null ? rec.leaderToken : null;
}

function checkFence(core: Core, fence: FenceRef | null): CommandResult<never> | null {
  if (fence === null) return null;
  const current = currentToken(core, fence);
  if (current === fence.fencingToken) return null;
  const what = 'lease' in fence ? `lease ${fence.lease}` : `election ${fence.election}`;
  return fail(
    'stale_token',
    `fencingToken ${fence.fencingToken} is not the current grant of ${what}`,
    { current },
  );
}

/** SPEC §3 `PUT /v1/kv/{key}`: payload_too_large, stale_token, revision_mismatch, resource_exhausted, or {key, revision}. */
export function kvPut(core: Core, ctx: ApplyContext, cmd: Put): CommandResult<KvPutValue> {
  const sizeBytes = jsonSizeBytes(cmd.value);
  if (sizeBytes > core.limits.valueBytesMax)
    return fail(
      'payload_too_large',
      `value: ${sizeBytes} bytes is over the ${core.limits.valueBytesMax}-byte limit`,
      { field: 'value', sizeBytes, sizeBytesMax: core.limits.valueBytesMax },
    );
  const stale = checkFence(core, cmd.fence);
  if (stale) return stale;
  const rec = core.kv.get(cmd.key);
  if (cmd.ifRevision !== null && (rec?.revision ?? 0) !== cmd.ifRevision) {
    return fail(
      'revision_mismatch',
      `key ${cmd.key} is at revision ${rec?.revision ?? 0}, not ${cmd.ifRevision}`,
      { revision: rec?.revision ?? 0 },
    );
  }
  if (rec === undefined) {
    if (core.kv.size >= core.limits.keysMax)
      return fail('resource_exhausted', `keysMax (${core.limits.keysMax}) reached`, {
        limit: 'keysMax',
      });
    core.kv.set(cmd.key, { value: cmd.value, revision: ctx.index });
  } else {
    rec.value = cmd.value;
    rec.revision = ctx.index;
  }
  ctx.changed.add(kvKey(cmd.key));
  return { ok: true, value: { key: cmd.key, revision: ctx.index } };
}

/**
 * SPEC §3 `DELETE /v1/kv/{key}`: stale_token first; a missing key is not_found whatever
 * `ifRevision` says; `ifRevision` other than the key's revision (including 0) → revision_mismatch.
 */
export function kvDelete(core: Core, ctx: ApplyContext, cmd: Delete): CommandResult<KvDeleteValue> {
  const stale = checkFence(core, cmd.fence);
  if (stale) return stale;
  const rec = core.kv.get(cmd.key);
  if (rec === undefined) return fail('not_found', `key ${cmd.key} not found`);
  if (cmd.ifRevision !== null && rec.revision !== cmd.ifRevision) {
    return fail(
      'revision_mismatch',
      `key ${cmd.key} is at revision ${rec.revision}, not ${cmd.ifRevision}`,
      { revision: rec.revision },
    );
  }
  core.kv.delete(cmd.key);
  ctx.changed.add(kvKey(cmd.key));
  return { ok: true, value: { key: cmd.key, deleted: true } };
}

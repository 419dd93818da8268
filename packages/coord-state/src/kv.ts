/**
 * Fenced KV writes (docs/api.md Fencing and fenced writes, §5 write boundary): a write with a fence
 * commits only if the named resource's current live grant carries exactly that token at the
 * entry's cluster time; `ifRevision` (0 = only if absent) guards against lost updates.
 */
import type { CommandResult, FenceRef, FencingToken, KvCommand } from './api.js';
import type { Core } from './core.js';
import type { StateError } from './errors.js';
import { liveGrants } from './leases.js';
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

/**
 * The fence check (docs/api.md fencing): `valid` iff `ref.fencingToken` is a live grant of the
 * resource — the exclusive lease grant or one of its live shared grants (a shared grant is live
 * only while no exclusive grant came after it), a live permit of the semaphore, or the election's
 * current leadership. `current` is the newest live token (null when nothing is live).
 */
export function fenceState(
  core: Core,
  ref: FenceRef,
): { valid: boolean; current: FencingToken | null } {
  let tokens: FencingToken[];
  if ('lease' in ref) {
    const rec = core.leases.get(ref.lease);
    tokens = rec === undefined ? [] : liveGrants(rec).map((g) => g.fencingToken);
  } else if ('semaphore' in ref) {
    const rec = core.semaphores.get(ref.semaphore);
    tokens = rec === undefined ? [] : [...rec.permits.values()].map((p) => p.fencingToken);
  } else {
    const rec = core.elections.get(ref.election);
    tokens = rec?.leader != null ? [rec.leaderToken] : [];
  }
  const current = tokens.length === 0 ? null : Math.max(...tokens);
  return { valid: tokens.includes(ref.fencingToken), current };
}

function checkFence(core: Core, fence: FenceRef | null): CommandResult<never> | null {
  if (fence === null) return null;
  const { valid, current } = fenceState(core, fence);
  if (valid) return null;
  const what =
    'lease' in fence
      ? `lease ${fence.lease}`
      : 'semaphore' in fence
        ? `semaphore ${fence.semaphore}`
        : `election ${fence.election}`;
  return fail(
    'stale_token',
    `fencingToken ${fence.fencingToken} is not the current grant of ${what}`,
    { current },
  );
}

/** docs/api.md `PUT /v1/kv/{key}`: payload_too_large, stale_token, revision_mismatch, resource_exhausted, or {key, revision}. */
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
  ctx.events.push({ kind: 'kv', name: cmd.key, type: 'put', value: cmd.value });
  return { ok: true, value: { key: cmd.key, revision: ctx.index } };
}

/**
 * docs/api.md `DELETE /v1/kv/{key}`: stale_token first; a missing key is not_found whatever
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
  ctx.events.push({ kind: 'kv', name: cmd.key, type: 'deleted' });
  return { ok: true, value: { key: cmd.key, deleted: true } };
}

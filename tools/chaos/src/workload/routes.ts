/**
 * Maps a docs/api.md request (method + path) to the history's op kind and route arguments, so requests
 * made by other code (the client library, through a recording fetch) are recorded like the
 * workload's own. Unknown routes give null (not recorded).
 */
import type { JsonObject, OpKind } from '../types.js';

/** `{kind, args}` for `method path` (path without query, segments URL-decoded), else null. */
export function routeOf(method: string, path: string): { kind: OpKind; args: JsonObject } | null {
  const [v1, res, name, action, ...rest] = path
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  if (v1 !== 'v1' || res === undefined || rest.length > 0) return null;
  if (res === 'leases' && name !== undefined) {
    if (method === 'GET' && action === undefined) return { kind: 'lease.get', args: { name } };
    if (method === 'GET' && action === 'history') return { kind: 'lease.history', args: { name } };
    if (
      method === 'POST' &&
      (action === 'acquire' || action === 'renew' || action === 'release' || action === 'revoke')
    )
      return { kind: `lease.${action}`, args: { name } };
  }
  if (res === 'elections' && name !== undefined) {
    if (method === 'GET' && action === undefined)
      return { kind: 'election.get', args: { group: name } };
    if (
      method === 'POST' &&
      (action === 'campaign' || action === 'renew' || action === 'resign' || action === 'proclaim')
    )
      return { kind: `election.${action}`, args: { group: name } };
  }
  if (res === 'kv' && name !== undefined && action === undefined) {
    if (method === 'GET') return { kind: 'kv.get', args: { key: name } };
    if (method === 'PUT') return { kind: 'kv.put', args: { key: name } };
    if (method === 'DELETE') return { kind: 'kv.delete', args: { key: name } };
  }
  if (res === 'fence' && name === 'check' && action === undefined && method === 'POST')
    return { kind: 'fence.check', args: {} };
  return null;
}

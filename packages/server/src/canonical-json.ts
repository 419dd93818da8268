/**
 * Canonical JSON (object keys sorted, no whitespace) and the idempotency fingerprint
 * (docs/api.md Idempotency keys: same key + same route + equal JSON body = same request).
 */
import { createHash } from 'node:crypto';

/** JSON text with object keys sorted recursively; `undefined` fields are dropped like JSON.stringify. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** 32 hex chars of sha256 over method, route pattern, params and canonical body. */
export function requestFingerprint(
  method: string,
  route: string,
  params: unknown,
  body: unknown,
): string {
  const h = createHash('sha256');
  h.update(`${method} ${route} ${canonicalJson(params ?? {})} ${canonicalJson(body ?? {})}`);
  return h.digest('hex').slice(0, 32);
}

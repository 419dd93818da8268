/**
 * Small helpers for the black-box SPEC conformance tests in test/src/spec: raw HTTP requests with
 * full control of headers and body bytes, timing, polling, and shape checks (exact key sets,
 * JSON integers, the docs/api.md error shape).
 */
import type { LocalCluster } from '../support/cluster.js';

/** One HTTP answer: status, lower-case headers, raw text, parsed JSON (undefined when not JSON), elapsed ms. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test answers are read field by field
  readonly body: any;
  readonly elapsedMs: number;
}

/** Options of `raw`: body as bytes/text (sent verbatim) or a value (sent as JSON), headers, timeout. */
export interface RawOptions {
  readonly method?: string;
  /** Sent verbatim (no content-type added). */
  readonly rawBody?: string | Buffer;
  /** Sent as JSON with `content-type: application/json`. */
  readonly json?: unknown;
  readonly headers?: Record<string, string>;
  readonly timeoutMs?: number;
}

/** Send one request to node `id` of `c`. Never throws on HTTP status; throws on network errors. */
export async function raw(
  c: LocalCluster,
  id: string,
  path: string,
  o: RawOptions = {},
): Promise<RawAnswer> {
  const headers: Record<string, string> = {
    ...(o.json !== undefined ? { 'content-type': 'application/json' } : {}),
    ...(o.headers ?? {}),
  };
  const body = o.rawBody ?? (o.json !== undefined ? JSON.stringify(o.json) : undefined);
  const t0 = performance.now();
  const r = await fetch(`${c.node(id).url}${path}`, {
    method: o.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(o.timeoutMs ?? 30_000),
  });
  const text = await r.text();
  const elapsedMs = performance.now() - t0;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const h: Record<string, string> = {};
  r.headers.forEach((v, k) => (h[k] = v));
  return { status: r.status, headers: h, text, body: parsed, elapsedMs };
}

/** Sorted own keys of an object (for exact shape checks). */
export function keysOf(v: unknown): string[] {
  return v !== null && typeof v === 'object' ? Object.keys(v).sort() : [];
}

/** True when `v` is a JSON integer (a number with no fraction). */
export function isInt(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v);
}

/** True when `body` is the docs/api.md error shape `{error: {code, message, ...}}` with `code`. */
export function isError(body: unknown, code: string): boolean {
  const e = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  return typeof e === 'object' && e !== null && e.code === code && typeof e.message === 'string';
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Poll `cond` every 50 ms until it is true or `timeoutMs` passes; resolves with the last result. */
export async function until(cond: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  while (performance.now() < end) {
    if (await cond()) return true;
    await sleep(50);
  }
  return cond();
}

/** A name unique within this process (lease/group/key names must be [A-Za-z0-9._:-]). */
let seq = 0;
export function uniq(prefix: string): string {
  seq += 1;
  return `${prefix}-${process.pid}-${seq}`;
}

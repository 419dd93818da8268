/**
 * A `fetch` wrapper that records every docs/api.md request made through it as a history op — so the
 * client library (`TenureClient({fetch})`), including its hidden retries, background renewals and
 * clean-up releases, leaves a complete history. Args follow the workload's convention (route
 * parameters + JSON body + `idempotencyKey` from the header); outcomes follow types.ts (2xx ok,
 * 4xx/503 fail, anything else — or a rejected fetch — unknown). Non-API requests pass unrecorded.
 */
import type { ClusterHandle, HistorySink, Json, JsonObject, NodeId, OpOutcome } from '../types.js';
import { routeOf } from './routes.js';

function headerOf(init: RequestInit | undefined, name: string): string | null {
  if (init?.headers === undefined) return null;
  return new Headers(init.headers).get(name);
}

/** Makes the wrapper. `process` names the logical client in the history. */
export function recordingFetch(
  history: HistorySink,
  cluster: ClusterHandle,
  process: string,
  inner: typeof fetch = fetch,
): typeof fetch {
  const nodeOf = (url: URL): NodeId | null =>
    cluster.endpoints().find((e) => new URL(e.httpUrl).host === url.host)?.id ?? null;
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (
      init?.method ?? (input instanceof Request ? input.method : 'GET')
    ).toUpperCase();
    const route = routeOf(method, url.pathname);
    if (route === null) return inner(input, init);
    let body: JsonObject = {};
    if (typeof init?.body === 'string' && init.body !== '') {
      try {
        body = JSON.parse(init.body) as JsonObject;
      } catch {
        body = {};
      }
    }
    const key = headerOf(init, 'idempotency-key');
    const stale = url.searchParams.get('consistency') === 'stale';
    const args: JsonObject = {
      ...route.args,
      ...body,
      ...(stale ? { consistency: 'stale' } : {}),
      ...(key === null ? {} : { idempotencyKey: key }),
      lib: true,
    };
    const node = nodeOf(url);
    const opId = history.invoke(process, route.kind, args, node);
    let response: Response;
    try {
      response = await inner(input, init);
    } catch (err) {
      history.complete(opId, { status: 'unknown', reason: `fetch: ${String(err)}` }, node);
      throw err;
    }
    let json: Json = null;
    try {
      json = (await response.clone().json()) as Json;
    } catch {
      json = null;
    }
    const s = response.status;
    const code = (json as { error?: { code?: unknown } } | null)?.error?.code;
    const outcome: OpOutcome =
      s >= 200 && s < 300
        ? { status: 'ok', httpStatus: s, value: json }
        : (s >= 400 && s < 500) || s === 503
          ? {
              status: 'fail',
              httpStatus: s,
              code: typeof code === 'string' ? code : `http_${s}`,
              value: json,
            }
          : { status: 'unknown', reason: `http ${s}` };
    history.complete(opId, outcome, node);
    return response;
  };
}

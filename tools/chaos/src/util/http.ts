/**
 * A small HTTP/JSON client for the harness (leader sampler, scenarios) built on node:http so a
 * request can be sent from a chosen local address (`localAddress`, the netns backend's client
 * addresses). No keep-alive: every request opens its own connection, so a partition or pause
 * shows up on the next request rather than on a pooled socket.
 */
import { request } from 'node:http';

/** A finished HTTP exchange. `json` is the parsed body, or undefined when it was not JSON. */
export interface HttpReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
  readonly json: unknown;
}

/** Options of `httpJson`. */
export interface HttpOptions {
  /** Whole-exchange deadline in ms (connect + response). Required: nothing in chaos may hang. */
  readonly timeoutMs: number;
  readonly localAddress?: string | null;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

/** Thrown when no HTTP response arrived: `kind` is `timeout`, `aborted` or `network` (e.g. ECONNREFUSED). */
export class HttpTransportError extends Error {
  constructor(
    readonly kind: 'timeout' | 'aborted' | 'network',
    message: string,
  ) {
    super(message);
    this.name = 'HttpTransportError';
  }
}

/**
 * Sends `method url` with an optional JSON body. Resolves with any status (4xx/5xx included);
 * rejects with `HttpTransportError` when no response arrived within `timeoutMs`.
 */
export function httpJson(
  method: string,
  url: string,
  body: unknown,
  options: HttpOptions,
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    let settled = false;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const req = request(
      url,
      {
        method,
        headers,
        agent: false,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error) =>
          finish(() => reject(new HttpTransportError('network', error.message))),
        );
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text.length > 0 ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          finish(() => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json }));
        });
      },
    );
    const timer = setTimeout(() => {
      finish(() =>
        reject(
          new HttpTransportError(
            'timeout',
            `${method} ${url}: no answer within ${options.timeoutMs} ms`,
          ),
        ),
      );
      req.destroy();
    }, options.timeoutMs);
    const onAbort = (): void => {
      finish(() => reject(new HttpTransportError('aborted', `${method} ${url}: aborted`)));
      req.destroy();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (error) =>
      finish(() => reject(new HttpTransportError('network', `${method} ${url}: ${error.message}`))),
    );
    req.end(payload);
  });
}

/**
 * The one HTTP/1.1 client of the comparison: an undici Pool with kept-alive connections (one per
 * concurrent client), used alike for Tenure and for etcd's JSON gateway so that neither side gets
 * a cheaper client.
 */
import { Pool } from 'undici';

/** Status and parsed JSON body of one answer (null when the body is empty or not JSON). */
export interface JsonAnswer {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- bench answers are read field by field
  readonly body: any;
}

/** Kept-alive JSON client of one origin (`http://host:port`). */
export class JsonHttp {
  readonly #pool: Pool;

  /** `connections`: sockets kept open (≥ the number of concurrent callers). */
  constructor(origin: string, connections: number) {
    this.#pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  }

  /** One request; `body` undefined sends none. `timeoutMs` bounds the wait for the answer headers. */
  async call(
    method: string,
    path: string,
    body?: unknown,
    timeoutMs = 300_000,
  ): Promise<JsonAnswer> {
    const answer = await this.#pool.request({
      method: method as 'GET' | 'POST' | 'DELETE',
      path,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    const text = await answer.body.text();
    let parsed: unknown = null;
    try {
      parsed = text.length === 0 ? null : JSON.parse(text);
    } catch {
      parsed = null;
    }
    return { status: answer.statusCode, body: parsed };
  }

  /** Closes every connection. */
  async close(): Promise<void> {
    await this.#pool.destroy();
  }
}

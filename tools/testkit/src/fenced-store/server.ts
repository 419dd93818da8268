/**
 * The fenced store as a small HTTP service outside the cluster (node:http), for the chaos workload:
 *
 * - `POST /write` `{resource, fencingToken, writer, payload}` → 200 `{accepted: true, seq, highestToken}`,
 *   or 409 `{error: {code: 'stale_token', message, highestToken}, accepted: false, seq}` when the
 *   token is lower than the highest accepted for the resource; 400 `invalid_argument` naming the field.
 * - `GET /read?resource=R` → 200 `FencedResourceState`.
 * - `GET /log` → 200 `{records: FencedWriteRecord[]}`.
 *
 * Every record is also appended to a JSON-lines log (`logPath`) when given — the file the fencing
 * checker reads (`fenced-store.jsonl` in the run folder).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createWriteStream, type WriteStream } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { FencedStore, validateWrite, type FencedWriteRecord } from './store.js';

/** File name of the store's log inside a run folder. */
export const FENCED_STORE_LOG = 'fenced-store.jsonl';

/** Request bodies larger than this get 413 (bytes). */
export const fencedStoreBodyBytesMax = 65_536;

/** A running store. `close` stops listening and flushes the log; it never rejects. */
export interface FencedStoreServer {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  readonly store: FencedStore;
  close(): Promise<void>;
}

/** Options: where to listen (default 127.0.0.1, port 0 = any free port), the clock, the log file. */
export interface FencedStoreOptions {
  readonly host?: string;
  readonly port?: number;
  readonly now: () => number;
  readonly logPath?: string;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > fencedStoreBodyBytesMax) {
        resolve(null);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function handle(
  store: FencedStore,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://fs');
  if (req.method === 'POST' && url.pathname === '/write') {
    const text = await readBody(req);
    if (text === null) {
      send(res, 413, {
        error: { code: 'payload_too_large', message: `body over ${fencedStoreBodyBytesMax} bytes` },
      });
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      send(res, 400, { error: { code: 'invalid_argument', message: 'body is not JSON' } });
      return;
    }
    const w = validateWrite(body);
    if ('error' in w) {
      send(res, 400, { error: { code: 'invalid_argument', message: w.error } });
      return;
    }
    const rec = store.write(w);
    if (rec.accepted)
      send(res, 200, { accepted: true, seq: rec.seq, highestToken: rec.fencingToken });
    else
      send(res, 409, {
        error: {
          code: 'stale_token',
          message: `token ${rec.fencingToken} < highest ${rec.highestBefore}`,
          highestToken: rec.highestBefore,
        },
        accepted: false,
        seq: rec.seq,
      });
    return;
  }
  if (req.method === 'GET' && url.pathname === '/read') {
    const r = url.searchParams.get('resource');
    if (r === null || r === '') {
      send(res, 400, {
        error: { code: 'invalid_argument', message: 'query resource is required' },
      });
      return;
    }
    send(res, 200, store.read(r));
    return;
  }
  if (req.method === 'GET' && url.pathname === '/log') {
    send(res, 200, { records: store.records() });
    return;
  }
  send(res, 404, {
    error: { code: 'not_found', message: `no route ${req.method} ${url.pathname}` },
  });
}

/** Starts the store; resolves once listening. Rejects when the port cannot be bound. */
export async function startFencedStore(options: FencedStoreOptions): Promise<FencedStoreServer> {
  let log: WriteStream | null = null;
  if (options.logPath !== undefined) log = createWriteStream(options.logPath, { flags: 'a' });
  const store = new FencedStore(
    options.now,
    log === null
      ? null
      : (r: FencedWriteRecord) => {
          log!.write(`${JSON.stringify(r)}\n`);
        },
  );
  const server = createServer((req, res) => {
    handle(store, req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { error: { code: 'internal', message: String(err) } });
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    store,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (log !== null) await new Promise<void>((resolve) => log!.end(() => resolve()));
    },
  };
}

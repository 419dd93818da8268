// Test doubles for the client tests: a scriptable node:http server standing in for a Tenure node,
// and a manual monotonic clock with timers.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock, TimerHandle } from '../../src/clock.js';

export interface FakeRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

/** A reply: JSON answer, or hold the request open ('hang'), or drop the connection ('destroy'). */
export type FakeReply = { status?: number; body?: unknown; headers?: Record<string, string> } | 'hang' | 'destroy';

export type FakeHandler = (req: FakeRequest, server: FakeServer) => FakeReply | Promise<FakeReply>;

/** A node:http server on port 0 answering with `handler`; records every request. */
export class FakeServer {
  readonly requests: FakeRequest[] = [];
  handler: FakeHandler;
  /** Sent as `Tenure-Leader` on every answer when not null. */
  leaderId: string | null = null;
  readonly #server: Server;
  readonly #waiters: { predicate: () => boolean; resolve: () => void }[] = [];
  readonly #hanging: ServerResponse[] = [];

  private constructor(handler: FakeHandler) {
    this.handler = handler;
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://x');
        const text = Buffer.concat(chunks).toString('utf8');
        const request: FakeRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body: text.length > 0 ? JSON.parse(text) : undefined };
        this.requests.push(request);
        void Promise.resolve(this.handler(request, this)).then((reply) => {
          this.#notify();
          if (reply === 'hang') {
            this.#hanging.push(res);
            return;
          }
          if (reply === 'destroy') {
            req.socket.destroy();
            return;
          }
          const headers: Record<string, string> = { 'content-type': 'application/json', ...(this.leaderId === null ? {} : { 'tenure-leader': this.leaderId }), ...reply.headers };
          res.writeHead(reply.status ?? 200, headers);
          res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
        });
      });
    });
  }

  static async start(handler: FakeHandler = () => ({ status: 404, body: { error: { code: 'not_found', message: 'no route' } } })): Promise<FakeServer> {
    const server = new FakeServer(handler);
    server.#server.listen(0, '127.0.0.1');
    await once(server.#server, 'listening');
    return server;
  }

  get url(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  get hostPort(): string {
    return this.url.slice('http://'.length);
  }

  /** Requests to `path` (optionally with method). */
  to(path: string, method?: string): FakeRequest[] {
    return this.requests.filter((r) => r.path === path && (method === undefined || r.method === method));
  }

  /** Resolves once `predicate()` holds (checked after every request is handled). */
  waitFor(predicate: () => boolean): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ predicate, resolve }));
  }

  /** Resolves once `count` requests to `path` have been handled. */
  waitForRequests(path: string, count: number): Promise<void> {
    return this.waitFor(() => this.to(path).length >= count);
  }

  /** Ends every hanging request with a JSON answer. */
  releaseHanging(status: number, body: unknown): void {
    for (const res of this.#hanging.splice(0)) {
      if (!res.writableEnded) {
        res.writeHead(status, { 'content-type': 'application/json', ...(this.leaderId === null ? {} : { 'tenure-leader': this.leaderId }) });
        res.end(JSON.stringify(body));
      }
    }
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #notify(): void {
    for (let i = this.#waiters.length - 1; i >= 0; i--) {
      const waiter = this.#waiters[i]!;
      if (waiter.predicate()) {
        this.#waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }
}

/** SPEC §3 error body. */
export function errorBody(code: string, message = code, details: Record<string, unknown> = {}): { error: Record<string, unknown> } {
  return { error: { code, message, ...details } };
}

/** A manual clock: time moves only through `advance`/`jump`; `advance` fires due timers in order. */
export class FakeClock implements Clock {
  #nowMs = 0;
  #nextId = 1;
  readonly #timers = new Map<number, { atMs: number; fn: () => void }>();

  now(): number {
    return this.#nowMs;
  }

  setTimer(fn: () => void, delayMs: number): TimerHandle {
    const id = this.#nextId++;
    this.#timers.set(id, { atMs: this.#nowMs + Math.max(0, delayMs), fn });
    return id;
  }

  clearTimer(handle: TimerHandle): void {
    this.#timers.delete(handle as number);
  }

  /** Moves time forward by `ms`, firing each due timer at its time, in order. */
  advance(ms: number): void {
    const endMs = this.#nowMs + ms;
    for (;;) {
      let next: [number, { atMs: number; fn: () => void }] | undefined;
      for (const entry of this.#timers) if (entry[1].atMs <= endMs && (next === undefined || entry[1].atMs < next[1].atMs)) next = entry;
      if (next === undefined) break;
      this.#timers.delete(next[0]);
      this.#nowMs = Math.max(this.#nowMs, next[1].atMs);
      next[1].fn();
    }
    this.#nowMs = endMs;
  }

  /** Moves time forward without firing timers (an event-loop stall: timers are late). */
  jump(ms: number): void {
    this.#nowMs += ms;
  }

  /** Pending timer count. */
  get pending(): number {
    return this.#timers.size;
  }
}

/** A sleep that records requested delays and resolves at once (still honours abort). */
export function recordingSleep(): { sleep: (ms: number, signal?: AbortSignal) => Promise<void>; delaysMs: number[] } {
  const delaysMs: number[] = [];
  return {
    delaysMs,
    sleep: (ms, signal) => {
      delaysMs.push(ms);
      if (signal?.aborted) return Promise.reject(signal.reason);
      return new Promise((resolve) => setImmediate(resolve));
    },
  };
}

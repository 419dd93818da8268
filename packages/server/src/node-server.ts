/**
 * The node:http (or node:https) server the API is served on, with the abuse bounds of
 * docs/security.md set where node:http enforces them: headers and whole requests must arrive in
 * time (slowloris; the answer is 408 in the error shape, client-error.ts), a header size limit
 * (431), idle keep-alive and silent-socket timeouts, and the connection bounds of
 * connection-guard.ts. Fastify gets it through its `serverFactory` option.
 */
import { createServer, type Server as HttpServer, type ServerOptions } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { FastifyServerFactory } from 'fastify';
import type { ServerConfig } from './config.js';
import type { ConnectionGuard } from './connection-guard.js';
import { boundHeadBytes } from './header-bytes.js';
import { httpsServerOptions } from './https-server.js';

/** How often node:http looks for requests past their header or receive deadline, ms. */
export function checkingIntervalMs(headersTimeoutMs: number): number {
  return Math.min(1000, Math.max(25, Math.floor(headersTimeoutMs / 4)));
}

/** The node:http server options of the API for `config`. */
export function httpServerOptions(config: ServerConfig): ServerOptions {
  return {
    headersTimeout: config.headersTimeoutMs,
    requestTimeout: config.receiveTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    connectionsCheckingInterval: checkingIntervalMs(config.headersTimeoutMs),
    maxHeaderSize: config.headerBytesMax,
  };
}

/**
 * Fastify's "listening at" log line with the scheme the node really serves: Fastify writes
 * `http://` for any server it did not create itself, HTTPS included.
 */
export function listeningText(config: Pick<ServerConfig, 'tls'>): (address: string) => string {
  const https = config.tls !== undefined && config.tls !== null;
  return (address) =>
    `Server listening at ${https ? address.replace(/^http:\/\//, 'https://') : address}`;
}

/** A Fastify server factory: HTTP, or HTTPS with `config.tls`; `guard` bounds its connections. */
export function nodeServerFactory(
  config: ServerConfig,
  guard: ConnectionGuard,
): FastifyServerFactory {
  return (fastifyHandler) => {
    const options = httpServerOptions(config);
    const handler = boundHeadBytes(config.headerBytesMax, fastifyHandler);
    const server =
      config.tls === undefined || config.tls === null
        ? createServer(options, handler)
        : // node:https's Server has the node:http Server surface Fastify uses (listen, close,
          // closeAllConnections, timeouts); Fastify's type only names the http one.
          (createHttpsServer(
            { ...options, ...httpsServerOptions(config.tls, config.headersTimeoutMs) },
            handler,
          ) as unknown as HttpServer);
    // node:http reads these from the options in recent versions; set them too so every version
    // (and node:https) holds them.
    server.headersTimeout = config.headersTimeoutMs;
    server.requestTimeout = config.receiveTimeoutMs;
    server.keepAliveTimeout = config.keepAliveTimeoutMs;
    server.setTimeout(config.socketIdleTimeoutMs);
    // Every header reaches header-bytes.ts's count (their number is bounded by maxHeaderSize:
    // each has at least one byte of name).
    server.maxHeadersCount = 0;
    guard.attach(server);
    return server;
  };
}

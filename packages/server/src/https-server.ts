/**
 * The HTTPS side of a node (docs/security.md): the server options of the API when `--tls-cert` is
 * set, and the node:https server Fastify serves on. With `--tls-client-ca`, a client without a
 * certificate signed by that CA is refused at the TLS handshake, before any request is read.
 */
import type { Server as HttpServer } from 'node:http';
import { createServer, type ServerOptions } from 'node:https';
import type { FastifyServerFactory } from 'fastify';
import { TLS_MIN_VERSION } from '@tenure/raft';
import type { HttpTlsConfig } from './config.js';

/** node:https options of the API server for `tls`. */
export function httpsServerOptions(tls: HttpTlsConfig): ServerOptions {
  return {
    cert: tls.cert,
    key: tls.key,
    minVersion: TLS_MIN_VERSION,
    ...(tls.clientCa === null
      ? {}
      : { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true }),
  };
}

/**
 * A Fastify server factory serving HTTPS with `tls`; `keepAliveTimeoutMs` and `requestTimeoutMs`
 * are set on the server as Fastify sets them on its own HTTP server.
 */
export function httpsServerFactory(
  tls: HttpTlsConfig,
  o: { readonly keepAliveTimeoutMs: number; readonly requestTimeoutMs: number },
): FastifyServerFactory {
  return (handler) => {
    const server = createServer(httpsServerOptions(tls), handler);
    server.keepAliveTimeout = o.keepAliveTimeoutMs;
    server.requestTimeout = o.requestTimeoutMs;
    // node:https's Server has the node:http Server surface Fastify uses (listen, close,
    // closeAllConnections, timeouts); Fastify's type only names the http one.
    return server as unknown as HttpServer;
  };
}

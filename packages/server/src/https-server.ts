/**
 * The HTTPS side of a node (docs/security.md): the server options of the API when `--tls-cert` is
 * set (node-server.ts creates the server). With `--tls-client-ca`, a client without a
 * certificate signed by that CA is refused at the TLS handshake, before any request is read.
 */
import type { ServerOptions } from 'node:https';
import { TLS_MIN_VERSION } from '@tenure/raft';
import type { HttpTlsConfig } from './config.js';

/**
 * node:https options of the API server for `tls`. A connection must finish the TLS handshake
 * within `handshakeTimeoutMs` (the node passes `--headers-timeout-ms`, the deadline of a
 * connection's first bytes; Node's own default is 120 s) or it is closed.
 */
export function httpsServerOptions(tls: HttpTlsConfig, handshakeTimeoutMs: number): ServerOptions {
  return {
    cert: tls.cert,
    key: tls.key,
    minVersion: TLS_MIN_VERSION,
    handshakeTimeout: handshakeTimeoutMs,
    ...(tls.clientCa === null
      ? {}
      : { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true }),
  };
}

/**
 * The HTTPS side of a node (docs/security.md): the server options of the API when `--tls-cert` is
 * set (node-server.ts creates the server). With `--tls-client-ca`, a client without a
 * certificate signed by that CA is refused at the TLS handshake, before any request is read.
 */
import type { ServerOptions } from 'node:https';
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

/**
 * The TLS settings of a node (docs/security.md): which files go together, read once at start and
 * checked (readable, PEM, key matching its certificate) so that a mistake stops the node with an
 * error naming the setting instead of failing on the first connection.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import type { PeerTlsOptions } from '@tenure/raft';
import type { ReadSettings } from './read-settings.js';
import type { SERVER_SETTINGS } from './server-settings.js';

type Read = ReadSettings<typeof SERVER_SETTINGS>;
type FileKey =
  'tlsCert' | 'tlsKey' | 'tlsClientCa' | 'tlsCa' | 'peerTlsCert' | 'peerTlsKey' | 'peerTlsCa';

/** HTTPS on the API (`--tls-*`), the PEM bytes of the files. */
export interface HttpTlsConfig {
  /** Certificate chain served to clients (and shown to the leader when forwarding with mTLS). */
  readonly cert: Buffer;
  readonly key: Buffer;
  /** When set, clients must present a certificate signed by one of these CAs. */
  readonly clientCa: Buffer | null;
  /** CAs trusted when forwarding to the leader; null = Node's built-in roots. */
  readonly ca: Buffer | null;
}

/** The TLS part of ServerConfig; null = plain HTTP / plain TCP. */
export interface TlsConfig {
  readonly tls: HttpTlsConfig | null;
  readonly peerTls: PeerTlsOptions | null;
}

/**
 * Reads and checks the TLS files named by the settings (paths relative to `cwd`). Throws
 * ConfigError naming the setting: a file that cannot be read or is not PEM, a key that does not
 * match its certificate, a setting given without the ones it needs.
 */
export function loadTlsConfig(r: Read, cwd: string): TlsConfig {
  const v = r.values;
  const read = (key: FileKey, kind: 'CERTIFICATE' | 'PRIVATE KEY'): Buffer | null =>
    readPem(r, key, kind, cwd);
  requireWith(r, 'tlsKey', 'tlsCert');
  requireWith(r, 'tlsCert', 'tlsKey');
  requireWith(r, 'tlsClientCa', 'tlsCert');
  requireWith(r, 'tlsCa', 'tlsCert');
  for (const [key, needs] of [
    ['peerTlsCert', 'peerTlsKey'],
    ['peerTlsCert', 'peerTlsCa'],
    ['peerTlsKey', 'peerTlsCert'],
    ['peerTlsCa', 'peerTlsCert'],
  ] as const)
    requireWith(r, key, needs);
  let tls: HttpTlsConfig | null = null;
  if (v.tlsCert !== undefined) {
    const cert = read('tlsCert', 'CERTIFICATE')!;
    const key = read('tlsKey', 'PRIVATE KEY')!;
    checkPair(r, cert, key, 'tlsKey', 'tlsCert');
    tls = {
      cert,
      key,
      clientCa: read('tlsClientCa', 'CERTIFICATE'),
      ca: read('tlsCa', 'CERTIFICATE'),
    };
  }
  let peerTls: PeerTlsOptions | null = null;
  if (v.peerTlsCert !== undefined) {
    const cert = read('peerTlsCert', 'CERTIFICATE')!;
    const key = read('peerTlsKey', 'PRIVATE KEY')!;
    checkPair(r, cert, key, 'peerTlsKey', 'peerTlsCert');
    // One deadline for a connection's first bytes, HTTP or peer: `--headers-timeout-ms`.
    const handshakeTimeoutMs = v.headersTimeoutMs;
    peerTls = { cert, key, ca: read('peerTlsCa', 'CERTIFICATE')!, handshakeTimeoutMs };
  }
  return { tls, peerTls };
}

/** `key` given without `needs` → ConfigError on `key`. */
function requireWith(r: Read, key: FileKey, needs: FileKey): void {
  if (r.values[key] !== undefined && r.values[needs] === undefined)
    throw r.error(key, `needs ${r.sourceOf(needs)} as well`);
}

/** The file's bytes, or null when the setting is absent; ConfigError when unreadable or not PEM. */
function readPem(r: Read, key: FileKey, kind: string, cwd: string): Buffer | null {
  const path = r.values[key];
  if (path === undefined) return null;
  let bytes: Buffer;
  try {
    bytes = readFileSync(resolve(cwd, path));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw r.error(key, `cannot read "${path}" (${code})`);
  }
  const text = bytes.toString('latin1');
  if (!new RegExp(`-----BEGIN [A-Z ]*${kind}-----`).test(text))
    throw r.error(key, `"${path}" holds no PEM ${kind}`);
  return bytes;
}

/** A certificate the TLS library refuses, or a key that is not the certificate's → ConfigError. */
function checkPair(r: Read, cert: Buffer, key: Buffer, keyKey: FileKey, certKey: FileKey): void {
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw r.error(keyKey, `unusable with ${r.sourceOf(certKey)}: ${reason}`);
  }
}

/**
 * Mutual TLS on the Raft links (docs/security.md "Peer links"): both ends present a certificate
 * signed by the configured CA and verify the other's. The acceptor refuses a dialer without one
 * (no certificate, another CA, plain TCP) during the TLS handshake, so no byte of such a
 * connection ever reaches the frame decoder. TLS 1.2 is the lowest version accepted.
 */
import type { ConnectionOptions, TlsOptions } from 'node:tls';

/** PEM text or bytes, or a list of them (a CA bundle during a rotation). */
export type Pem = string | Buffer | readonly (string | Buffer)[];

/** The certificate material of one node's peer links. */
export interface PeerTlsOptions {
  /** This node's certificate chain (PEM), presented to peers in both directions. */
  readonly cert: Pem;
  /** Its private key (PEM). */
  readonly key: string | Buffer;
  /** CA certificate(s) a peer's certificate must chain to (PEM). */
  readonly ca: Pem;
  /**
   * An inbound connection must finish the TLS handshake within this, ms, or it is dropped (and
   * counted as refused). Default PEER_TLS_HANDSHAKE_TIMEOUT_MS_DEFAULT; Node's own is 120 s, which
   * lets sockets that never finish a handshake pile up. The server passes `--headers-timeout-ms`.
   */
  readonly handshakeTimeoutMs?: number;
}

/** Handshake deadline of an inbound peer connection when none is given, ms (docs/security.md). */
export const PEER_TLS_HANDSHAKE_TIMEOUT_MS_DEFAULT = 10_000;

/** Lowest TLS version accepted on any Tenure socket. */
export const TLS_MIN_VERSION = 'TLSv1.2';

/** Options of the acceptor: a client certificate is required and verified against `ca`. */
export function peerServerOptions(o: PeerTlsOptions): TlsOptions {
  return {
    cert: pemOption(o.cert),
    key: o.key,
    ca: pemOption(o.ca),
    requestCert: true,
    rejectUnauthorized: true,
    minVersion: TLS_MIN_VERSION,
    handshakeTimeout: o.handshakeTimeoutMs ?? PEER_TLS_HANDSHAKE_TIMEOUT_MS_DEFAULT,
  };
}

/**
 * Options of the dialer: presents our certificate, verifies the peer's against `ca` and its name
 * against the host of the peer's Raft address (a DNS name or IP in the certificate's SAN).
 */
export function peerClientOptions(o: PeerTlsOptions, host: string): ConnectionOptions {
  return {
    cert: pemOption(o.cert),
    key: o.key,
    ca: pemOption(o.ca),
    rejectUnauthorized: true,
    minVersion: TLS_MIN_VERSION,
    // SNI takes host names only; an IP address is still checked against the IP SANs.
    ...(isIpAddress(host) ? {} : { servername: host }),
  };
}

function pemOption(p: Pem): string | Buffer | (string | Buffer)[] {
  return typeof p === 'string' || Buffer.isBuffer(p) ? p : [...p];
}

function isIpAddress(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}

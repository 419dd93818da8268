/**
 * TLS options of the client (docs/security.md "Clients"): the CA that signed the cluster's
 * certificates and, when the cluster requires client certificates, this client's certificate and
 * key. They configure an undici Agent whose connections verify the server against `ca`; the
 * client's fetch goes through it.
 */
import { Agent, fetch as undiciFetch } from 'undici';

/** PEM text or bytes, or a list of them (a CA bundle). */
export type Pem = string | Buffer | readonly (string | Buffer)[];

/** TLS settings of TenureClient; each is optional (none: Node's built-in roots, no client cert). */
export interface ClientTlsOptions {
  /** CA certificate(s) the servers' certificates must chain to (replaces Node's built-in roots). */
  readonly ca?: Pem;
  /** Client certificate chain, for clusters started with `--tls-client-ca`. Needs `key`. */
  readonly cert?: Pem;
  /** Private key of `cert`. */
  readonly key?: string | Buffer;
}

/** A fetch that uses the TLS settings, and how to close its connections. */
export interface TlsFetch {
  readonly fetch: typeof fetch;
  close(): Promise<void>;
}

/** Lowest TLS version the client accepts (as the server). */
const TLS_MIN_VERSION = 'TLSv1.2';

/**
 * The fetch for `o`, or null when `o` sets nothing (the global fetch is used then). Throws
 * TypeError when only one of `cert` and `key` is given.
 */
export function tlsFetch(o: ClientTlsOptions): TlsFetch | null {
  if (o.ca === undefined && o.cert === undefined && o.key === undefined) return null;
  if ((o.cert === undefined) !== (o.key === undefined))
    throw new TypeError('cert and key: give both or neither');
  const agent = new Agent({
    connect: {
      minVersion: TLS_MIN_VERSION,
      ...(o.ca === undefined ? {} : { ca: pemOption(o.ca) }),
      ...(o.cert === undefined ? {} : { cert: pemOption(o.cert) }),
      ...(o.key === undefined ? {} : { key: o.key }),
    },
  });
  const fetchWithAgent = (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
    undiciFetch(
      input as Parameters<typeof undiciFetch>[0],
      { ...init, dispatcher: agent } as Parameters<typeof undiciFetch>[1],
    ) as unknown as Promise<Response>;
  return { fetch: fetchWithAgent as typeof fetch, close: () => agent.close() };
}

/** Error codes of a failed certificate check, with what the user should do about each. */
const TLS_TRUST_CODES: Readonly<Record<string, string>> = {
  SELF_SIGNED_CERT_IN_CHAIN: 'untrusted CA',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'untrusted CA',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'untrusted CA',
  UNABLE_TO_GET_ISSUER_CERT: 'untrusted CA',
  CERT_SIGNATURE_FAILURE: 'bad signature',
  CERT_HAS_EXPIRED: 'expired certificate',
  CERT_NOT_YET_VALID: 'certificate not yet valid',
  ERR_TLS_CERT_ALTNAME_INVALID: 'certificate not valid for this host',
};

/**
 * A hint for a connection error code that is a TLS trust failure (the server's certificate was
 * refused), or null for any other code.
 */
export function tlsTrustHint(code: string | undefined): string | null {
  const what = code === undefined ? undefined : TLS_TRUST_CODES[code];
  if (what === undefined) return null;
  return `the server's TLS certificate was refused (${what}): give the cluster's CA certificate (client option \`ca\`, CLI --ca or TENURE_CA)`;
}

function pemOption(p: Pem): string | Buffer | (string | Buffer)[] {
  return typeof p === 'string' || Buffer.isBuffer(p) ? p : [...p];
}

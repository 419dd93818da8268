/**
 * The CLI's TLS flags (docs/security.md "Clients"): `--ca`, `--cert`, `--key`, each a path to a
 * PEM file, or the environment variables TENURE_CA, TENURE_CERT, TENURE_KEY (the flag wins).
 */
import { readFileSync } from 'node:fs';
import type { ClientTlsOptions } from '../tls.js';
import { UsageError } from './exit-codes.js';

/** The TLS global flags as commander gives them. */
export interface TlsFlags {
  ca?: string;
  cert?: string;
  key?: string;
}

/** Flag → environment variable. */
const TLS_ENV: Readonly<Record<keyof TlsFlags, string>> = {
  ca: 'TENURE_CA',
  cert: 'TENURE_CERT',
  key: 'TENURE_KEY',
};

/**
 * The client TLS options from the flags or environment: each file's contents. Throws UsageError
 * naming the flag (or env var) when a file cannot be read or only one of cert and key is given.
 */
export function tlsOptionsFrom(
  flags: TlsFlags,
  env: Readonly<Record<string, string | undefined>>,
): ClientTlsOptions {
  const out: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {};
  for (const name of ['ca', 'cert', 'key'] as const) {
    const fromFlag = flags[name];
    const path = fromFlag ?? env[TLS_ENV[name]];
    if (path === undefined || path === '') continue;
    const source = fromFlag === undefined ? TLS_ENV[name] : `--${name}`;
    try {
      out[name] = readFileSync(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new UsageError(`${source}: cannot read "${path}" (${code})`);
    }
  }
  if ((out.cert === undefined) !== (out.key === undefined))
    throw new UsageError('--cert and --key: give both or neither (env TENURE_CERT, TENURE_KEY)');
  return out;
}

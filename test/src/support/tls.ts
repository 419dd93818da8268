/**
 * Test support for TLS clusters: certificate files per node (from @tenure/server's certificate
 * helper), the `tenure-server` flags that use them, and a fetch trusting given CAs for the harness.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { createCa, issueNodeCert, type KeyAndCert } from '@tenure/server';

/** One node's certificate and key files. */
export interface NodeCertFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

/** A CA and the files of the certificates it issued, under one directory. */
export class TestCa {
  readonly ca: KeyAndCert;
  readonly caFile: string;
  readonly #dir: string;

  constructor(dir: string, name: string) {
    mkdirSync(dir, { recursive: true });
    this.#dir = dir;
    this.ca = createCa(name);
    this.caFile = join(dir, 'ca.pem');
    writeFileSync(this.caFile, this.ca.certPem);
  }

  /** Issues a certificate for `id` valid for 127.0.0.1 and writes `<id>.pem` / `<id>-key.pem`. */
  issue(id: string): NodeCertFiles & { readonly pem: KeyAndCert } {
    const c = issueNodeCert(this.ca, { commonName: id, hosts: ['127.0.0.1', 'localhost'] });
    const certFile = join(this.#dir, `${id}.pem`);
    const keyFile = join(this.#dir, `${id}-key.pem`);
    writeFileSync(certFile, c.certPem);
    writeFileSync(keyFile, c.keyPem);
    return { certFile, keyFile, pem: c };
  }
}

/** Writes the concatenation of CA files (a trust bundle) to `path`; returns `path`. */
export function writeBundle(path: string, caPems: readonly string[]): string {
  writeFileSync(path, caPems.join(''));
  return path;
}

/** Flags for HTTPS and peer mutual TLS with one certificate and one CA (bundle) file. */
export function tlsArgs(
  files: NodeCertFiles,
  caFile: string,
  o: { readonly clientCa?: boolean } = {},
): string[] {
  return [
    '--tls-cert',
    files.certFile,
    '--tls-key',
    files.keyFile,
    '--tls-ca',
    caFile,
    ...(o.clientCa === true ? ['--tls-client-ca', caFile] : []),
    '--peer-tls-cert',
    files.certFile,
    '--peer-tls-key',
    files.keyFile,
    '--peer-tls-ca',
    caFile,
  ];
}

/** A fetch trusting `caPems` (and presenting `client`, if given), for the harness's requests. */
export function fetchTrusting(caPems: readonly string[], client?: KeyAndCert): typeof fetch {
  const agent = new Agent({
    connect: {
      ca: [...caPems],
      ...(client === undefined ? {} : { cert: client.certPem, key: client.keyPem }),
    },
  });
  return ((input: string, init?: RequestInit) =>
    undiciFetch(input, { ...init, dispatcher: agent } as never)) as unknown as typeof fetch;
}

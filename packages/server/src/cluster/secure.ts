/**
 * `npm start -- --secure` (docs/security.md "A local secure cluster"): a CA and node certificates
 * under `<data-dir>/tls/` (made on the first secure start, reused after), TLS on the HTTP API and
 * mutual TLS on the peer links of every node, and the auth part behind secureAuthArgs.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { writeClusterCertificates, writeSecret } from './certificates.js';
import type { LaunchPlan } from './launch-plan.js';

/** What the launcher adds to a secure launch. */
export interface SecureLaunch {
  /** `<data-dir>/tls/ca.pem`: what clients trust (`--ca`, TENURE_CA, `ca`). */
  readonly caFile: string;
  /** Extra tenure-server flags of node `id` (its certificate files, the CA). */
  argsOf(id: string): string[];
  /** Extra environment of every node process (the auth part). */
  readonly env: Readonly<Record<string, string>>;
  /** A fetch trusting the CA, for the launcher's own probes. */
  readonly fetch: typeof fetch;
  /** Lines to print once the cluster is up. */
  readonly notes: readonly string[];
}

/**
 * Prepares a secure launch of plan `p`: certificates valid for the plan's host, 127.0.0.1 and
 * localhost (generated when `<data-dir>/tls/ca.pem` or a node's files are missing), and the auth
 * part. `log` prints a launcher line.
 */
export function prepareSecureLaunch(p: LaunchPlan, log: (line: string) => void): SecureLaunch {
  const dir = join(p.dataDir, 'tls');
  const caFile = join(dir, 'ca.pem');
  const certOf = (id: string): string => join(dir, `${id}.pem`);
  const keyOf = (id: string): string => join(dir, `${id}-key.pem`);
  const complete =
    existsSync(caFile) && p.nodes.every((n) => existsSync(certOf(n.id)) && existsSync(keyOf(n.id)));
  if (!complete) {
    const hosts = [...new Set([p.host, '127.0.0.1', 'localhost'])];
    writeClusterCertificates(
      dir,
      p.nodes.map((n) => ({ id: n.id, hosts })),
      'Tenure local CA',
    );
    log(`generated a CA and node certificates in ${dir}`);
  } else {
    log(`using the CA and node certificates in ${dir}`);
  }
  const auth = secureAuthArgs(p, log);
  const ca = readFileSync(caFile);
  const agent = new Agent({ connect: { ca } });
  return {
    caFile,
    argsOf: (id) => [
      ...['--tls-cert', certOf(id), '--tls-key', keyOf(id), '--tls-ca', caFile],
      ...['--peer-tls-cert', certOf(id), '--peer-tls-key', keyOf(id), '--peer-tls-ca', caFile],
      ...auth.args,
    ],
    env: auth.env,
    // The launcher's own probes (`/v1/cluster`) carry the root token: auth is on.
    fetch: ((input: string, init?: RequestInit) =>
      undiciFetch(input, {
        ...init,
        headers: {
          ...(init?.headers as Record<string, string>),
          authorization: `Bearer ${auth.token}`,
        },
        dispatcher: agent,
      } as never)) as unknown as typeof fetch,
    notes: auth.notes,
  };
}

/** The auth part of a secure launch: node flags, node environment, lines to print when up. */
export interface SecureAuth {
  /** The root secret (what TENURE_TOKEN / `--auth-token` take). */
  readonly token: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly notes: readonly string[];
}

/**
 * The ONE place where `--secure` sets up authentication (docs/security.md): a random root secret
 * written to `<data-dir>/root.token` (mode 0600) on the first secure start and printed that once
 * (later starts reuse the file and print only its path); every node runs with `--auth` and gets the
 * secret as TENURE_ROOT_TOKEN (read from the environment only, so it never shows in `ps`).
 */
export function secureAuthArgs(p: LaunchPlan, log: (line: string) => void): SecureAuth {
  const file = join(p.dataDir, 'root.token');
  if (!existsSync(file)) {
    const secret = randomBytes(32).toString('base64url');
    writeSecret(file, `${secret}\n`);
    log(`root token (shown once; kept in ${file}, mode 0600): ${secret}`);
  }
  const token = readFileSync(file, 'utf8').trim();
  return {
    token,
    args: ['--auth'],
    env: { TENURE_ROOT_TOKEN: token },
    notes: [`root token: ${file} (auth is on: requests carry it as a bearer token)`],
  };
}

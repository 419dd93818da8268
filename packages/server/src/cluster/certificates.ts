/**
 * Certificates for a private cluster (docs/security.md "A private CA"): one CA, and per node a
 * certificate valid for the node's host names and IP addresses, usable as server and as client
 * certificate (so one file serves the HTTPS API, forwarding and the mutual-TLS peer links).
 * Keys are RSA 2048 made by node:crypto; node-forge builds and signs the X.509 certificates.
 * Used by `npm start -- --secure`, the docker-compose certificate script and the tests.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isIP } from 'node:net';
import forge from 'node-forge';

/** A certificate and its private key, PEM. */
export interface KeyAndCert {
  readonly certPem: string;
  readonly keyPem: string;
}

/** What a node certificate is for. */
export interface NodeCertRequest {
  /** Subject common name, e.g. the node id `n1`. */
  readonly commonName: string;
  /** DNS names and IP addresses the certificate is valid for (subjectAltName). */
  readonly hosts: readonly string[];
  /** Validity from now, days (default 825, the usual ceiling for server certificates). */
  readonly validityDays?: number;
}

const NODE_VALIDITY_DAYS_DEFAULT = 825;
const CA_VALIDITY_DAYS_DEFAULT = 3650;
const RSA_MODULUS_BITS = 2048;
const DAY_MS = 86_400_000;

/** A new self-signed CA named `commonName`, valid for `validityDays` (default 10 years). */
export function createCa(commonName: string, validityDays = CA_VALIDITY_DAYS_DEFAULT): KeyAndCert {
  const { keyPem, publicKey, privateKey } = newKeyPair();
  const cert = baseCertificate(publicKey, validityDays);
  const name = [{ name: 'commonName', value: commonName }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem };
}

/** A node certificate signed by `ca` for `req.hosts` (server and client authentication). */
export function issueNodeCert(ca: KeyAndCert, req: NodeCertRequest): KeyAndCert {
  if (req.hosts.length === 0) throw new TypeError('hosts: at least one host name or IP');
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const { keyPem, publicKey } = newKeyPair();
  const cert = baseCertificate(publicKey, req.validityDays ?? NODE_VALIDITY_DAYS_DEFAULT);
  cert.setSubject([{ name: 'commonName', value: req.commonName }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
    {
      name: 'subjectAltName',
      altNames: req.hosts.map((h) => (isIP(h) !== 0 ? { type: 7, ip: h } : { type: 2, value: h })),
    },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem };
}

function newKeyPair(): {
  keyPem: string;
  publicKey: forge.pki.rsa.PublicKey;
  privateKey: forge.pki.rsa.PrivateKey;
} {
  const pair = generateKeyPairSync('rsa', {
    modulusLength: RSA_MODULUS_BITS,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    keyPem: pair.privateKey,
    publicKey: forge.pki.publicKeyFromPem(pair.publicKey),
    privateKey: forge.pki.privateKeyFromPem(pair.privateKey),
  };
}

/** A certificate with a random positive serial, valid from one hour ago for `validityDays`. */
function baseCertificate(
  publicKey: forge.pki.rsa.PublicKey,
  validityDays: number,
): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // 16 random bytes, the top bit cleared so the DER integer stays positive.
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  cert.serialNumber = serial.toString('hex');
  const nowMs = Date.now();
  // An hour back absorbs clock skew between the machine that issues and the ones that verify.
  cert.validity.notBefore = new Date(nowMs - 3_600_000);
  cert.validity.notAfter = new Date(nowMs + validityDays * DAY_MS);
  return cert;
}

/** Files written by writeClusterCertificates. */
export interface ClusterCertificateFiles {
  /** `<dir>/ca.pem`: the CA certificate clients and peers trust. */
  readonly caFile: string;
  /** The CA's private key (mode 0600): needed only to issue more certificates. */
  readonly caKeyFile: string;
  /** Per node id: `<dir>/<id>.pem` and `<dir>/<id>-key.pem` (mode 0600). */
  readonly nodes: Readonly<Record<string, { readonly certFile: string; readonly keyFile: string }>>;
}

/**
 * Creates `dir` and writes a new CA certificate and one certificate per node (valid for its
 * `hosts`) into it; the CA's private key goes to `caKeyFile` (default `<dir>/ca-key.pem`; give a
 * path outside `dir` when `dir` is what the nodes get, docs/security.md "Threat model"). Private
 * keys are written with mode 0600. Overwrites files of the same names.
 */
export function writeClusterCertificates(
  dir: string,
  nodes: readonly { readonly id: string; readonly hosts: readonly string[] }[],
  caName = 'Tenure cluster CA',
  caKeyFile = join(dir, 'ca-key.pem'),
): ClusterCertificateFiles {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  mkdirSync(dirname(caKeyFile), { recursive: true, mode: 0o700 });
  const ca = createCa(caName);
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, ca.certPem);
  writeSecret(caKeyFile, ca.keyPem);
  const files: Record<string, { certFile: string; keyFile: string }> = {};
  for (const n of nodes) {
    const issued = issueNodeCert(ca, { commonName: n.id, hosts: n.hosts });
    const certFile = join(dir, `${n.id}.pem`);
    const keyFile = join(dir, `${n.id}-key.pem`);
    writeFileSync(certFile, issued.certPem);
    writeSecret(keyFile, issued.keyPem);
    files[n.id] = { certFile, keyFile };
  }
  return { caFile, caKeyFile, nodes: files };
}

/** Writes `text` readable by its owner only (also when the file already existed). */
export function writeSecret(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600);
}

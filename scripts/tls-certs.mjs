#!/usr/bin/env node
// Makes a CA and one certificate per node for a TLS deployment (docs/security.md), e.g. the
// docker-compose secure variant:  node scripts/tls-certs.mjs tls n1 n2 n3
// Each node certificate is valid for its id as a host name (the compose service name), localhost
// and 127.0.0.1 (published ports), plus any `--hosts a,b` given. Needs `npm run build` first.
// Files: <dir>/ca.pem, <dir>/<id>.pem, <dir>/<id>-key.pem (keys mode 0600) — what the nodes get —
// and the CA's private key OUTSIDE <dir>: <dir>-ca/ca-key.pem, or the file given as `--ca-key`.
// Keep the CA key off the nodes (it can make certificates every peer trusts); it is needed only to
// issue more certificates.
// The container image runs as uid 1000: run as root and the node files are given to that uid (the
// CA key stays with the user running the script).
import { chownSync, existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const CONTAINER_UID = 1000;
const certificates = new URL('../packages/server/dist/cluster/certificates.js', import.meta.url);

function usage(message) {
  process.stderr.write(
    `tls-certs: ${message}\n` +
      'usage: node scripts/tls-certs.mjs <dir> <node-id>... [--hosts a,b] [--ca-key <file>]\n',
  );
  process.exit(2);
}

/** Removes `--name value` from `args`; returns the value (undefined when absent). */
function takeOption(args, name) {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  const value = args[at + 1] ?? usage(`${name} needs a value`);
  args.splice(at, 2);
  return value;
}

const args = process.argv.slice(2);
const extraHosts = takeOption(args, '--hosts')?.split(',') ?? [];
const caKeyOption = takeOption(args, '--ca-key');
const [dir, ...ids] = args;
if (dir === undefined || ids.length === 0) usage('give a directory and at least one node id');
const caKeyFile = resolve(caKeyOption ?? join(`${resolve(dir)}-ca`, 'ca-key.pem'));
if (!relative(resolve(dir), caKeyFile).startsWith('..'))
  usage(`--ca-key ${caKeyOption} is inside ${dir}: keep the CA key out of what the nodes mount`);
if (!existsSync(certificates)) usage('packages/server is not built: run npm run build first');

const { writeClusterCertificates } = await import(certificates.href);
const nodes = ids.map((id) => ({
  id,
  hosts: [...new Set([id, 'localhost', '127.0.0.1', ...extraHosts])],
}));
const files = writeClusterCertificates(dir, nodes, 'Tenure CA', caKeyFile);
if (process.getuid?.() === 0) {
  for (const name of readdirSync(dir)) chownSync(join(dir, name), CONTAINER_UID, CONTAINER_UID);
  chownSync(dir, CONTAINER_UID, CONTAINER_UID);
} else {
  process.stdout.write(
    `note: containers run as uid ${CONTAINER_UID}; make the key files readable to it (sudo chown -R ${CONTAINER_UID} ${dir})\n`,
  );
}
process.stdout.write(
  `wrote ${files.caFile} and certificates for ${ids.join(', ')} in ${dir}\n` +
    `the CA private key is in ${files.caKeyFile} (${dirname(files.caKeyFile)}): keep it off the ` +
    'nodes, offline if you can; it is needed only to issue more certificates\n',
);

#!/usr/bin/env node
// Makes a CA and one certificate per node for a TLS deployment (docs/security.md), e.g. the
// docker-compose secure variant:  node scripts/tls-certs.mjs tls n1 n2 n3
// Each node certificate is valid for its id as a host name (the compose service name), localhost
// and 127.0.0.1 (published ports), plus any `--hosts a,b` given. Needs `npm run build` first.
// Files: <dir>/ca.pem, <dir>/ca-key.pem, <dir>/<id>.pem, <dir>/<id>-key.pem (keys mode 0600).
// The container image runs as uid 1000: run as root and the files are given to that uid.
import { chownSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const CONTAINER_UID = 1000;
const certificates = new URL('../packages/server/dist/cluster/certificates.js', import.meta.url);

function usage(message) {
  process.stderr.write(
    `tls-certs: ${message}\nusage: node scripts/tls-certs.mjs <dir> <node-id>... [--hosts a,b]\n`,
  );
  process.exit(2);
}

const args = process.argv.slice(2);
const hostsAt = args.indexOf('--hosts');
const extraHosts =
  hostsAt < 0 ? [] : (args[hostsAt + 1] ?? usage('--hosts needs a value')).split(',');
const positional = hostsAt < 0 ? args : [...args.slice(0, hostsAt), ...args.slice(hostsAt + 2)];
const [dir, ...ids] = positional;
if (dir === undefined || ids.length === 0) usage('give a directory and at least one node id');
if (!existsSync(certificates)) usage('packages/server is not built: run npm run build first');

const { writeClusterCertificates } = await import(certificates.href);
const nodes = ids.map((id) => ({
  id,
  hosts: [...new Set([id, 'localhost', '127.0.0.1', ...extraHosts])],
}));
const files = writeClusterCertificates(dir, nodes, 'Tenure CA');
if (process.getuid?.() === 0) {
  for (const name of readdirSync(dir)) chownSync(join(dir, name), CONTAINER_UID, CONTAINER_UID);
  chownSync(dir, CONTAINER_UID, CONTAINER_UID);
} else {
  process.stdout.write(
    `note: containers run as uid ${CONTAINER_UID}; make the key files readable to it (sudo chown -R ${CONTAINER_UID} ${dir})\n`,
  );
}
process.stdout.write(`wrote ${files.caFile} and certificates for ${ids.join(', ')} in ${dir}\n`);

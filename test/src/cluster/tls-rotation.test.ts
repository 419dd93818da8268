// Proves certificates are replaced by a rolling restart without losing availability: while a client
// keeps writing, every node of a TLS cluster (HTTPS and peer mutual TLS) is restarted one at a time
// with a re-issued certificate; every write succeeds and each node ends up serving its new
// certificate. With TENURE_TLS_ROTATION=new-ca (npm run test:tls-rotation; six restarts, minutes
// on a loaded machine) the cluster moves to a new CA in two passes instead: every node first
// trusts both CAs, then every node gets a certificate from the new CA.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import t from 'tap';
import { TenureClient } from '@tenure/client';
import { LocalCluster, type NodeInfo } from '../support/cluster.js';
import { fetchTrusting, TestCa, tlsArgs, writeBundle, type NodeCertFiles } from '../support/tls.js';

const dir = mkdtempSync(join(tmpdir(), 'tenure-rotation-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const oldCa = new TestCa(join(dir, 'old'), 'old CA');
const newCa = new TestCa(join(dir, 'new'), 'new CA');
const ids = ['n1', 'n2', 'n3'];
const bundle = writeBundle(join(dir, 'bundle.pem'), [oldCa.ca.certPem, newCa.ca.certPem]);

/** What each node starts with: its certificate files and the CA file it trusts. */
const current = new Map<string, { files: NodeCertFiles; trust: string }>(
  ids.map((id) => [id, { files: oldCa.issue(id), trust: oldCa.caFile }]),
);

const newCaMode = process.env['TENURE_TLS_ROTATION'] === 'new-ca';

/** The SHA-256 fingerprint of the certificate `n` serves on its HTTP port. */
async function servedFingerprint(n: NodeInfo): Promise<string> {
  const socket = connect({ host: '127.0.0.1', port: n.httpPort, ca: readFileSync(bundle) });
  await new Promise((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  const raw = socket.getPeerX509Certificate();
  socket.destroy();
  return (raw as X509Certificate).fingerprint256;
}

const fingerprintOf = (files: NodeCertFiles): string =>
  new X509Certificate(readFileSync(files.certFile)).fingerprint256;

t.test('a rolling restart replaces every certificate; writes never fail', async (t) => {
  const c = await LocalCluster.start({
    scheme: 'https',
    fetch: fetchTrusting([oldCa.ca.certPem, newCa.ca.certPem]),
    nodeArgs: (n) => tlsArgs(current.get(n.id)!.files, current.get(n.id)!.trust),
  });
  t.teardown(() => c.teardown());
  await c.waitForLeader();
  const client = new TenureClient({
    endpoints: c.nodes.map((n) => n.url),
    ca: [oldCa.ca.certPem, newCa.ca.certPem],
  });
  t.teardown(() => client.close());

  let stop = false;
  let writes = 0;
  const failures: string[] = [];
  const writer = (async () => {
    while (!stop) {
      try {
        await client.kv.put('rotation', writes, { timeoutMs: 60_000 });
        writes++;
      } catch (err) {
        failures.push(String(err));
      }
    }
  })();

  const rolling = async (change: (id: string) => void): Promise<void> => {
    for (const id of ids) {
      await c.stop(id);
      change(id);
      await c.restart(id);
      await c.waitForLeader(); // every node, the restarted one included, agrees on a leader
      const before = writes;
      while (writes === before && failures.length === 0)
        await new Promise((r) => setTimeout(r, 50));
    }
  };
  if (newCaMode) {
    // Pass 1: trust both CAs. Pass 2: serve certificates of the new CA.
    await rolling((id) => (current.get(id)!.trust = bundle));
    await rolling((id) => (current.get(id)!.files = newCa.issue(id)));
  } else {
    await rolling((id) => (current.get(id)!.files = oldCa.issue(`${id}-renewed`)));
  }
  stop = true;
  await writer;

  t.same(failures, [], 'no write failed during the rotation');
  t.ok(writes > 0, `${writes} writes`);
  for (const n of c.nodes) {
    const expected = fingerprintOf(current.get(n.id)!.files);
    t.equal(await servedFingerprint(n), expected, `${n.id} serves its new certificate`);
  }
});

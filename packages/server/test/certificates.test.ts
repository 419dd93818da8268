// Proves the cluster certificate helper: a node certificate chains to its CA and to no other, is
// valid for exactly the requested names and addresses, for server and client authentication, and
// a node can serve TLS with it to a client trusting only the CA.
import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import tls from 'node:tls';
import t from 'tap';
import { createCa, issueNodeCert } from '../src/cluster/certificates.js';

const ca = createCa('tenure test CA');
const other = createCa('another CA');
const node = issueNodeCert(ca, { commonName: 'n1', hosts: ['127.0.0.1', 'n1.example'] });

t.test('a node certificate chains to its CA only and names its hosts', async (t) => {
  const cert = new X509Certificate(node.certPem);
  t.ok(cert.verify(new X509Certificate(ca.certPem).publicKey), 'signed by the CA');
  t.notOk(cert.verify(new X509Certificate(other.certPem).publicKey), 'not by another CA');
  t.ok(new X509Certificate(ca.certPem).ca, 'the CA is a CA');
  t.notOk(cert.ca, 'the node certificate is not');
  t.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
  t.equal(cert.checkHost('n1.example'), 'n1.example');
  t.equal(cert.checkHost('n2.example'), undefined);
  t.equal(cert.checkIP('127.0.0.2'), undefined);
  t.same(
    cert.keyUsage?.sort(),
    ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2'],
    'server and client auth',
  );
  t.throws(() => issueNodeCert(ca, { commonName: 'n1', hosts: [] }), TypeError);
});

t.test('a TLS server with the node certificate is trusted by a client of the CA', async (t) => {
  const server = tls.createServer({ cert: node.certPem, key: node.keyPem }, (s) => s.end('hi'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const { port } = server.address() as { port: number };
  const good = tls.connect({ host: '127.0.0.1', port, ca: ca.certPem });
  await once(good, 'secureConnect');
  t.ok(good.authorized);
  good.destroy();
  const bad = tls.connect({ host: '127.0.0.1', port, ca: other.certPem });
  const [err] = (await once(bad, 'error')) as [NodeJS.ErrnoException];
  t.match(err.code, /UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|UNABLE_TO_GET_ISSUER/);
});

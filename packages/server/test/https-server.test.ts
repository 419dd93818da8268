// Proves the node's HTTPS pieces: the API server options refuse a client without a certificate from
// `--tls-client-ca` at the handshake, and the forwarder speaks HTTPS to the leader, presenting the
// node's certificate and verifying the leader's against `--tls-ca` (another CA is refused); a node
// serving HTTPS logs an https:// address; a connection that never finishes the TLS handshake is
// closed after `--headers-timeout-ms`.
import { once } from 'node:events';
import net from 'node:net';
import { createServer } from 'node:https';
import { request } from 'node:https';
import Fastify from 'fastify';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { loadConfig, type HttpTlsConfig } from '../src/config.js';
import { ConnectionGuard } from '../src/connection-guard.js';
import { createCa, issueNodeCert } from '../src/cluster/certificates.js';
import { HttpForwarder } from '../src/forwarder.js';
import { httpsServerOptions } from '../src/https-server.js';
import { listeningText, nodeServerFactory } from '../src/node-server.js';
import { PEERS } from './fixtures/harness.js';

const ca = createCa('test CA');
const other = createCa('other CA');
const leader = issueNodeCert(ca, { commonName: 'n1', hosts: ['127.0.0.1'] });
const follower = issueNodeCert(ca, { commonName: 'n2', hosts: ['127.0.0.1'] });
const pem = (s: string): Buffer => Buffer.from(s);
const leaderTls: HttpTlsConfig = {
  cert: pem(leader.certPem),
  key: pem(leader.keyPem),
  clientCa: pem(ca.certPem),
  ca: pem(ca.certPem),
};

/** An HTTPS server with the leader's settings answering 200 with the client certificate's CN. */
async function leaderServer(t: Test): Promise<string> {
  const server = createServer(httpsServerOptions(leaderTls, 10_000), (req, res) => {
    const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ cn: peer.subject?.CN ?? null, path: req.url }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  return `127.0.0.1:${(server.address() as { port: number }).port}`;
}

const forwardReq = {
  method: 'GET',
  url: '/v1/kv/a',
  idempotencyKey: null,
  requestTimeoutMs: 5000,
  fromNodeId: 'n2',
};

t.test('the forwarder presents its certificate and verifies the leader', async (t) => {
  const address = await leaderServer(t);
  const good = new HttpForwarder({
    ...leaderTls,
    cert: pem(follower.certPem),
    key: pem(follower.keyPem),
  });
  t.teardown(() => good.close());
  const answer = await good.forward(address, forwardReq, 10_000, new AbortController().signal);
  t.equal(answer.statusCode, 200);
  t.same(JSON.parse(answer.body), { cn: 'n2', path: '/v1/kv/a' });

  const distrusting = new HttpForwarder({ ...leaderTls, ca: pem(other.certPem) });
  t.teardown(() => distrusting.close());
  await t.rejects(
    distrusting.forward(address, forwardReq, 10_000, new AbortController().signal),
    {
      code: /UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|SELF_SIGNED_CERT_IN_CHAIN/,
    },
    'a leader certificate from another CA is refused',
  );
});

t.test('with --tls-client-ca a client without a certificate is refused', async (t) => {
  const address = await leaderServer(t);
  const [host, port] = address.split(':');
  const req = request({ host, port: Number(port), path: '/', ca: ca.certPem });
  req.end();
  const [err] = (await once(req, 'error')) as [NodeJS.ErrnoException];
  t.match(err.code ?? err.message, /ECONNRESET|ERR_SSL|certificate required|EPIPE/i);
});

t.test('a node serving HTTPS logs an https:// address', async (t) => {
  const base = loadConfig(['--id', 'n1', '--peers', PEERS, '--data-dir', '/nonexistent'], {});
  for (const [tls, scheme] of [
    [leaderTls, 'https'],
    [null, 'http'],
  ] as const) {
    const config = { ...base, tls };
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const guard = new ConnectionGuard({
      perAddressMax: 10,
      nodeMax: 10,
      log: logger,
      onRefused: () => {},
    });
    const app = Fastify({
      loggerInstance: logger,
      serverFactory: nodeServerFactory(config, guard),
    });
    t.teardown(() => app.close());
    await app.listen({ host: '127.0.0.1', port: 0, listenTextResolver: listeningText(config) });
    const said = lines.map((l) => (JSON.parse(l) as { msg: string }).msg).join('\n');
    t.match(said, new RegExp(`Server listening at ${scheme}://127\\.0\\.0\\.1:\\d+`), scheme);
  }
});

t.test('a TLS handshake never finished is closed after --headers-timeout-ms', async (t) => {
  // Node's own handshake deadline is 120 s; the tap timeout below is half of it.
  t.setTimeout(60_000);
  const base = loadConfig(
    ['--id', 'n1', '--peers', PEERS, '--data-dir', '/nonexistent', '--headers-timeout-ms', '300'],
    {},
  );
  const config = { ...base, tls: leaderTls };
  const logger = pino({ level: 'silent' });
  const guard = new ConnectionGuard({
    perAddressMax: 10,
    nodeMax: 10,
    log: logger,
    onRefused: () => {},
  });
  const app = Fastify({ loggerInstance: logger, serverFactory: nodeServerFactory(config, guard) });
  t.teardown(() => app.close());
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.on('error', () => {});
  t.teardown(() => socket.destroy());
  await once(socket, 'connect');
  // A TLS record header announcing a 200-byte ClientHello, then only 4 bytes of it.
  socket.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00, 0x00, 0xc4]));
  await once(socket, 'close');
  t.pass('closed by the node');
});

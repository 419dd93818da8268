// Proves mutual TLS on the Raft links: two nodes with certificates from the configured CA exchange
// messages; a dialer with no certificate, a certificate from another CA, or plain TCP is refused at
// the TLS handshake (counted, nothing decoded or delivered); a dialer refuses a listener whose
// certificate is from another CA. Certificates: test/fixtures/tls (test-only keys, valid to 2126).
import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import t, { type Test } from 'tap';
import { freePorts, pollUntil } from '@tenure/testkit';
import { TcpTransport } from '../../src/transport/tcp-transport.js';
import type { PeerTlsOptions } from '../../src/transport/peer-tls.js';
import { frameHeader } from '../../src/transport/frame-decoder.js';
import { createPackr } from '../../src/codec.js';
import { asTerm, type Message } from '../../src/core/types.js';

const fixture = (name: string): Buffer =>
  readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));
const CA = fixture('ca.pem');
const OTHER_CA = fixture('other-ca.pem');
const certs = (id: 'n1' | 'n2' | 'rogue', ca = CA): PeerTlsOptions => ({
  cert: fixture(`${id}.pem`),
  key: fixture(`${id}-key.pem`),
  ca,
});

const deadlineMs = 30_000;

/** Resolves when `predicate` holds, polling every 5 ms; rejects after deadlineMs. */
const until = (predicate: () => boolean, what: string) =>
  pollUntil(what, predicate, { timeoutMs: deadlineMs, intervalMs: 5 });

const timeoutNow = (from: string, to: string, term: number): Message => ({
  type: 'TimeoutNow',
  from,
  to,
  term: asTerm(term),
});

/** n1 and n2 on allocated ports, each with its own TLS material. */
async function pair(t: Test, tls1: PeerTlsOptions, tls2: PeerTlsOptions) {
  const [p1, p2] = await freePorts(2);
  const peers = [
    { id: 'n1', raftAddress: `127.0.0.1:${p1}` },
    { id: 'n2', raftAddress: `127.0.0.1:${p2}` },
  ];
  const n1 = new TcpTransport({
    id: 'n1',
    clusterId: 'c',
    peers,
    listen: peers[0]!.raftAddress,
    tls: tls1,
  });
  const n2 = new TcpTransport({
    id: 'n2',
    clusterId: 'c',
    peers,
    listen: peers[1]!.raftAddress,
    tls: tls2,
  });
  await n1.start();
  await n2.start();
  t.teardown(async () => {
    await n1.close();
    await n2.close();
  });
  const got1: Message[] = [];
  const got2: Message[] = [];
  n1.onMessage((m) => got1.push(m));
  n2.onMessage((m) => got2.push(m));
  return { n1, n2, got1, got2, port1: p1! };
}

t.test('peers with certificates from the configured CA exchange messages', async (t) => {
  const { n1, n2, got1, got2 } = await pair(t, certs('n1'), certs('n2'));
  n1.send(timeoutNow('n1', 'n2', 3));
  n2.send(timeoutNow('n2', 'n1', 4));
  await until(() => got1.length === 1 && got2.length === 1, 'both directions');
  t.same(got2[0], timeoutNow('n1', 'n2', 3));
  t.same(got1[0], timeoutNow('n2', 'n1', 4));
  t.equal(n1.stats().tlsRejections, 0);
  t.ok(n1.stats().peers.n2!.connected);
});

t.test('a peer with a certificate from another CA is refused at the handshake', async (t) => {
  // "n2" holds a certificate of another CA (and trusts only that CA).
  const { n1, n2, got1, got2 } = await pair(t, certs('n1'), certs('rogue', OTHER_CA));
  n2.send(timeoutNow('n2', 'n1', 99));
  n1.send(timeoutNow('n1', 'n2', 5));
  await until(() => n1.stats().tlsRejections >= 1, 'n1 refuses the rogue dialer');
  await until(() => n2.stats().tlsRejections >= 1, 'the rogue refuses n1 (untrusted both ways)');
  t.equal(got1.length, 0, 'nothing from the rogue delivered');
  t.equal(n1.stats().receivedFrames, 0, 'not a frame decoded');
  t.equal(n1.stats().handshakeRejections, 0, 'never reached the Hello');
  t.equal(got2.length, 0);
  t.notOk(n1.stats().peers.n2!.connected, 'n1 does not trust the rogue listener either');
});

/** Frames a dialer would send: a valid Hello, then a vote request with a huge term. */
function helloAndVote(): Buffer {
  const packr = createPackr();
  const frame = (v: unknown): Buffer => {
    const payload = packr.pack(v);
    return Buffer.concat([frameHeader(payload.length), payload]);
  };
  return Buffer.concat([
    frame({ hello: 1, clusterId: 'c', from: 'n2', to: 'n1' }),
    frame({ type: 'TimeoutNow', from: 'n2', to: 'n1', term: 1000 }),
  ]);
}

t.test('a dialer without a certificate, and plain TCP, are refused before decoding', async (t) => {
  const [p1, p2] = await freePorts(2);
  const n1 = new TcpTransport({
    id: 'n1',
    clusterId: 'c',
    peers: [
      { id: 'n1', raftAddress: `127.0.0.1:${p1}` },
      { id: 'n2', raftAddress: `127.0.0.1:${p2}` },
    ],
    listen: `127.0.0.1:${p1}`,
    tls: certs('n1'),
  });
  await n1.start();
  t.teardown(() => n1.close());
  const got: Message[] = [];
  n1.onMessage((m) => got.push(m));

  // TLS trusting n1, but without a client certificate.
  const noCert = tls.connect({ host: '127.0.0.1', port: p1!, ca: CA });
  noCert.on('error', () => {});
  t.teardown(() => noCert.destroy());
  noCert.once('secureConnect', () => noCert.write(helloAndVote()));
  await until(() => n1.stats().tlsRejections >= 1, 'refusal of the certificate-less dialer');

  // Plain TCP speaking the frame protocol.
  const plain = net.connect({ host: '127.0.0.1', port: p1! });
  plain.on('error', () => {});
  t.teardown(() => plain.destroy());
  plain.once('connect', () => plain.write(helloAndVote()));
  await until(() => n1.stats().tlsRejections >= 2, 'refusal of plain TCP');
  await until(() => plain.destroyed || plain.readableEnded, 'plain connection closed');

  t.equal(got.length, 0, 'nothing delivered');
  t.equal(n1.stats().receivedFrames, 0, 'not a frame decoded');
  t.equal(n1.stats().handshakeRejections, 0, 'no Hello was ever read');
});

/** The first bytes of a TLS ClientHello (a record header announcing 200 bytes, then 4 of them). */
const PARTIAL_CLIENT_HELLO = Buffer.from([0x16, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00, 0x00, 0xc4]);

t.test('a dialer that never finishes the handshake is dropped and logged by address', async (t) => {
  // Node's own handshake deadline is 120 s; the tap timeout below is half of it.
  t.setTimeout(60_000);
  const [p1] = await freePorts(1);
  const warnings: Record<string, unknown>[] = [];
  const logger = {
    debug: () => {},
    info: () => {},
    warn: (fields: Record<string, unknown>) => warnings.push(fields),
    error: () => {},
    child: () => logger,
  };
  const n1 = new TcpTransport({
    id: 'n1',
    clusterId: 'c',
    peers: [{ id: 'n1', raftAddress: `127.0.0.1:${p1}` }],
    listen: `127.0.0.1:${p1}`,
    tls: { ...certs('n1'), handshakeTimeoutMs: 300 },
    logger,
  });
  await n1.start();
  t.teardown(() => n1.close());
  const partial = net.connect({ host: '127.0.0.1', port: p1! });
  partial.on('error', () => {});
  t.teardown(() => partial.destroy());
  await new Promise<void>((resolve) => partial.once('connect', resolve));
  const localPort = partial.localPort;
  partial.write(PARTIAL_CLIENT_HELLO);
  await new Promise<void>((resolve) => partial.once('close', () => resolve()));
  await until(() => n1.stats().tlsRejections >= 1, 'counted as a refusal');
  t.match(warnings[0], { remote: `127.0.0.1:${localPort}`, reason: /TIMEOUT/ });
});

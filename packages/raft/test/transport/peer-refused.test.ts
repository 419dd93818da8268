// Proves Transport.onPeerRefused on TcpTransport: a dial refused with ECONNREFUSED (nothing listens
// on the peer's port) is reported with the peer's id; a peer that accepts and then drops the
// connection (a failed handshake) is not; and MemoryNetwork.refuseFrom injects the same report for
// in-process tests.
import net from 'node:net';
import t, { type Test } from 'tap';
import { freePort, pollUntil } from '@tenure/testkit';
import { TcpTransport } from '../../src/transport/tcp-transport.js';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';

const deadlineMs = 60_000;
const until = (predicate: () => boolean, what: string) =>
  pollUntil(what, predicate, { timeoutMs: deadlineMs, intervalMs: 5 });

/** Transport n1 whose only peer n2 is at `port`; returns it with the refusals it reported. */
async function dialer(t: Test, port: number): Promise<string[]> {
  const n1 = new TcpTransport({
    id: 'n1',
    clusterId: 'c',
    peers: [{ id: 'n2', raftAddress: `127.0.0.1:${port}` }],
    listen: '127.0.0.1:0',
    reconnectDelayMsMax: 20,
  });
  const refused: string[] = [];
  n1.onPeerRefused((peer) => refused.push(peer));
  await n1.start();
  t.teardown(() => n1.close());
  return refused;
}

/** A server on a free port that counts connections and handles each with `onSocket`. */
async function server(t: Test, onSocket: (s: net.Socket) => void) {
  const sockets: net.Socket[] = [];
  const srv = net.createServer((socket) => {
    sockets.push(socket);
    onSocket(socket);
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((resolve) => srv.close(() => resolve()));
  });
  return { port: (srv.address() as net.AddressInfo).port, sockets };
}

t.test('a refused dial reports the peer, again on each refused redial', async (t) => {
  const refused = await dialer(t, await freePort());
  await until(() => refused.length >= 2, 'two refusals reported');
  t.same(new Set(refused), new Set(['n2']), 'only the peer n2');
});

t.test('a peer that accepts and drops the connection is not reported', async (t) => {
  const peer = await server(t, (socket) => socket.destroy());
  const refused = await dialer(t, peer.port);
  await until(() => peer.sockets.length >= 3, 'three dials accepted and dropped');
  t.same(refused, [], 'no refusal');
});

t.test('MemoryNetwork.refuseFrom reports the peer to every other open transport', async (t) => {
  const network = new MemoryNetwork();
  const reports: string[] = [];
  for (const id of ['n1', 'n2', 'n3']) {
    const transport = network.transport(id);
    transport.onPeerRefused((peer) => reports.push(`${id}:${peer}`));
    await transport.start();
  }
  await network.transport('n3').close();
  network.refuseFrom('n1');
  await until(() => reports.length >= 1, 'a report');
  await new Promise<void>((resolve) => setImmediate(resolve));
  t.same(reports, ['n2:n1'], 'n2 (open) told; n3 (closed) and n1 itself not');
});

// Proves TcpTransport delivers validated frames in order between two nodes on loopback, reconnects
// after a peer restarts, refuses a peer of another cluster, drops malformed input and bounds its
// per-peer send queue.
import net from 'node:net';
import t, { type Test } from 'tap';
import { freePort, pollUntil } from '@tenure/testkit';
import { TcpTransport } from '../../src/transport/tcp-transport.js';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';
import { frameHeader } from '../../src/transport/frame-decoder.js';
import { createPackr } from '../../src/codec.js';
import { asIndex, asTerm, type AppendEntriesMsg, type Message } from '../../src/core/types.js';

const deadlineMs = 10_000;

/** Resolves when `predicate` holds, polling every 5 ms; rejects after deadlineMs. */
const until = (predicate: () => boolean, what: string) =>
  pollUntil(what, predicate, { timeoutMs: deadlineMs, intervalMs: 5 });

const append = (from: string, to: string, seq: number): AppendEntriesMsg => ({
  type: 'AppendEntries',
  from,
  to,
  term: asTerm(3),
  prevLogIndex: asIndex(seq),
  prevLogTerm: asTerm(3),
  entries: [
    {
      index: asIndex(seq + 1),
      term: asTerm(3),
      type: 'command',
      clusterTimeMs: 5,
      data: new Uint8Array([seq % 256, 1, 2]),
    },
  ],
  leaderCommit: asIndex(0),
  clusterTimeMs: 5,
  heartbeatSeq: seq,
});

/** Two transports n1, n2 on port-0 listeners, each knowing the other's real address. */
async function pair(t: Test, options: { clusterId2?: string; sendQueueFramesMax?: number } = {}) {
  const a = new TcpTransport({ id: 'n1', clusterId: 'c', peers: [], listen: '127.0.0.1:0' });
  const b0 = new TcpTransport({
    id: 'n2',
    clusterId: options.clusterId2 ?? 'c',
    peers: [],
    listen: '127.0.0.1:0',
  });
  await a.start();
  await b0.start();
  const addrA = a.address();
  const addrB = b0.address();
  await a.close();
  await b0.close();
  // Re-create with peers now that both addresses are known (ports stay free on loopback).
  const peers = [
    { id: 'n1', raftAddress: addrA },
    { id: 'n2', raftAddress: addrB },
  ];
  const n1 = new TcpTransport({
    id: 'n1',
    clusterId: 'c',
    peers,
    listen: addrA,
    ...(options.sendQueueFramesMax !== undefined
      ? { sendQueueFramesMax: options.sendQueueFramesMax }
      : {}),
  });
  const n2 = new TcpTransport({
    id: 'n2',
    clusterId: options.clusterId2 ?? 'c',
    peers,
    listen: addrB,
  });
  await n1.start();
  await n2.start();
  t.teardown(async () => {
    await n1.close();
    await n2.close();
  });
  return { n1, n2, peers };
}

t.test('frames are delivered in order, decoded and validated', async (t) => {
  const { n1, n2 } = await pair(t);
  const got: Message[] = [];
  n2.onMessage((m) => got.push(m));
  for (let i = 0; i < 500; i++) n1.send(append('n1', 'n2', i));
  await until(() => got.length === 500, '500 messages');
  t.same(
    got.map((m) => (m as AppendEntriesMsg).heartbeatSeq),
    [...Array(500).keys()],
  );
  const first = got[0] as AppendEntriesMsg;
  t.same(first, append('n1', 'n2', 0));
  t.equal(first.entries[0]!.data.constructor, Uint8Array, 'entry data is a plain Uint8Array');
  // and the other direction
  const back: Message[] = [];
  n1.onMessage((m) => back.push(m));
  n2.send({ type: 'TimeoutNow', from: 'n2', to: 'n1', term: asTerm(4) });
  await until(() => back.length === 1, 'reply');
  t.same(back[0], { type: 'TimeoutNow', from: 'n2', to: 'n1', term: 4 });
});

t.test('the link reconnects after the peer restarts', async (t) => {
  const { n1, n2, peers } = await pair(t);
  const got: Message[] = [];
  n2.onMessage((m) => got.push(m));
  n1.send(append('n1', 'n2', 1));
  await until(() => got.length === 1, 'first message');
  await n2.close();
  await until(() => !n1.stats().peers.n2!.connected, 'disconnect noticed');
  const n2b = new TcpTransport({ id: 'n2', clusterId: 'c', peers, listen: peers[1]!.raftAddress });
  n2b.onMessage((m) => got.push(m));
  await n2b.start();
  t.teardown(() => n2b.close());
  // Keep sending until one arrives (messages sent while disconnected may be queued or lost).
  await until(() => {
    n1.send(append('n1', 'n2', 2));
    return got.length >= 2;
  }, 'message after reconnect');
  t.ok(n1.stats().peers.n2!.connected);
});

t.test('a peer of another cluster is refused on handshake', async (t) => {
  const { n1, n2 } = await pair(t, { clusterId2: 'other' });
  const got: Message[] = [];
  n2.onMessage((m) => got.push(m));
  n1.send(append('n1', 'n2', 1));
  await until(() => n2.stats().handshakeRejections >= 1, 'rejection at n2');
  t.equal(got.length, 0, 'nothing delivered across clusters');
  t.notOk(n1.stats().peers.n2!.connected);
});

t.test('malformed frames and spoofed senders are dropped; the connection survives', async (t) => {
  const { n2, peers } = await pair(t);
  const got: Message[] = [];
  n2.onMessage((m) => got.push(m));
  const packr = createPackr();
  const frame = (v: unknown) => {
    const payload = packr.pack(v);
    return Buffer.concat([frameHeader(payload.length), payload]);
  };
  const { port } = new URL(`tcp://${peers[1]!.raftAddress}`);
  const socket = net.connect({ host: '127.0.0.1', port: Number(port) });
  t.teardown(() => socket.destroy());
  await new Promise((r) => socket.once('connect', r));
  socket.write(frame({ hello: 1, clusterId: 'c', from: 'n1', to: 'n2' }));
  socket.write(frame({ type: 'AppendEntries', from: 'n1', to: 'n2', term: 'x' })); // bad field
  socket.write(Buffer.concat([frameHeader(3), Buffer.from([0xc1, 0xc1, 0xc1])])); // not msgpack
  socket.write(frame({ type: 'TimeoutNow', from: 'n3', to: 'n2', term: 1 })); // spoofed sender
  socket.write(frame({ type: 'TimeoutNow', from: 'n1', to: 'n2', term: 1 })); // fine
  await until(() => got.length === 1, 'valid message');
  t.equal(n2.stats().malformedFrames, 3);
});

t.test('the per-peer send queue is bounded and counts drops', async (t) => {
  // n2's address is a closed port: nothing connects, everything queues.
  const port = await freePort();
  const n1 = new TcpTransport({
    id: 'n1',
    clusterId: 'c',
    peers: [{ id: 'n2', raftAddress: `127.0.0.1:${port}` }],
    listen: '127.0.0.1:0',
    sendQueueFramesMax: 10,
  });
  await n1.start();
  t.teardown(() => n1.close());
  for (let i = 0; i < 25; i++) n1.send(append('n1', 'n2', i));
  const stats = n1.stats().peers.n2!;
  t.equal(stats.queuedFrames, 10);
  t.equal(stats.droppedFrames, 15);
});

t.test('the in-memory network delivers asynchronously and honours isolation', async (t) => {
  const network = new MemoryNetwork();
  const a = network.transport('a');
  const b = network.transport('b');
  await a.start();
  await b.start();
  const got: Message[] = [];
  b.onMessage((m) => got.push(m));
  a.send({ type: 'TimeoutNow', from: 'a', to: 'b', term: asTerm(1) });
  t.equal(got.length, 0, 'not delivered synchronously');
  await until(() => got.length === 1, 'delivery');
  network.isolate('b');
  a.send({ type: 'TimeoutNow', from: 'a', to: 'b', term: asTerm(2) });
  network.heal();
  a.send({ type: 'TimeoutNow', from: 'a', to: 'b', term: asTerm(3) });
  await until(() => got.length === 2, 'second delivery');
  t.equal(got[1]!.term, 3);
});

t.test('an unreachable or unresolvable peer is warned about once per interval', async (t) => {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const logger = {
    debug: (fields: object, message: string) =>
      lines.push({ level: 'debug', message, fields: { ...fields } }),
    info: (fields: object, message: string) =>
      lines.push({ level: 'info', message, fields: { ...fields } }),
    warn: (fields: object, message: string) =>
      lines.push({ level: 'warn', message, fields: { ...fields } }),
    error: (fields: object, message: string) =>
      lines.push({ level: 'error', message, fields: { ...fields } }),
    child: () => logger,
  };
  // A closed port (bound then released) and a name that never resolves (.invalid, RFC 2606).
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const closedPort = (probe.address() as net.AddressInfo).port;
  await new Promise((r) => probe.close(r));
  const n1 = new TcpTransport({
    id: 'n1',
    clusterId: 'c',
    peers: [
      { id: 'n2', raftAddress: `127.0.0.1:${closedPort}` },
      { id: 'n3', raftAddress: 'tenure-peer.invalid:7000' },
    ],
    listen: '127.0.0.1:0',
    logger,
    reconnectDelayMsMin: 5,
    reconnectDelayMsMax: 20,
  });
  await n1.start();
  t.teardown(() => n1.close());
  n1.send(append('n1', 'n2', 1));
  n1.send(append('n1', 'n3', 1));
  const errorsOf = (peer: string) =>
    lines.filter((l) => l.message === 'peer connection error' && l.fields.peer === peer).length;
  await until(() => errorsOf('n2') >= 3 && errorsOf('n3') >= 3, 'repeated connection failures');
  const warned = lines.filter((l) => l.level === 'warn' && l.message === 'peer unreachable');
  t.same(
    warned.map((l) => l.fields.peer).sort(),
    ['n2', 'n3'],
    'one warning per peer, later failures at debug',
  );
  const n3 = warned.find((l) => l.fields.peer === 'n3')!;
  t.equal(n3.fields.address, 'tenure-peer.invalid:7000', 'the warning names the address');
  t.type(n3.fields.code, 'string', 'and the error code (ENOTFOUND or EAI_AGAIN)');
});

t.test('setPeers dials new peers, drops removed ones and refuses them afterwards', async (t) => {
  const a = new TcpTransport({ id: 'n1', clusterId: 'c', peers: [], listen: '127.0.0.1:0' });
  const b = new TcpTransport({ id: 'n2', clusterId: 'c', peers: [], listen: '127.0.0.1:0' });
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  await a.start();
  await b.start();
  const atB: Message[] = [];
  const atA: Message[] = [];
  b.onMessage((m) => atB.push(m));
  a.onMessage((m) => atA.push(m));
  a.send(append('n1', 'n2', 1)); // n2 unknown yet: dropped
  a.setPeers([{ id: 'n2', raftAddress: b.address() }]);
  b.setPeers([
    { id: 'n1', raftAddress: a.address() },
    { id: 'n2', raftAddress: 'ignored:1' },
  ]);
  a.setPeers([{ id: 'n2', raftAddress: b.address() }]); // unchanged: the link stays
  await until(() => {
    a.send(append('n1', 'n2', 2));
    return atB.length > 0;
  }, 'n2 receives once it is a peer');
  b.send(append('n2', 'n1', 3));
  await until(() => atA.length > 0, 'n1 receives from its new peer');
  t.equal(atB[0]?.from, 'n1');
  b.setPeers([]);
  const before = b.stats().handshakeRejections;
  a.setPeers([{ id: 'n2', raftAddress: b.address() }]);
  a.setPeers([]);
  a.setPeers([{ id: 'n2', raftAddress: b.address() }]); // a fresh link: n2 refuses it now
  await until(() => b.stats().handshakeRejections > before, 'n2 refuses a removed peer');
});

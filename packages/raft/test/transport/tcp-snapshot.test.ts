// Proves TcpTransport carries an InstallSnapshot larger than frameBytesMax as chunk frames (Raft §7;
// docs/architecture.md "How snapshots travel"), and that a connection cut mid-transfer resumes at
// the receiver's offset instead of starting over.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { freePorts, SeededRandom, pollUntil } from '@tenure/testkit';
import { TcpTransport } from '../../src/transport/tcp-transport.js';
import { asIndex, asTerm, type InstallSnapshotMsg, type Message } from '../../src/core/types.js';

const deadlineMs = 60_000;
const FRAME_BYTES_MAX = 128 * 1024;
const CHUNK_BYTES = 16 * 1024;

/** Resolves when `predicate` holds, polling every 5 ms; rejects after deadlineMs. */
const until = (predicate: () => boolean, what: string) =>
  pollUntil(what, predicate, { timeoutMs: deadlineMs, intervalMs: 5 });

function randomBytes(seed: number, length: number): Uint8Array {
  const random = new SeededRandom(seed);
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = random.intBelow(256);
  return bytes;
}

const snapshotMsg = (data: Uint8Array): InstallSnapshotMsg => ({
  type: 'InstallSnapshot',
  from: 'n1',
  to: 'n2',
  term: asTerm(7),
  snapshot: { index: asIndex(900), term: asTerm(6), clusterTimeMs: 42 },
  data,
  clusterTimeMs: 50,
});

/**
 * n1 → n2 with small frames and chunks; n1 reaches n2 through `proxyPort` when given (the test's
 * proxy forwards to n2's listener), so the test can cut n1's connection.
 */
async function pair(t: Test, ports: { n1: number; n2: number; proxy?: number }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tcp-snapshot-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const make = (id: string, listenPort: number, n2Port: number) =>
    new TcpTransport({
      id,
      clusterId: 'c',
      peers: [
        { id: 'n1', raftAddress: `127.0.0.1:${ports.n1}` },
        { id: 'n2', raftAddress: `127.0.0.1:${n2Port}` },
      ],
      listen: `127.0.0.1:${listenPort}`,
      frameBytesMax: FRAME_BYTES_MAX,
      snapshotChunkBytes: CHUNK_BYTES,
      snapshotDir: path.join(dir, id),
      reconnectDelayMsMax: 50,
    });
  const n1 = make('n1', ports.n1, ports.proxy ?? ports.n2);
  const n2 = make('n2', ports.n2, ports.n2);
  await n1.start();
  await n2.start();
  t.teardown(async () => {
    await n1.close();
    await n2.close();
  });
  return { n1, n2, dir };
}

t.test('a snapshot 8× frameBytesMax arrives through chunk frames', async (t) => {
  const [p1, p2] = await freePorts(2);
  const { n1, n2, dir } = await pair(t, { n1: p1!, n2: p2! });
  const data = randomBytes(11, 8 * FRAME_BYTES_MAX + 5);
  const got: Message[] = [];
  n2.onMessage((m) => got.push(m));
  n1.send(snapshotMsg(data));
  await until(() => got.length === 1, 'the snapshot');
  const msg = got[0] as InstallSnapshotMsg;
  t.equal(msg.type, 'InstallSnapshot');
  t.same([msg.term, msg.snapshot.index, msg.snapshot.term], [7, 900, 6]);
  t.ok(Buffer.from(msg.data).equals(Buffer.from(data)), 'the exact bytes');
  t.equal(n1.stats().snapshotsSent.chunksSent, Math.ceil(data.length / CHUNK_BYTES));
  t.equal(n2.stats().malformedFrames, 0);
  t.notOk(fs.existsSync(path.join(dir, 'n2')), 'the receiver removed its partial file');
});

t.test('a connection cut mid-transfer resumes where the receiver stopped', async (t) => {
  const [p1, p2, pp] = await freePorts(3);
  const { n1, n2 } = await pair(t, { n1: p1!, n2: p2!, proxy: pp! });
  // The proxy cuts n1's first connection once ~1/3 of the snapshot went through it.
  const data = randomBytes(12, 64 * CHUNK_BYTES);
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    connections++;
    const upstream = net.connect({ host: '127.0.0.1', port: p2! });
    sockets.add(client).add(upstream);
    let forwardedBytes = 0;
    const cutAtBytes = connections === 1 ? data.length / 3 : Infinity;
    client.on('data', (chunk: Buffer) => {
      forwardedBytes += chunk.length;
      upstream.write(chunk);
      if (forwardedBytes >= cutAtBytes) {
        client.destroy();
        upstream.destroy();
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    for (const s of [client, upstream]) {
      s.on('error', () => undefined);
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => proxy.listen(pp!, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((resolve) => proxy.close(() => resolve()));
  });
  const got: Message[] = [];
  n2.onMessage((m) => got.push(m));
  n1.send(snapshotMsg(data));
  await until(() => got.length === 1, 'the snapshot after the cut');
  t.ok(connections >= 2, 'the link reconnected');
  t.ok(Buffer.from((got[0] as InstallSnapshotMsg).data).equals(Buffer.from(data)), 'exact bytes');
  const chunks = data.length / CHUNK_BYTES;
  const sent = n1.stats().snapshotsSent;
  t.ok(sent.rewinds >= 1, 'the sender resumed');
  t.ok(sent.chunksSent < chunks + chunks / 3, `resumed, not restarted (${sent.chunksSent} sent)`);
  t.equal(n2.stats().snapshotsReceived.chunksAccepted, chunks, 'each chunk written once');
});

// Proves chunked InstallSnapshot (Raft §7 with Figure 13's offset/done chunks; docs/architecture.md
// "How snapshots travel") between a SnapshotSender and a SnapshotReceiver wired through a scripted
// link the test controls: a transfer in 1 KiB chunks completes with the exact bytes; a dropped
// connection resumes at the offset the receiver holds (not at 0); a leader change mid-transfer
// restarts with the new leader's snapshot and the old leader's late chunks are refused as stale; a
// corrupted chunk fails the checksum and the transfer restarts; an out-of-order chunk is refused
// and answered with the offset wanted.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { SeededRandom } from '@tenure/testkit';
import { asIndex, asTerm, type InstallSnapshotMsg } from '../../src/core/types.js';
import type { SnapshotChunkAckMsg, SnapshotChunkMsg } from '../../src/transport/snapshot-chunk.js';
import { SnapshotReceiver } from '../../src/transport/snapshot-receiver.js';
import { SnapshotSender } from '../../src/transport/snapshot-sender.js';

const CHUNK_BYTES = 1024;

function randomBytes(seed: number, length: number): Uint8Array {
  const random = new SeededRandom(seed);
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = random.intBelow(256);
  return bytes;
}

function installSnapshot(from: string, term: number, index: number, data: Uint8Array) {
  const msg: InstallSnapshotMsg = {
    type: 'InstallSnapshot',
    from,
    to: 'n2',
    term: asTerm(term),
    snapshot: { index: asIndex(index), term: asTerm(term), clusterTimeMs: 1000 },
    data,
    clusterTimeMs: 1234,
  };
  return msg;
}

/**
 * Leaders (one sender each) and the receiver n2, joined by queues the test drains step by step:
 * nothing moves unless `step`/`drain` says so, so every drop and reordering is explicit.
 */
function harness(t: Test, leaders: readonly string[]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snapshot-chunks-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const chunks: SnapshotChunkMsg[] = [];
  const acks: SnapshotChunkAckMsg[] = [];
  const delivered: InstallSnapshotMsg[] = [];
  const sent: SnapshotChunkMsg[] = [];
  const link = { connected: true };
  const senders = new Map(
    leaders.map((id) => [
      id,
      new SnapshotSender({
        chunkBytes: CHUNK_BYTES,
        windowChunks: 4,
        sendChunk: (c) => {
          sent.push(c);
          chunks.push(c);
        },
        isConnected: () => link.connected,
      }),
    ]),
  );
  const receiver = new SnapshotReceiver({
    self: 'n2',
    dir: path.join(dir, 'incoming'),
    sendAck: (a) => acks.push(a),
    deliver: (m) => delivered.push(m),
  });
  t.teardown(() => receiver.close());
  /** Delivers every queued chunk, then every queued ack, once. */
  const step = (): void => {
    for (const c of chunks.splice(0)) receiver.onChunk(c);
    for (const a of acks.splice(0)) senders.get(a.to)!.onAck(a);
  };
  const drain = (): void => {
    for (let i = 0; i < 100_000 && (chunks.length > 0 || acks.length > 0); i++) step();
  };
  return { dir, chunks, acks, delivered, sent, senders, receiver, link, step, drain };
}

t.test('a snapshot travels in 1 KiB chunks and arrives whole, checked', async (t) => {
  const h = harness(t, ['n1']);
  const data = randomBytes(1, 100 * CHUNK_BYTES + 123);
  h.senders.get('n1')!.offer(installSnapshot('n1', 2, 50, data));
  t.equal(h.chunks.length, 4, 'only the window (4 chunks) leaves before an acknowledgement');
  h.drain();
  t.equal(h.delivered.length, 1, 'one InstallSnapshot handed to Raft');
  const msg = h.delivered[0]!;
  t.same(Buffer.from(msg.data), Buffer.from(data), 'the exact bytes');
  t.same(
    [msg.from, msg.term, msg.snapshot.index, msg.clusterTimeMs],
    ['n1', 2, 50, 1234],
    'the sender, term, snapshot and cluster time of the message',
  );
  t.ok(
    h.sent.every((c) => c.data.length <= CHUNK_BYTES),
    'every chunk carries at most chunkBytes',
  );
  t.equal(h.sent.length, 101, 'each chunk sent once');
  t.equal(h.senders.get('n1')!.stats().streamsDone, 1, 'the sender saw the final acknowledgement');
  t.notOk(fs.existsSync(path.join(h.dir, 'incoming')), 'the partial file is gone');
});

t.test('an empty snapshot is one chunk', async (t) => {
  const h = harness(t, ['n1']);
  h.senders.get('n1')!.offer(installSnapshot('n1', 2, 5, new Uint8Array(0)));
  h.drain();
  t.equal(h.delivered.length, 1);
  t.equal(h.delivered[0]!.data.length, 0);
});

t.test('a dropped connection resumes at the offset the receiver holds', async (t) => {
  const h = harness(t, ['n1']);
  const data = randomBytes(2, 40 * CHUNK_BYTES);
  const msg = installSnapshot('n1', 3, 80, data);
  const sender = h.senders.get('n1')!;
  sender.offer(msg);
  for (let i = 0; i < 3; i++) h.step();
  const held = h.receiver.stats().chunksAccepted * CHUNK_BYTES;
  t.ok(held > 0 && held < data.length, 'part of the snapshot arrived');
  // The connection drops: everything in flight (chunks and acknowledgements) is lost.
  h.chunks.length = 0;
  h.acks.length = 0;
  h.step();
  t.equal(h.delivered.length, 0, 'the transfer stalls');
  // The link reconnects: the transport tells the sender, which resends from its last acknowledgement.
  const sentBefore = h.sent.length;
  sender.resume('n2');
  const resent = h.sent[sentBefore];
  t.ok(resent !== undefined && resent.offset > 0, 'the resend does not start over at 0');
  t.ok(resent!.offset <= held, 'it starts at or before what the receiver holds');
  h.drain();
  t.equal(h.delivered.length, 1, 'the snapshot arrives');
  t.same(Buffer.from(h.delivered[0]!.data), Buffer.from(data), 'with the exact bytes');
  t.ok(h.sent.length < 40 + 8, 'resumed: far fewer chunks than sending it twice');
  t.equal(h.receiver.stats().chunksAccepted, 40, 'each byte written once');
});

t.test('without a reconnect, the core’s retries resume a stalled transfer', async (t) => {
  const h = harness(t, ['n1']);
  const data = randomBytes(9, 20 * CHUNK_BYTES);
  const msg = installSnapshot('n1', 3, 80, data);
  const sender = h.senders.get('n1')!;
  sender.offer(msg);
  h.step();
  h.chunks.length = 0; // lost
  const sentBefore = h.sent.length;
  sender.offer(msg); // the core's snapshot retry: progress happened since the last ask
  t.equal(h.sent.length, sentBefore, 'no resend while the stream was moving');
  h.link.connected = false;
  sender.offer(msg);
  sender.offer(msg);
  t.equal(h.sent.length, sentBefore, 'nothing piles up while the link is down');
  h.link.connected = true;
  sender.offer(msg); // the next retry: nothing moved since the previous one
  t.equal(h.sent[sentBefore]?.offset, 4 * CHUNK_BYTES, 'resent from the last acknowledgement');
  h.drain();
  t.same(Buffer.from(h.delivered[0]!.data), Buffer.from(data));
});

t.test('a re-ask while acknowledgements flow does not rewind', async (t) => {
  const h = harness(t, ['n1']);
  const msg = installSnapshot('n1', 3, 80, randomBytes(3, 30 * CHUNK_BYTES));
  const sender = h.senders.get('n1')!;
  sender.offer(msg);
  h.step();
  sender.offer(msg); // first re-ask: progress happened since the offer
  h.drain();
  t.equal(sender.stats().rewinds, 0, 'no rewind');
  t.equal(h.sent.length, 30, 'each chunk sent once');
  t.equal(h.delivered.length, 1);
});

t.test('a leader change mid-transfer restarts; the old leader’s chunks are refused', async (t) => {
  const h = harness(t, ['n1', 'n3']);
  const oldData = randomBytes(4, 20 * CHUNK_BYTES);
  const newData = randomBytes(5, 25 * CHUNK_BYTES);
  h.senders.get('n1')!.offer(installSnapshot('n1', 4, 60, oldData));
  h.step();
  h.step();
  const oldInFlight = h.chunks.splice(0); // the old leader's chunks still on the wire
  h.acks.length = 0;
  h.senders.get('n3')!.offer(installSnapshot('n3', 5, 70, newData));
  h.step();
  for (const c of oldInFlight) h.receiver.onChunk(c); // they arrive late
  const refusals = h.acks.filter((a) => a.to === 'n1');
  t.ok(
    refusals.length > 0 && refusals.every((a) => a.refused === 'stale'),
    'the old leader is told its chunks are stale',
  );
  h.drain();
  t.equal(h.delivered.length, 1, 'exactly one snapshot handed to Raft');
  const msg = h.delivered[0]!;
  t.same([msg.from, msg.term, msg.snapshot.index], ['n3', 5, 70], 'the new leader’s snapshot');
  t.same(Buffer.from(msg.data), Buffer.from(newData), 'with its bytes, nothing of the old one');
  // The old leader, still believing it leads, asks again: its chunks stay refused.
  h.senders.get('n1')!.offer(installSnapshot('n1', 4, 60, oldData));
  h.drain();
  t.equal(h.delivered.length, 1, 'nothing from the old term is delivered');
});

t.test('a corrupted chunk fails the checksum and the transfer restarts', async (t) => {
  const h = harness(t, ['n1']);
  const data = randomBytes(6, 10 * CHUNK_BYTES + 7);
  h.senders.get('n1')!.offer(installSnapshot('n1', 2, 9, data));
  h.step();
  const victim = h.chunks[1]!;
  const corrupted = new Uint8Array(victim.data);
  corrupted[17] = corrupted[17]! ^ 0xff;
  h.chunks[1] = { ...victim, data: corrupted };
  h.drain();
  t.equal(h.receiver.stats().checksumFailures, 1, 'the assembled bytes were refused once');
  t.equal(h.delivered.length, 1, 'the retransmission arrives');
  t.same(Buffer.from(h.delivered[0]!.data), Buffer.from(data), 'with the sender’s bytes');
});

t.test('an out-of-order chunk is refused with the offset wanted', async (t) => {
  const h = harness(t, ['n1']);
  const data = randomBytes(7, 12 * CHUNK_BYTES);
  h.senders.get('n1')!.offer(installSnapshot('n1', 2, 9, data));
  h.step(); // chunks 0..3 accepted, acknowledgements send 4..7
  const [c4, c5] = h.chunks.splice(0, 2);
  h.chunks.push(c5!, c4!); // 5 arrives before 4
  for (const c of h.chunks.splice(0)) h.receiver.onChunk(c);
  const wanted = h.acks.find((a) => a.offset === 4 * CHUNK_BYTES && !a.done);
  t.ok(wanted !== undefined, 'chunk 5 is answered with "want offset 4 KiB"');
  t.equal(h.receiver.stats().chunksRefused > 0, true, 'and not written');
  for (const a of h.acks.splice(0)) h.senders.get(a.to)!.onAck(a);
  h.drain();
  t.equal(h.delivered.length, 1);
  t.same(Buffer.from(h.delivered[0]!.data), Buffer.from(data), 'the bytes in order');
  t.equal(h.receiver.stats().checksumFailures, 0, 'never assembled out of order');
});

t.test('a chunk that does not start a stream is answered with offset 0', async (t) => {
  const h = harness(t, ['n1']);
  const msg = installSnapshot('n1', 2, 9, randomBytes(8, 8 * CHUNK_BYTES));
  h.senders.get('n1')!.offer(msg);
  h.chunks.shift(); // chunk 0 lost
  h.step();
  t.ok(
    h.acks.length === 0 && h.receiver.stats().chunksRefused === 3,
    'three chunks refused, their answers already taken by the sender',
  );
  t.equal(h.senders.get('n1')!.stats().rewinds, 1, 'the sender rewound to 0 once, not per refusal');
  h.drain();
  t.equal(h.delivered.length, 1);
});

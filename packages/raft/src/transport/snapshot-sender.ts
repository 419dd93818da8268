/**
 * Sending side of chunked InstallSnapshot (docs/architecture.md, "How snapshots travel"): turns the
 * core's InstallSnapshot messages into a window of SnapshotChunk frames per peer, driven by the
 * receiver's acknowledgements. No timers: when the link reconnects (`resume`), or when the core asks
 * again for the same snapshot (it re-sends after snapshotRetryTicks, Raft §7) and no acknowledgement
 * arrived since its previous ask, the stream is resent from the last acknowledged offset — so a
 * dropped connection resumes where the receiver stopped.
 *
 * Memory: chunks are views of the snapshot bytes the core already holds (never a second full copy);
 * at most `windowChunks` chunk frames per peer are in flight.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { InstallSnapshotMsg, NodeId } from '../core/types.js';
import type { SnapshotChunkAckMsg, SnapshotChunkMsg } from './snapshot-chunk.js';

/** Settings of a SnapshotSender. */
export interface SnapshotSenderOptions {
  /** Snapshot bytes per chunk frame (> 0). */
  readonly chunkBytes: number;
  /** Chunks sent ahead of the last acknowledged offset (≥ 1). */
  readonly windowChunks: number;
  /** Queues one chunk frame to its peer (may drop it: the protocol recovers). */
  readonly sendChunk: (chunk: SnapshotChunkMsg) => void;
  /**
   * Whether the link to `peer` is up. A retry while it is down sends nothing (chunks would only pile
   * up in the link's queue); `resume` resends once it is back.
   */
  readonly isConnected: (peer: NodeId) => boolean;
}

/** One snapshot on its way to one peer. Invariant: ackedOffset ≤ sentOffset ≤ data.length. */
interface OutgoingStream {
  readonly msg: InstallSnapshotMsg;
  readonly sha256: string;
  /** Bytes the receiver confirmed holding. */
  ackedOffset: number;
  /** Bytes handed to the link (chunks beyond ackedOffset are in flight). */
  sentOffset: number;
  /** An acknowledgement raised ackedOffset since the core last asked for this snapshot. */
  progressed: boolean;
  /** The offset of the last rewind (a burst of "want X" answers rewinds to X only once). */
  rewoundTo: number;
  /** The receiver handed the snapshot to Raft. */
  done: boolean;
}

/** Counters, for stats and tests. */
export interface SnapshotSenderStats {
  readonly streamsStarted: number;
  readonly chunksSent: number;
  readonly rewinds: number;
  readonly streamsDone: number;
}

/** sha256 of each snapshot's bytes, computed once per snapshot (the core re-sends the same array). */
const digests = new WeakMap<Uint8Array, string>();

function sha256Of(data: Uint8Array): string {
  let digest = digests.get(data);
  if (digest === undefined) {
    digest = createHash('sha256').update(data).digest('hex');
    digests.set(data, digest);
  }
  return digest;
}

const sameSnapshot = (a: InstallSnapshotMsg, b: InstallSnapshotMsg): boolean =>
  a.term === b.term &&
  a.snapshot.index === b.snapshot.index &&
  a.snapshot.term === b.snapshot.term &&
  a.data === b.data;

export class SnapshotSender {
  readonly #o: SnapshotSenderOptions;
  readonly #streams = new Map<NodeId, OutgoingStream>();
  #streamsStarted = 0;
  #chunksSent = 0;
  #rewinds = 0;
  #streamsDone = 0;

  constructor(options: SnapshotSenderOptions) {
    assert.ok(options.chunkBytes > 0 && options.windowChunks >= 1, 'chunkBytes, windowChunks');
    this.#o = options;
  }

  /**
   * The core asks to send `msg`. The same snapshot (term, index, bytes) already streaming to that
   * peer continues — resent from the last acknowledged offset if no acknowledgement arrived since the
   * previous ask; anything else (a new snapshot, a new term, a finished stream) starts from 0.
   */
  offer(msg: InstallSnapshotMsg): void {
    const current = this.#streams.get(msg.to);
    if (current !== undefined && !current.done && sameSnapshot(current.msg, msg)) {
      if (!current.progressed && this.#o.isConnected(msg.to))
        this.#rewind(current, current.ackedOffset);
      current.progressed = false;
      return;
    }
    const stream: OutgoingStream = {
      msg,
      sha256: sha256Of(msg.data),
      ackedOffset: 0,
      sentOffset: 0,
      progressed: false,
      rewoundTo: -1,
      done: false,
    };
    this.#streams.set(msg.to, stream);
    this.#streamsStarted++;
    this.#pump(stream, true);
  }

  /** An acknowledgement from `ack.from`; one that names another stream than the current is ignored. */
  onAck(ack: SnapshotChunkAckMsg): void {
    const stream = this.#streams.get(ack.from);
    if (stream === undefined || stream.done) return;
    const { msg } = stream;
    if (
      ack.term !== msg.term ||
      ack.snapshotIndex !== msg.snapshot.index ||
      ack.snapshotTerm !== msg.snapshot.term
    )
      return;
    if (ack.refused === 'stale') {
      this.#streams.delete(ack.from);
      return;
    }
    if (ack.done && ack.offset === msg.data.length) {
      stream.done = true;
      this.#streams.delete(ack.from); // releases the bytes; the core's answer follows
      this.#streamsDone++;
      return;
    }
    if (ack.refused === 'checksum' || ack.offset < stream.ackedOffset) {
      this.#rewind(stream, ack.offset);
      return;
    }
    if (ack.offset > stream.sentOffset) return; // cannot hold more than was sent: ignore
    if (ack.offset > stream.ackedOffset) {
      stream.ackedOffset = ack.offset;
      stream.progressed = true;
      stream.rewoundTo = -1;
      this.#pump(stream, false);
    } else if (ack.chunkOffset > ack.offset && stream.rewoundTo !== ack.offset) {
      // A chunk beyond what the receiver holds: the ones between were lost (dropped connection).
      // A duplicate (chunkOffset below) only tells what the receiver holds.
      this.#rewind(stream, ack.offset);
    }
  }

  /**
   * The link to `peer` (re)connected: chunks in flight on the old connection may be lost, so resend
   * from the last acknowledged offset (the receiver kept what it had; it answers any overlap with
   * the offset it wants).
   */
  resume(peer: NodeId): void {
    const stream = this.#streams.get(peer);
    if (stream !== undefined && !stream.done && stream.sentOffset > stream.ackedOffset)
      this.#rewind(stream, stream.ackedOffset);
  }

  /** Forget the stream to `peer` (it left the membership). */
  forget(peer: NodeId): void {
    this.#streams.delete(peer);
  }

  /** Counters since construction. */
  stats(): SnapshotSenderStats {
    return {
      streamsStarted: this.#streamsStarted,
      chunksSent: this.#chunksSent,
      rewinds: this.#rewinds,
      streamsDone: this.#streamsDone,
    };
  }

  #rewind(stream: OutgoingStream, offset: number): void {
    this.#rewinds++;
    stream.ackedOffset = Math.min(offset, stream.msg.data.length);
    stream.sentOffset = stream.ackedOffset;
    stream.rewoundTo = stream.ackedOffset;
    this.#pump(stream, true);
  }

  /** Sends chunks while the window allows; `force` sends at least one (an empty snapshot too). */
  #pump(stream: OutgoingStream, force: boolean): void {
    const { msg } = stream;
    const total = msg.data.length;
    const windowBytes = this.#o.chunkBytes * this.#o.windowChunks;
    let mustSend = force;
    while (
      mustSend ||
      (stream.sentOffset < total && stream.sentOffset - stream.ackedOffset < windowBytes)
    ) {
      mustSend = false;
      const end = Math.min(total, stream.sentOffset + this.#o.chunkBytes);
      this.#o.sendChunk({
        type: 'SnapshotChunk',
        from: msg.from,
        to: msg.to,
        term: msg.term,
        snapshot: msg.snapshot,
        clusterTimeMs: msg.clusterTimeMs,
        totalBytes: total,
        sha256: stream.sha256,
        offset: stream.sentOffset,
        data: msg.data.subarray(stream.sentOffset, end),
      });
      this.#chunksSent++;
      stream.sentOffset = end;
    }
  }
}

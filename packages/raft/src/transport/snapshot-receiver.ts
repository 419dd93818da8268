/**
 * Receiving side of chunked InstallSnapshot (docs/architecture.md, "How snapshots travel"): writes
 * the chunks of one snapshot to a file in `dir` as they arrive (memory bounded by one chunk),
 * accepts only the chunk that continues what it holds (any other offset is answered with the offset
 * it wants, so the sender resumes there), and once the last byte is in checks the sha256 of the
 * whole and hands Raft one InstallSnapshot message (Raft §7) — the only time the snapshot is in
 * memory whole, as StateMachine.restore takes one buffer.
 *
 * One stream at a time: a chunk of another snapshot, term or sender replaces the current stream
 * when it starts at offset 0 (a leader change restarts the transfer); a chunk of a term older than
 * the newest seen is refused as stale (an old leader's leftovers never disturb the new transfer).
 * File writes are synchronous so chunks are taken strictly in arrival order.
 */
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { InstallSnapshotMsg, NodeId, SnapshotMeta, Term } from '../core/types.js';
import type { SnapshotChunkAckMsg, SnapshotChunkMsg } from './snapshot-chunk.js';

/** Settings of a SnapshotReceiver. */
export interface SnapshotReceiverOptions {
  readonly self: NodeId;
  /**
   * Directory for the partial snapshot file: created (emptied first) when a stream starts, removed
   * when it ends, so it exists only during a transfer.
   */
  readonly dir: string;
  /** Queues an acknowledgement to the chunk's sender. */
  readonly sendAck: (ack: SnapshotChunkAckMsg) => void;
  /** Hands a complete, checked snapshot to Raft. */
  readonly deliver: (msg: InstallSnapshotMsg) => void;
}

/** The snapshot being assembled. */
interface IncomingStream {
  readonly from: NodeId;
  readonly term: Term;
  readonly snapshot: SnapshotMeta;
  readonly totalBytes: number;
  readonly sha256: string;
  readonly file: string;
  readonly fd: number;
  readonly hash: Hash;
  /** Bytes written so far (the next offset wanted). */
  offset: number;
}

/** Counters, for stats and tests. */
export interface SnapshotReceiverStats {
  readonly chunksAccepted: number;
  readonly chunksRefused: number;
  readonly checksumFailures: number;
  readonly snapshotsDelivered: number;
}

const FILE_NAME = 'incoming.snap';

export class SnapshotReceiver {
  readonly #o: SnapshotReceiverOptions;
  #current: IncomingStream | null = null;
  /** Highest chunk term seen: chunks below it are stale. */
  #termFloor = 0;
  #chunksAccepted = 0;
  #chunksRefused = 0;
  #checksumFailures = 0;
  #snapshotsDelivered = 0;

  constructor(options: SnapshotReceiverOptions) {
    this.#o = options;
  }

  /** Takes one validated chunk addressed to this node; always answers it with an ack. */
  onChunk(chunk: SnapshotChunkMsg): void {
    if (chunk.term < this.#termFloor) {
      this.#chunksRefused++;
      this.#ack(chunk, 0, false, 'stale');
      return;
    }
    this.#termFloor = chunk.term;
    let stream = this.#current;
    if (stream === null || !continues(stream, chunk)) {
      if (chunk.offset !== 0) {
        this.#chunksRefused++;
        this.#ack(chunk, 0, false, null);
        return;
      }
      stream = this.#open(chunk);
    }
    if (chunk.offset !== stream.offset) {
      this.#chunksRefused++;
      this.#ack(chunk, stream.offset, false, null);
      return;
    }
    this.#append(stream, chunk);
  }

  /** Counters since construction. */
  stats(): SnapshotReceiverStats {
    return {
      chunksAccepted: this.#chunksAccepted,
      chunksRefused: this.#chunksRefused,
      checksumFailures: this.#checksumFailures,
      snapshotsDelivered: this.#snapshotsDelivered,
    };
  }

  /** Drops the partial file and its directory (the transport closes). Idempotent. */
  close(): void {
    this.#discard();
  }

  #append(stream: IncomingStream, chunk: SnapshotChunkMsg): void {
    let written = 0;
    while (written < chunk.data.length)
      written += fs.writeSync(stream.fd, chunk.data, written, chunk.data.length - written);
    stream.hash.update(chunk.data);
    stream.offset += chunk.data.length;
    this.#chunksAccepted++;
    if (stream.offset < stream.totalBytes) {
      this.#ack(chunk, stream.offset, false, null);
      return;
    }
    const digest = stream.hash.digest('hex');
    if (digest !== stream.sha256) {
      this.#checksumFailures++;
      this.#discard();
      this.#ack(chunk, 0, false, 'checksum');
      return;
    }
    const bytes = fs.readFileSync(stream.file);
    this.#discard();
    this.#snapshotsDelivered++;
    this.#ack(chunk, stream.totalBytes, true, null);
    this.#o.deliver({
      type: 'InstallSnapshot',
      from: stream.from,
      to: this.#o.self,
      term: chunk.term,
      snapshot: stream.snapshot,
      data: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      clusterTimeMs: chunk.clusterTimeMs,
    });
  }

  /** Starts a new stream at `chunk` (offset 0), replacing any current one. */
  #open(chunk: SnapshotChunkMsg): IncomingStream {
    this.#discard();
    fs.rmSync(this.#o.dir, { recursive: true, force: true });
    fs.mkdirSync(this.#o.dir, { recursive: true });
    const file = path.join(this.#o.dir, FILE_NAME);
    const stream: IncomingStream = {
      from: chunk.from,
      term: chunk.term,
      snapshot: chunk.snapshot,
      totalBytes: chunk.totalBytes,
      sha256: chunk.sha256,
      file,
      fd: fs.openSync(file, 'w'),
      hash: createHash('sha256'),
      offset: 0,
    };
    this.#current = stream;
    return stream;
  }

  #discard(): void {
    const stream = this.#current;
    if (stream === null) return;
    this.#current = null;
    fs.closeSync(stream.fd);
    fs.rmSync(this.#o.dir, { recursive: true, force: true });
  }

  #ack(
    chunk: SnapshotChunkMsg,
    offset: number,
    done: boolean,
    refused: SnapshotChunkAckMsg['refused'],
  ): void {
    this.#o.sendAck({
      type: 'SnapshotChunkAck',
      from: this.#o.self,
      to: chunk.from,
      term: chunk.term,
      snapshotIndex: chunk.snapshot.index,
      snapshotTerm: chunk.snapshot.term,
      offset,
      chunkOffset: chunk.offset,
      done,
      refused,
    });
  }
}

/** True if `chunk` belongs to the stream being assembled. */
function continues(stream: IncomingStream, chunk: SnapshotChunkMsg): boolean {
  return (
    stream.from === chunk.from &&
    stream.term === chunk.term &&
    stream.snapshot.index === chunk.snapshot.index &&
    stream.snapshot.term === chunk.snapshot.term &&
    stream.totalBytes === chunk.totalBytes &&
    stream.sha256 === chunk.sha256
  );
}

/**
 * Wire shapes of a chunked InstallSnapshot (docs/architecture.md, "How snapshots travel"): the core
 * hands the transport one InstallSnapshot message (Raft §7); the TCP transport carries its bytes as
 * a sequence of bounded `SnapshotChunk` frames, each answered by a `SnapshotChunkAck` on the
 * receiver's own link. Like the chunked variant of Raft's Figure 13 (offset, data, done), with the
 * sha256 of the whole snapshot in every chunk so the receiver checks what it assembled.
 */
import type { NodeId, SnapshotMeta, Term } from '../core/types.js';
import { parseSnapshotMeta } from '../validate.js';

/** Default bytes of snapshot data per chunk frame (TcpTransportOptions.snapshotChunkBytes). */
export const SNAPSHOT_CHUNK_BYTES_DEFAULT = 1 << 20;

/** Default chunk frames sent ahead of the receiver's last acknowledgement. */
export const SNAPSHOT_WINDOW_CHUNKS_DEFAULT = 4;

/**
 * One piece of a snapshot. The stream is identified by (from, term, snapshot.index, snapshot.term,
 * totalBytes, sha256); `offset` is where `data` starts; the chunk with offset + data.length ===
 * totalBytes completes it. `term`/`clusterTimeMs` are the leader's, as in InstallSnapshotMsg.
 */
export interface SnapshotChunkMsg {
  readonly type: 'SnapshotChunk';
  readonly from: NodeId;
  readonly to: NodeId;
  readonly term: Term;
  readonly snapshot: SnapshotMeta;
  readonly clusterTimeMs: number;
  readonly totalBytes: number;
  /** Lowercase hex sha256 of the whole snapshot data. */
  readonly sha256: string;
  readonly offset: number;
  readonly data: Uint8Array;
}

/**
 * The receiver's answer to a chunk. `offset` is the byte it wants next (what it holds of the stream
 * named by term/snapshotIndex/snapshotTerm): equal to the end of the chunk when accepted, lower when
 * the chunk was out of order (the sender resumes there), totalBytes once the whole snapshot was
 * checked and handed to Raft. `refused`: 'stale' (a chunk of an older term than one already seen:
 * the sender drops the stream) or 'checksum' (the assembled bytes did not match: restart at 0).
 */
export interface SnapshotChunkAckMsg {
  readonly type: 'SnapshotChunkAck';
  readonly from: NodeId;
  readonly to: NodeId;
  readonly term: Term;
  readonly snapshotIndex: number;
  readonly snapshotTerm: number;
  readonly offset: number;
  /** Offset of the chunk answered: above `offset` means a gap (a chunk before it was lost). */
  readonly chunkOffset: number;
  readonly done: boolean;
  readonly refused: 'stale' | 'checksum' | null;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isId = (v: unknown): v is NodeId => typeof v === 'string' && v.length > 0 && v.length <= 200;

/**
 * Validates a decoded SnapshotChunk frame: known fields only, data within [offset, totalBytes],
 * a 64-hex-digit sha256. `data` stays a view into the frame (the receiver writes it out at once).
 * Null when malformed.
 */
export function parseSnapshotChunk(v: unknown): SnapshotChunkMsg | null {
  if (!isObj(v) || v.type !== 'SnapshotChunk' || !isId(v.from) || !isId(v.to)) return null;
  const snapshot = parseSnapshotMeta(v.snapshot);
  if (snapshot === null || !isCount(v.term) || !isCount(v.totalBytes) || !isCount(v.offset))
    return null;
  if (typeof v.clusterTimeMs !== 'number' || !Number.isFinite(v.clusterTimeMs)) return null;
  if (typeof v.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(v.sha256)) return null;
  if (!(v.data instanceof Uint8Array) || v.offset + v.data.length > v.totalBytes) return null;
  return {
    type: 'SnapshotChunk',
    from: v.from,
    to: v.to,
    term: v.term as Term,
    snapshot,
    clusterTimeMs: v.clusterTimeMs,
    totalBytes: v.totalBytes,
    sha256: v.sha256,
    offset: v.offset,
    data: v.data,
  };
}

/** Validates a decoded SnapshotChunkAck frame. Null when malformed. */
export function parseSnapshotChunkAck(v: unknown): SnapshotChunkAckMsg | null {
  if (!isObj(v) || v.type !== 'SnapshotChunkAck' || !isId(v.from) || !isId(v.to)) return null;
  if (!isCount(v.term) || !isCount(v.snapshotIndex) || !isCount(v.snapshotTerm)) return null;
  if (!isCount(v.offset) || !isCount(v.chunkOffset) || typeof v.done !== 'boolean') return null;
  if (v.refused !== null && v.refused !== 'stale' && v.refused !== 'checksum') return null;
  return {
    type: 'SnapshotChunkAck',
    from: v.from,
    to: v.to,
    term: v.term as Term,
    snapshotIndex: v.snapshotIndex,
    snapshotTerm: v.snapshotTerm,
    offset: v.offset,
    chunkOffset: v.chunkOffset,
    done: v.done,
    refused: v.refused,
  };
}

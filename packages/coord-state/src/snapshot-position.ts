/**
 * The head of a state snapshot (snapshot.ts): its format tag and the log position it was taken at.
 * Kept apart from the state's decoding so the client's backup check (backup-check.ts) can read it
 * with msgpackr alone.
 */
import { makePackr } from './packr.js';

/** Format tag of the state snapshot bytes (written inside them; backup headers repeat it). */
export const STATE_SNAPSHOT_FORMAT = 'tenure-coord-state/2';

/** Thrown for bytes that are not a state snapshot of this format. */
export class SnapshotFormatError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SnapshotFormatError';
  }
}

/** Where a snapshot stands in the log: its last applied index and that entry's cluster time (ms). */
export interface SnapshotPosition {
  readonly lastIndex: number;
  readonly lastTimeMs: number;
}

/** The fields every snapshot document starts with; the rest is snapshot.ts's. */
export interface SnapshotHead extends SnapshotPosition {
  readonly format: string;
}

const packr = makePackr();

/**
 * Decodes snapshot bytes and checks the head (format tag, numeric position). Returns the whole
 * document, typed by the caller. Throws SnapshotFormatError.
 */
export function unpackSnapshot<T extends SnapshotHead>(bytes: Uint8Array): T {
  let doc: T;
  try {
    doc = packr.unpack(bytes) as T;
  } catch (cause) {
    throw new SnapshotFormatError('snapshot: not valid MessagePack', { cause });
  }
  if (typeof doc !== 'object' || doc === null || doc.format !== STATE_SNAPSHOT_FORMAT)
    throw new SnapshotFormatError(`snapshot: format is not ${STATE_SNAPSHOT_FORMAT}`);
  if (!Number.isSafeInteger(doc.lastIndex) || !Number.isFinite(doc.lastTimeMs))
    throw new SnapshotFormatError('snapshot: lastIndex / lastTimeMs are not numbers');
  return doc;
}

/** Reads the position of a snapshot without building the state. Throws SnapshotFormatError. */
export function snapshotPosition(bytes: Uint8Array): SnapshotPosition {
  const doc = unpackSnapshot(bytes);
  return { lastIndex: doc.lastIndex, lastTimeMs: doc.lastTimeMs };
}

/**
 * The backup file format (docs/operations.md "Backup and restore", docs/api.md
 * `GET /v1/cluster/snapshot`): a version line, a one-line JSON header, then the state snapshot
 * bytes (snapshot.ts) exactly as a replica holds them at one applied index.
 *
 *     TENURE-SNAPSHOT 1\n
 *     {"clusterId":…,"nodeId":…,"index":…,"term":…,"clusterTimeMs":…,"stateFormat":…,
 *      "payloadBytes":…,"sha256":…,"createdAt":…}\n
 *     <payloadBytes bytes of state snapshot>
 *
 * `sha256` is the hex SHA-256 of the payload; the restore also checks that the header's index and
 * cluster time are the payload's own. A reader refuses, with a SnapshotFileError naming the
 * problem: another kind of file, another version, a malformed header, a file cut short, bytes after
 * the payload, or a payload whose checksum differs. `SnapshotFileReader` checks a file chunk by
 * chunk in bounded memory (unless asked to keep the payload).
 */
import { createHash, type Hash } from 'node:crypto';

/** First word of every backup file. */
export const SNAPSHOT_FILE_MAGIC = 'TENURE-SNAPSHOT';
/** The version this build writes and the only one it reads. */
export const SNAPSHOT_FILE_VERSION = 1;
/** Bound on the version line plus the header line, bytes. */
export const SNAPSHOT_FILE_HEADER_BYTES_MAX = 64 * 1024;

/** The header of a backup file. */
export interface SnapshotFileHeader {
  /** Cluster id of the cluster the backup was taken from. */
  readonly clusterId: string;
  /** Node that wrote the snapshot (the leader at the time). */
  readonly nodeId: string;
  /** Log index of the last entry applied in the snapshot. */
  readonly index: number;
  /** Raft term of the node when it took the snapshot. */
  readonly term: number;
  /** Cluster time (ms) of the last entry applied: restored grants count down from here. */
  readonly clusterTimeMs: number;
  /** Format tag of the state snapshot in the payload. */
  readonly stateFormat: string;
  readonly payloadBytes: number;
  /** Lowercase hex SHA-256 of the payload. */
  readonly sha256: string;
  /** Wall-clock time the snapshot was taken (ISO 8601), for people only. */
  readonly createdAt: string;
}

/** Why a file was refused (stable words; the message says more). */
export type SnapshotFileProblem =
  | 'not_a_snapshot'
  | 'unsupported_version'
  | 'bad_header'
  | 'truncated'
  | 'trailing_data'
  | 'checksum_mismatch'
  /** backup-check.ts: the checks after the file's own (state format, header vs payload, load). */
  | 'unsupported_state_format'
  | 'header_mismatch'
  | 'bad_state';

/** A file that is not an intact backup of this version. `problem` says which check failed. */
export class SnapshotFileError extends Error {
  readonly problem: SnapshotFileProblem;
  constructor(problem: SnapshotFileProblem, message: string) {
    super(message);
    this.name = 'SnapshotFileError';
    this.problem = problem;
  }
}

/** Version line and header line of `header` (what precedes the payload), UTF-8. */
export function encodeSnapshotFileHeader(header: SnapshotFileHeader): Uint8Array {
  const text = `${SNAPSHOT_FILE_MAGIC} ${SNAPSHOT_FILE_VERSION}\n${JSON.stringify(header)}\n`;
  return new TextEncoder().encode(text);
}

const NEWLINE = 0x0a;

/**
 * Checks a backup file fed in chunks: `push` each chunk in order, then `finish`. Memory is bounded
 * by the header unless `keepPayload` is set (the restore needs the bytes). Both throw
 * SnapshotFileError at the first problem found.
 */
export class SnapshotFileReader {
  readonly #keepPayload: boolean;
  /** Bytes before the payload, until both lines are complete. */
  #head: Uint8Array = new Uint8Array(0);
  #header: SnapshotFileHeader | null = null;
  #hash: Hash = createHash('sha256');
  /** Payload bytes seen so far (≤ header.payloadBytes). */
  #payloadSeen = 0;
  readonly #kept: Uint8Array[] = [];

  constructor(options: { readonly keepPayload?: boolean } = {}) {
    this.#keepPayload = options.keepPayload ?? false;
  }

  /** The header, once its line has been read (else null). */
  get header(): SnapshotFileHeader | null {
    return this.#header;
  }

  push(chunk: Uint8Array): void {
    if (this.#header === null) {
      const joined = new Uint8Array(this.#head.length + chunk.length);
      joined.set(this.#head, 0);
      joined.set(chunk, this.#head.length);
      this.#head = joined;
      const rest = this.#tryHeader();
      if (rest === null) return;
      chunk = rest;
    }
    this.#payload(chunk);
  }

  /** Ends the file: returns the header (and the payload when kept), or throws what is wrong. */
  finish(): { header: SnapshotFileHeader; payload: Uint8Array | null } {
    const header = this.#header;
    if (header === null) {
      checkMagic(this.#head, true);
      throw new SnapshotFileError(
        'truncated',
        `truncated: the file ends inside its header (${this.#head.length} bytes)`,
      );
    }
    if (this.#payloadSeen < header.payloadBytes) {
      throw new SnapshotFileError(
        'truncated',
        `truncated: the header announces ${header.payloadBytes} payload bytes, the file holds ${this.#payloadSeen}`,
      );
    }
    const sha256 = this.#hash.digest('hex');
    if (sha256 !== header.sha256) {
      throw new SnapshotFileError(
        'checksum_mismatch',
        `checksum mismatch: the header says sha256 ${header.sha256}, the payload hashes to ${sha256} (the file is corrupt)`,
      );
    }
    const payload = this.#keepPayload ? Buffer.concat(this.#kept) : null;
    return { header, payload };
  }

  /** Parses the two lines once both are in #head; returns the bytes after them, or null. */
  #tryHeader(): Uint8Array | null {
    const head = this.#head;
    checkMagic(head, false);
    const first = head.indexOf(NEWLINE);
    const second = first < 0 ? -1 : head.indexOf(NEWLINE, first + 1);
    if (second < 0) {
      if (head.length > SNAPSHOT_FILE_HEADER_BYTES_MAX)
        throw new SnapshotFileError(
          'bad_header',
          `bad header: no header line within ${SNAPSHOT_FILE_HEADER_BYTES_MAX} bytes`,
        );
      return null;
    }
    const decoder = new TextDecoder();
    checkVersion(decoder.decode(head.subarray(0, first)));
    this.#header = parseHeader(decoder.decode(head.subarray(first + 1, second)));
    this.#head = new Uint8Array(0);
    return head.subarray(second + 1);
  }

  #payload(chunk: Uint8Array): void {
    const header = this.#header;
    if (header === null || chunk.length === 0) return;
    if (this.#payloadSeen + chunk.length > header.payloadBytes) {
      throw new SnapshotFileError(
        'trailing_data',
        `trailing data: more than the ${header.payloadBytes} payload bytes the header announces`,
      );
    }
    this.#payloadSeen += chunk.length;
    this.#hash.update(chunk);
    if (this.#keepPayload) this.#kept.push(Uint8Array.from(chunk));
  }
}

/** Checks a whole backup file in memory; returns its header and payload (SnapshotFileReader). */
export function readSnapshotFile(bytes: Uint8Array): {
  header: SnapshotFileHeader;
  payload: Uint8Array;
} {
  const reader = new SnapshotFileReader({ keepPayload: true });
  reader.push(bytes);
  const { header, payload } = reader.finish();
  return { header, payload: payload ?? new Uint8Array(0) };
}

/** Refuses bytes that do not start like a backup file (`complete`: no more bytes will come). */
function checkMagic(head: Uint8Array, complete: boolean): void {
  const magic = new TextEncoder().encode(SNAPSHOT_FILE_MAGIC + ' ');
  const n = Math.min(head.length, magic.length);
  for (let i = 0; i < n; i++) {
    if (head[i] !== magic[i])
      throw new SnapshotFileError(
        'not_a_snapshot',
        `not a Tenure snapshot file (it does not start with "${SNAPSHOT_FILE_MAGIC}")`,
      );
  }
  if (complete && head.length < magic.length)
    throw new SnapshotFileError(
      'truncated',
      `truncated: the file ends after ${head.length} bytes, before its header`,
    );
}

function checkVersion(line: string): void {
  const text = line.slice(SNAPSHOT_FILE_MAGIC.length + 1);
  if (!/^[0-9]{1,9}$/.test(text))
    throw new SnapshotFileError('bad_header', `bad header: version "${text}" is not a number`);
  const version = Number(text);
  if (version !== SNAPSHOT_FILE_VERSION)
    throw new SnapshotFileError(
      'unsupported_version',
      `unsupported snapshot file version ${version} (this build reads version ${SNAPSHOT_FILE_VERSION})`,
    );
}

const HEADER_FIELDS = [
  'clusterId',
  'nodeId',
  'index',
  'term',
  'clusterTimeMs',
  'stateFormat',
  'payloadBytes',
  'sha256',
  'createdAt',
] as const;

function parseHeader(line: string): SnapshotFileHeader {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    throw new SnapshotFileError('bad_header', 'bad header: the header line is not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new SnapshotFileError('bad_header', 'bad header: the header line is not a JSON object');
  const o = v as Record<string, unknown>;
  const bad = (field: string, what: string): never => {
    throw new SnapshotFileError('bad_header', `bad header: ${field} ${what}`);
  };
  for (const field of HEADER_FIELDS) if (!(field in o)) bad(field, 'is missing');
  for (const field of ['clusterId', 'nodeId', 'stateFormat', 'createdAt'] as const)
    if (typeof o[field] !== 'string') bad(field, 'is not a string');
  for (const field of ['index', 'term', 'payloadBytes'] as const) {
    const n = o[field];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
      bad(field, 'is not a non-negative integer');
  }
  if (typeof o['clusterTimeMs'] !== 'number' || !Number.isFinite(o['clusterTimeMs']))
    bad('clusterTimeMs', 'is not a number');
  if (typeof o['sha256'] !== 'string' || !/^[0-9a-f]{64}$/.test(o['sha256']))
    bad('sha256', 'is not 64 lowercase hex digits');
  return o as unknown as SnapshotFileHeader;
}

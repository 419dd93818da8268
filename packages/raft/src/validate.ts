/**
 * Decode-then-validate for data that crosses a trust boundary (peer frames, disk reads): turns an
 * unknown decoded value into a protocol value, or null when malformed. Shapes are types.ts's.
 */
import type {
  AppendEntriesMsg,
  Entry,
  HardState,
  InstallSnapshotMsg,
  LogIndex,
  Message,
  NodeId,
  SnapshotMeta,
  Term,
} from './core/types.js';
import { asIndex, asTerm } from './core/types.js';
import { decodeMembership, parseMembership } from './core/membership.js';

/** Bound on entries in one decoded AppendEntries (a peer cannot make us loop forever). */
export const DECODED_ENTRIES_MAX = 100_000;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isId = (v: unknown): v is NodeId => typeof v === 'string' && v.length > 0 && v.length <= 200;
const term = (v: unknown): Term | null => (isCount(v) ? asTerm(v) : null);
const index = (v: unknown): LogIndex | null => (isCount(v) ? asIndex(v) : null);

/**
 * Validates one log entry; copies `data` into a plain Uint8Array. A `config` entry must hold a valid
 * membership (core/membership.ts decodeMembership). Null when malformed.
 */
export function parseEntry(v: unknown): Entry | null {
  if (!isObj(v)) return null;
  const t = term(v.term);
  const i = index(v.index);
  if (t === null || i === null || i < 1) return null;
  if (v.type !== 'command' && v.type !== 'noop' && v.type !== 'config') return null;
  if (typeof v.clusterTimeMs !== 'number' || !Number.isFinite(v.clusterTimeMs)) return null;
  if (!(v.data instanceof Uint8Array)) return null;
  if (v.type === 'config' && decodeMembership(v.data) === null) return null;
  return {
    term: t,
    index: i,
    type: v.type,
    clusterTimeMs: v.clusterTimeMs,
    data: new Uint8Array(v.data),
  };
}

/** Validates a hard state record. Null when malformed. */
export function parseHardState(v: unknown): HardState | null {
  if (!isObj(v)) return null;
  const t = term(v.term);
  const c = index(v.commitIndex);
  if (t === null || c === null) return null;
  if (v.votedFor !== null && !isId(v.votedFor)) return null;
  return { term: t, votedFor: v.votedFor, commitIndex: c };
}

/**
 * Validates a snapshot meta record (Raft §7): index ≥ 1, term, finite clusterTimeMs, and — when
 * present — the membership it carries with its configIndex ≤ index (dissertation §5.4.1). Null when
 * malformed.
 */
export function parseSnapshotMeta(v: unknown): SnapshotMeta | null {
  if (!isObj(v)) return null;
  const t = term(v.term);
  const i = index(v.index);
  if (t === null || i === null || i < 1) return null;
  if (typeof v.clusterTimeMs !== 'number' || !Number.isFinite(v.clusterTimeMs)) return null;
  const meta = { index: i, term: t, clusterTimeMs: v.clusterTimeMs };
  if (v.membership === undefined || v.membership === null) return meta;
  const membership = parseMembership(v.membership);
  const configIndex = index(v.configIndex ?? 0);
  if (membership === null || configIndex === null || configIndex > i) return null;
  return { ...meta, membership, configIndex };
}

function parseInstallSnapshot(
  v: Obj,
  base: { from: NodeId; to: NodeId; term: Term },
): InstallSnapshotMsg | null {
  const snapshot = parseSnapshotMeta(v.snapshot);
  if (snapshot === null || !(v.data instanceof Uint8Array)) return null;
  if (typeof v.clusterTimeMs !== 'number' || !Number.isFinite(v.clusterTimeMs)) return null;
  // Copy: a decoded Buffer may be a view into a larger frame buffer.
  return {
    ...base,
    type: 'InstallSnapshot',
    snapshot,
    data: new Uint8Array(v.data),
    clusterTimeMs: v.clusterTimeMs,
  };
}

function parseEntries(v: unknown): Entry[] | null {
  if (!Array.isArray(v) || v.length > DECODED_ENTRIES_MAX) return null;
  const entries: Entry[] = [];
  for (const raw of v) {
    const entry = parseEntry(raw);
    if (entry === null) return null;
    const previous = entries[entries.length - 1];
    if (previous !== undefined && entry.index !== previous.index + 1) return null;
    entries.push(entry);
  }
  return entries;
}

function parseAppendEntries(
  v: Obj,
  base: { from: NodeId; to: NodeId; term: Term },
): AppendEntriesMsg | null {
  const prevLogIndex = index(v.prevLogIndex);
  const prevLogTerm = term(v.prevLogTerm);
  const leaderCommit = index(v.leaderCommit);
  const entries = parseEntries(v.entries);
  if (prevLogIndex === null || prevLogTerm === null || leaderCommit === null || entries === null)
    return null;
  if (
    typeof v.clusterTimeMs !== 'number' ||
    !Number.isFinite(v.clusterTimeMs) ||
    !isCount(v.heartbeatSeq)
  )
    return null;
  if (entries[0] !== undefined && entries[0].index !== prevLogIndex + 1) return null;
  return {
    ...base,
    type: 'AppendEntries',
    prevLogIndex,
    prevLogTerm,
    entries,
    leaderCommit,
    clusterTimeMs: v.clusterTimeMs,
    heartbeatSeq: v.heartbeatSeq,
  };
}

/**
 * Validates a decoded peer message (every field of its `type`, Raft messages of types.ts).
 * Returns a fresh object holding only known fields, or null when anything is missing or mistyped.
 */
export function parseMessage(v: unknown): Message | null {
  if (!isObj(v) || !isId(v.from) || !isId(v.to)) return null;
  const t = term(v.term);
  if (t === null) return null;
  const base = { from: v.from, to: v.to, term: t };
  switch (v.type) {
    case 'PreVote':
    case 'RequestVote': {
      const lastLogIndex = index(v.lastLogIndex);
      const lastLogTerm = term(v.lastLogTerm);
      if (lastLogIndex === null || lastLogTerm === null) return null;
      if (v.type === 'PreVote') return { ...base, type: 'PreVote', lastLogIndex, lastLogTerm };
      if (typeof v.transfer !== 'boolean') return null;
      return { ...base, type: 'RequestVote', lastLogIndex, lastLogTerm, transfer: v.transfer };
    }
    case 'PreVoteResponse':
    case 'RequestVoteResponse':
      if (typeof v.granted !== 'boolean') return null;
      return { ...base, type: v.type, granted: v.granted };
    case 'AppendEntries':
      return parseAppendEntries(v, base);
    case 'AppendEntriesResponse': {
      const matchIndex = index(v.matchIndex);
      const conflictIndex = index(v.conflictIndex);
      const conflictTerm = term(v.conflictTerm);
      if (typeof v.success !== 'boolean' || matchIndex === null || conflictIndex === null)
        return null;
      if (conflictTerm === null || !isCount(v.heartbeatSeq)) return null;
      return {
        ...base,
        type: 'AppendEntriesResponse',
        success: v.success,
        matchIndex,
        conflictIndex,
        conflictTerm,
        heartbeatSeq: v.heartbeatSeq,
      };
    }
    case 'TimeoutNow':
      return { ...base, type: 'TimeoutNow' };
    case 'InstallSnapshot':
      return parseInstallSnapshot(v, base);
    case 'InstallSnapshotResponse': {
      const snapshotIndex = index(v.snapshotIndex);
      const matchIndex = index(v.matchIndex);
      if (snapshotIndex === null || matchIndex === null) return null;
      return { ...base, type: 'InstallSnapshotResponse', snapshotIndex, matchIndex };
    }
    default:
      return null;
  }
}

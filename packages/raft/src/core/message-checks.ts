/**
 * Cheap structural checks of an incoming message before the core acts on it (docs/architecture.md: validate at the
 * gateway, assert inside). The transport decodes and validates shapes; this guards the relations the
 * core's assertions rely on, so a malformed peer message is dropped instead of crashing the node.
 * Cost: O(entries) for AppendEntries, O(1) otherwise (snapshot bytes are not inspected).
 */
import { decodeMembership, encodeMembership } from './membership.js';
import type { AppendEntriesMsg, InstallSnapshotMsg, Message } from './types.js';

const isCount = (n: unknown): boolean => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
const isTimeMs = (n: unknown): boolean => typeof n === 'number' && Number.isFinite(n) && n >= 0;

/**
 * True if `msg` is internally consistent: non-negative integer term/indices, and for AppendEntries
 * contiguous entries starting at prevLogIndex + 1 whose terms are within [prevLogTerm, msg.term] and
 * non-decreasing, with non-decreasing cluster times (Raft §5.3 log matching; docs/concepts.md).
 */
export function isWellFormedMessage(msg: Message): boolean {
  if (!isCount(msg.term)) return false;
  switch (msg.type) {
    case 'PreVote':
    case 'RequestVote':
      return isCount(msg.lastLogIndex) && isCount(msg.lastLogTerm) && msg.lastLogTerm <= msg.term;
    case 'AppendEntries':
      return isWellFormedAppend(msg);
    case 'AppendEntriesResponse':
      return (
        isCount(msg.matchIndex) &&
        isCount(msg.conflictIndex) &&
        isCount(msg.conflictTerm) &&
        isCount(msg.heartbeatSeq)
      );
    case 'InstallSnapshot':
      return isWellFormedInstallSnapshot(msg);
    case 'InstallSnapshotResponse':
      return isCount(msg.snapshotIndex) && isCount(msg.matchIndex);
    case 'PreVoteResponse':
    case 'RequestVoteResponse':
    case 'TimeoutNow':
      return true;
  }
}

/** A snapshot point ≥ 1 whose term is ≤ the message term (Raft §7), with valid times and bytes. */
function isWellFormedInstallSnapshot(msg: InstallSnapshotMsg): boolean {
  const meta = msg.snapshot;
  if (typeof meta !== 'object' || meta === null) return false;
  if (!isCount(meta.index) || meta.index < 1 || !isCount(meta.term) || meta.term > msg.term)
    return false;
  if (meta.membership !== undefined || meta.configIndex !== undefined) {
    const m = meta.membership;
    if (typeof m !== 'object' || m === null) return false;
    if (!isCount(meta.configIndex) || (meta.configIndex ?? 0) > meta.index) return false;
    if (decodeMembership(encodeMembership(m)) === null) return false;
  }
  return (
    isTimeMs(meta.clusterTimeMs) && isTimeMs(msg.clusterTimeMs) && msg.data instanceof Uint8Array
  );
}

function isEntryType(type: unknown): boolean {
  return type === 'command' || type === 'noop' || type === 'config';
}

function isWellFormedAppend(msg: AppendEntriesMsg): boolean {
  if (!isCount(msg.prevLogIndex) || !isCount(msg.prevLogTerm) || !isCount(msg.leaderCommit))
    return false;
  if (!isCount(msg.heartbeatSeq) || !isTimeMs(msg.clusterTimeMs) || msg.prevLogTerm > msg.term)
    return false;
  if (!Array.isArray(msg.entries)) return false;
  let term: number = msg.prevLogTerm;
  let clusterTimeMs = 0;
  for (let i = 0; i < msg.entries.length; i++) {
    const e = msg.entries[i]!;
    const placed = e.index === msg.prevLogIndex + 1 + i;
    if (!placed || !isCount(e.term) || e.term < term || e.term > msg.term) return false;
    if (!isTimeMs(e.clusterTimeMs) || e.clusterTimeMs < clusterTimeMs) return false;
    if (!(e.data instanceof Uint8Array) || !isEntryType(e.type)) return false;
    if (e.type === 'config' && decodeMembership(e.data) === null) return false;
    term = e.term;
    clusterTimeMs = e.clusterTimeMs;
  }
  return true;
}

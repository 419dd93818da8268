/**
 * RaftLog: the in-memory view of one node's log, with the bookkeeping the Ready cycle needs.
 *
 * Index space: entries cover (snapshotIndex, lastIndex]; the entry at `snapshotIndex` is known only
 * by its term and cluster time (after compaction, Raft §7). Index 0 always has term 0.
 * `snapshotIndex` is where the in-memory log starts: it rises by `compactTo` (the runtime dropped
 * entries already covered by a durable snapshot; it may lag the newest snapshot so slow followers
 * still get entries) and by `restore` (a snapshot from the leader replaced the whole log).
 *
 * Cursors, all 1-based log indices, with the invariant
 *   snapshotIndex ≤ appliedIndex ≤ applyHandedOutIndex ≤ commitIndex ≤ lastIndex  and
 *   persistedIndex < unstableFrom ≤ lastIndex + 1:
 * - `unstableFrom`: first index not yet handed out in a Ready for persistence.
 * - `persistedIndex`: last index the runtime confirmed durable (advance). Lowered on truncation.
 * - `commitIndex`: highest index known committed (Raft §5.3); never decreases.
 * - `applyHandedOutIndex`: last index handed out in Ready.committedEntries.
 * - `appliedIndex`: last index the runtime confirmed applied (advance).
 */
import assert from 'node:assert/strict';
import type { Entry, LogIndex, SnapshotMeta, Term } from './types.js';
import { asIndex, asTerm } from './types.js';

/** Per-entry overhead (bytes) counted against `bytesPerMessageMax` besides `data` (index, term, stamps). */
export const entryOverheadBytes = 32;

/** Estimated encoded size of one entry in bytes, for AppendEntries batching (Raft §5.3 batching). */
export function entrySizeBytes(entry: Entry): number {
  return entry.data.byteLength + entryOverheadBytes;
}

/** One node's log in memory plus its Ready cursors (see the file comment for the invariants). */
export class RaftLog {
  /** Last index/term/cluster time before the first held entry (0/0/0 without compaction). Only rises. */
  #snapshotIndex: number;
  #snapshotTerm: Term;
  #snapshotClusterTimeMs: number;
  /** `#entries[i]` has index `#snapshotIndex + 1 + i`. Appended and truncated only at the tail. */
  readonly #entries: Entry[];
  #unstableFrom: number;
  #persistedIndex: number;
  #commitIndex: number;
  #applyHandedOutIndex: number;
  #appliedIndex: number;

  /**
   * Build from what storage recovered. `entries` must be contiguous from snapshot.index + 1 with
   * non-decreasing terms and cluster times; all of them count as persisted. `commitIndex` is clamped
   * into [snapshot.index, lastIndex]; `appliedIndex` (default snapshot.index) must be ≤ commitIndex.
   * Throws (assertion) on malformed input.
   */
  constructor(
    snapshot: SnapshotMeta | null,
    entries: readonly Entry[],
    commitIndex: number,
    appliedIndex?: number,
  ) {
    this.#snapshotIndex = snapshot?.index ?? 0;
    this.#snapshotTerm = snapshot?.term ?? asTerm(0);
    this.#snapshotClusterTimeMs = snapshot?.clusterTimeMs ?? 0;
    this.#entries = [];
    for (const entry of entries) this.#pushChecked(entry);
    const last = this.lastIndex();
    this.#unstableFrom = last + 1;
    this.#persistedIndex = last;
    this.#commitIndex = Math.min(Math.max(commitIndex, this.#snapshotIndex), last);
    this.#appliedIndex = appliedIndex ?? this.#snapshotIndex;
    assert.ok(this.#appliedIndex >= this.#snapshotIndex, 'appliedIndex below snapshot index');
    assert.ok(this.#appliedIndex <= this.#commitIndex, 'appliedIndex above commitIndex');
    this.#applyHandedOutIndex = this.#appliedIndex;
  }

  /** Index of the first entry held in memory (snapshotIndex + 1). */
  firstIndex(): LogIndex {
    return asIndex(this.#snapshotIndex + 1);
  }
  snapshotIndex(): LogIndex {
    return asIndex(this.#snapshotIndex);
  }
  lastIndex(): LogIndex {
    return asIndex(this.#snapshotIndex + this.#entries.length);
  }
  lastTerm(): Term {
    return this.term(this.lastIndex()) ?? this.#snapshotTerm;
  }
  commitIndex(): LogIndex {
    return asIndex(this.#commitIndex);
  }
  appliedIndex(): LogIndex {
    return asIndex(this.#appliedIndex);
  }
  persistedIndex(): LogIndex {
    return asIndex(this.#persistedIndex);
  }
  /** Cluster time (docs/concepts.md) of the last entry, or of the snapshot point (0 without one) for an empty log. */
  lastClusterTimeMs(): number {
    return this.#entries[this.#entries.length - 1]?.clusterTimeMs ?? this.#snapshotClusterTimeMs;
  }

  /** Term at `index`: 0 for index 0, undefined when compacted away or beyond the last index. */
  term(index: number): Term | undefined {
    if (index === 0) return asTerm(0);
    if (index === this.#snapshotIndex) return this.#snapshotTerm;
    return this.#entries[index - this.#snapshotIndex - 1]?.term;
  }

  /** Entry at `index`, or undefined when compacted away or beyond the last index. */
  entry(index: number): Entry | undefined {
    if (index <= this.#snapshotIndex) return undefined;
    return this.#entries[index - this.#snapshotIndex - 1];
  }

  /**
   * Entries from `fromIndex` (≥ firstIndex) up to lastIndex, at most `countMax` of them and at most
   * `bytesMax` by entrySizeBytes — but always at least one if any exist (Raft §5.3 batching).
   * Cost is O(returned entries).
   */
  slice(fromIndex: number, countMax: number, bytesMax: number): Entry[] {
    assert.ok(fromIndex > this.#snapshotIndex, 'slice below firstIndex');
    const start = fromIndex - this.#snapshotIndex - 1;
    const end = Math.min(this.#entries.length, start + countMax);
    let stop = start;
    let sizeBytes = 0;
    while (stop < end) {
      sizeBytes += entrySizeBytes(this.#entries[stop]!);
      if (sizeBytes > bytesMax && stop > start) break;
      stop++;
    }
    return this.#entries.slice(start, stop);
  }

  /** True if the entry at `index` exists (or is the snapshot point) with term `term`. */
  matchTerm(index: number, term: Term): boolean {
    return this.term(index) === term;
  }

  /** §5.4.1: a log ending at (lastTerm, lastIndex) is at least as up-to-date as this one. */
  isUpToDate(lastIndex: number, lastTerm: Term): boolean {
    const myLastTerm = this.lastTerm();
    return lastTerm > myLastTerm || (lastTerm === myLastTerm && lastIndex >= this.lastIndex());
  }

  /**
   * First index of the run of entries with the same term as `index`, not going below `floorIndex`
   * (used for the §5.3 conflictIndex hint). Cost O(length of the run above the floor).
   */
  firstIndexOfTermAt(index: number, floorIndex: number): number {
    const term = this.term(index);
    assert.ok(term !== undefined, 'firstIndexOfTermAt: index not in log');
    const floor = Math.max(floorIndex, this.#snapshotIndex + 1);
    let i = index;
    while (i > floor && this.term(i - 1) === term) i--;
    return i;
  }

  /**
   * Highest index ≤ `fromIndex` and > `floorIndex` whose term is `term`, or null (the leader side of §5.3
   * fast backtracking). Scans down while terms are larger than `term`.
   */
  lastIndexOfTerm(term: Term, fromIndex: number, floorIndex: number): number | null {
    let i = Math.min(fromIndex, this.lastIndex());
    const floor = Math.max(floorIndex, this.#snapshotIndex);
    while (i > floor) {
      const t = this.term(i);
      if (t === undefined || t < term) return null;
      if (t === term) return i;
      i--;
    }
    return null;
  }

  /** Leader append (Raft §5.3): `entry.index` must be lastIndex + 1. Throws (assertion) otherwise. */
  append(entry: Entry): void {
    this.#pushChecked(entry);
  }

  /**
   * Follower append after a successful consistency check at `prevIndex` (Raft §5.3 step 3–4): skip
   * entries already present with the same term, truncate at the first conflict, append the rest.
   * Entries at or below commitIndex must match (Leader Completeness, §5.4); a conflict there is a
   * safety violation and throws. With `truncateMatching` (UNSAFE variant) the log is cut right after
   * max(prevIndex, commitIndex) even when entries match.
   */
  appendFromLeader(prevIndex: number, entries: readonly Entry[], truncateMatching: boolean): void {
    if (truncateMatching) {
      const cut = Math.max(prevIndex, this.#commitIndex) + 1;
      if (cut <= this.lastIndex()) this.#truncateFrom(cut);
      for (const entry of entries)
        if (entry.index === this.lastIndex() + 1) this.#pushChecked(entry);
      return;
    }
    let i = 0;
    while (i < entries.length) {
      const entry = entries[i]!;
      const existing = this.term(entry.index);
      if (existing === undefined) break;
      if (existing !== entry.term) {
        assert.ok(
          entry.index > this.#commitIndex,
          'conflict at or below commitIndex (committed entry overwritten)',
        );
        this.#truncateFrom(entry.index);
        break;
      }
      i++;
    }
    for (; i < entries.length; i++) this.#pushChecked(entries[i]!);
  }

  /** Cluster time stamp (docs/concepts.md) of the entry at `index`, or of the compaction point; undefined otherwise. */
  clusterTimeAt(index: number): number | undefined {
    if (index === this.#snapshotIndex) return this.#snapshotClusterTimeMs;
    return this.entry(index)?.clusterTimeMs;
  }

  /**
   * Drop entries ≤ `index` from memory (Raft §7 log compaction); term and cluster time of `index`
   * are kept. Only applied and persisted entries may go: index ≤ appliedIndex and
   * index ≤ persistedIndex (assertion). No-op if index ≤ snapshotIndex. Cost O(remaining entries).
   */
  compactTo(index: number): void {
    if (index <= this.#snapshotIndex) return;
    assert.ok(index <= this.#appliedIndex, 'compacting entries not yet applied');
    assert.ok(index <= this.#persistedIndex, 'compacting entries not yet persisted');
    const at = this.entry(index)!;
    this.#entries.splice(0, index - this.#snapshotIndex);
    this.#snapshotIndex = index;
    this.#snapshotTerm = at.term;
    this.#snapshotClusterTimeMs = at.clusterTimeMs;
  }

  /**
   * Replace the whole log by a snapshot received from the leader (Raft §7, Figure 13 step 7): the
   * log becomes empty after `meta.index`, and every cursor moves to meta.index (the runtime persists
   * and restores the snapshot before applying anything later — types.ts Ready). Must be beyond
   * commitIndex (assertion): a snapshot the log already covers is never installed.
   */
  restore(meta: SnapshotMeta): void {
    assert.ok(meta.index > this.#commitIndex, 'restoring a snapshot at or below commitIndex');
    this.#entries.length = 0;
    this.#snapshotIndex = meta.index;
    this.#snapshotTerm = meta.term;
    this.#snapshotClusterTimeMs = meta.clusterTimeMs;
    this.#commitIndex = meta.index;
    this.#appliedIndex = meta.index;
    this.#applyHandedOutIndex = meta.index;
    this.#persistedIndex = meta.index;
    this.#unstableFrom = meta.index + 1;
  }

  /** Raise commitIndex to `index` (never lowers it). Throws (assertion) if index > lastIndex. */
  commitTo(index: number): boolean {
    if (index <= this.#commitIndex) return false;
    assert.ok(index <= this.lastIndex(), 'commitIndex beyond lastIndex');
    this.#commitIndex = index;
    return true;
  }

  /** True if entries exist that were never handed out in a Ready. */
  hasUnstable(): boolean {
    return this.#unstableFrom <= this.lastIndex();
  }
  /** Hand out the not-yet-handed-out entries (Ready.entries). */
  takeUnstable(): Entry[] {
    if (!this.hasUnstable()) return [];
    const out = this.#entries.slice(this.#unstableFrom - this.#snapshotIndex - 1);
    this.#unstableFrom = this.lastIndex() + 1;
    return out;
  }
  /** True if committed entries wait to be handed out for applying. */
  hasCommittedToHandOut(): boolean {
    // ready() hands out every unstable entry before committed ones, so all of (applied, commit] qualify.
    return this.#applyHandedOutIndex < this.#commitIndex;
  }
  /**
   * Hand out committed entries (Ready.committedEntries), at most `countMax`. Only entries already
   * handed out for persistence (call takeUnstable first in the same Ready) are eligible.
   */
  takeCommitted(countMax: number): Entry[] {
    const hi = Math.min(
      this.#commitIndex,
      this.#unstableFrom - 1,
      this.#applyHandedOutIndex + countMax,
    );
    if (hi <= this.#applyHandedOutIndex) return [];
    const out = this.#entries.slice(
      this.#applyHandedOutIndex - this.#snapshotIndex,
      hi - this.#snapshotIndex,
    );
    this.#applyHandedOutIndex = hi;
    return out;
  }

  /** Runtime confirmed entries up to (index, term) durable; ignored if that entry was overwritten since. */
  stableTo(index: number, term: Term): void {
    if (index < this.#unstableFrom && this.term(index) === term && index > this.#persistedIndex) {
      this.#persistedIndex = index;
    }
  }
  /** Runtime confirmed entries up to `index` applied. */
  appliedTo(index: number): void {
    assert.ok(index <= this.#applyHandedOutIndex, 'applied beyond what was handed out');
    if (index > this.#appliedIndex) this.#appliedIndex = index;
  }

  /** Throws (assertion) if a cursor relation is broken (see the file comment). O(1). */
  checkInvariants(): void {
    const last = this.lastIndex();
    assert.ok(this.#snapshotIndex <= this.#appliedIndex, 'snapshotIndex ≤ appliedIndex');
    assert.ok(
      this.#appliedIndex <= this.#applyHandedOutIndex,
      'appliedIndex ≤ applyHandedOutIndex',
    );
    assert.ok(this.#applyHandedOutIndex <= this.#commitIndex, 'applyHandedOutIndex ≤ commitIndex');
    assert.ok(this.#commitIndex <= last, 'commitIndex ≤ lastIndex');
    assert.ok(this.#persistedIndex < this.#unstableFrom, 'persistedIndex < unstableFrom');
    assert.ok(this.#unstableFrom <= last + 1, 'unstableFrom ≤ lastIndex + 1');
  }

  #truncateFrom(index: number): void {
    assert.ok(index > this.#commitIndex, 'truncating committed entries');
    this.#entries.length = index - this.#snapshotIndex - 1;
    if (this.#unstableFrom > index) this.#unstableFrom = index;
    if (this.#persistedIndex >= index) this.#persistedIndex = index - 1;
  }

  /** Append one entry after checking contiguity, term and cluster-time monotonicity (Raft §5.3, docs/concepts.md). */
  #pushChecked(entry: Entry): void {
    const last = this.lastIndex();
    assert.equal(entry.index, last + 1, 'entries must be contiguous');
    assert.ok(entry.term >= this.lastTerm(), 'log terms must not decrease');
    assert.ok(
      entry.clusterTimeMs >= this.lastClusterTimeMs(),
      'clusterTimeMs must not decrease along the log',
    );
    this.#entries.push(entry);
  }
}

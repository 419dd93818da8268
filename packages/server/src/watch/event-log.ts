/**
 * The node's bounded in-memory log of change events for the streaming watch (docs/api.md,
 * "Streaming watch"), keyed by revision (the log index of the entry that made the change). It is
 * filled from every applied entry on every node, leader or follower, so any node can serve a
 * watch. It keeps every change with a revision greater than `baseRevision` and nothing older:
 * a resume from an older revision must be answered `compacted`, never skipped silently.
 *
 * Bounds: at most `eventsMax` events and `bytesMax` bytes of serialized event data; the oldest
 * whole revisions are dropped first (the newest revision is always kept, so one oversized entry
 * briefly exceeds the bound rather than being lost). A snapshot install restarts the log at the
 * snapshot's index (`reset`).
 */
import { strict as assert } from 'node:assert';
import type { ChangeEvent, ChangeKind, ChangeType } from '@tenure/coord-state';

/** One stored event: its filter fields and its `data:` JSON, serialized once for every watcher. */
export interface LoggedEvent {
  /** Position in the log since the node started; consecutive, never reused. */
  readonly seq: number;
  readonly revision: number;
  readonly kind: ChangeKind;
  readonly name: string;
  readonly type: ChangeType;
  /** `{revision, kind, name, type, ...}` as JSON (the SSE `data:` line). */
  readonly data: string;
  /** UTF-8 size of `data` (the log's byte bound counts it). */
  readonly bytes: number;
  /** True on the last event of its revision (the SSE `id:` goes there). */
  readonly lastOfRevision: boolean;
}

/** What the log tells its listeners. */
export interface EventLogListener {
  /** Events of one new revision were appended (possibly none: the revision still advanced). */
  appended(revision: number): void;
  /** The log restarted at `revision` (snapshot install): everything before it is gone. */
  reset(revision: number): void;
}

/** Bounds of the log. */
export interface EventLogLimits {
  readonly eventsMax: number;
  readonly bytesMax: number;
}

/** Where a resume from `fromRevision` starts: a log position, or `compacted`. */
export type ResumePoint =
  | { readonly kind: 'ok'; readonly seq: number }
  | { readonly kind: 'compacted'; readonly oldestRevision: number };

/** The event log of one node. Single-threaded: mutated only from the apply path. */
export class EventLog {
  readonly #limits: EventLogLimits;
  /** Stored events, oldest first, from index #start; `#events[#start].seq === #firstSeq`. */
  #events: LoggedEvent[] = [];
  #start = 0;
  /** Seq of the oldest stored event (== #nextSeq when empty). */
  #firstSeq = 0;
  #nextSeq = 0;
  #bytes = 0;
  /** Every change with revision > baseRevision is stored. Invariant: base ≤ last. */
  #baseRevision: number;
  /** Revision of the last applied entry seen (with or without events). */
  #lastRevision: number;
  readonly #listeners = new Set<EventLogListener>();

  /** An empty log whose history starts after `startRevision` (the node's applied index). */
  constructor(startRevision: number, limits: EventLogLimits) {
    assert.ok(limits.eventsMax >= 1 && limits.bytesMax >= 1, 'event log bounds must be ≥ 1');
    this.#limits = limits;
    this.#baseRevision = startRevision;
    this.#lastRevision = startRevision;
  }

  /** Changes with a revision above this are all kept; a resume from below it is `compacted`. */
  get baseRevision(): number {
    return this.#baseRevision;
  }

  /** The revision of the last applied entry the log has seen. */
  get lastRevision(): number {
    return this.#lastRevision;
  }

  /** Seq of the oldest stored event; a reader whose next seq is below it has lost events. */
  get firstSeq(): number {
    return this.#firstSeq;
  }

  /** Seq the next appended event will get (a reader at this seq is caught up). */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /** Stored events and their serialized bytes (metrics, tests). */
  size(): { events: number; bytes: number } {
    return { events: this.#nextSeq - this.#firstSeq, bytes: this.#bytes };
  }

  /** The event at `seq` (firstSeq ≤ seq < nextSeq). */
  at(seq: number): LoggedEvent {
    assert.ok(seq >= this.#firstSeq && seq < this.#nextSeq, `event log: seq ${seq} not stored`);
    return this.#events[this.#start + seq - this.#firstSeq]!;
  }

  /** Appends the events of the entry at `revision` (> lastRevision), then tells the listeners. */
  append(revision: number, events: readonly ChangeEvent[]): void {
    assert.ok(
      revision > this.#lastRevision,
      `event log: revision ${revision} not after ${this.#lastRevision}`,
    );
    events.forEach((e, i) => {
      const data = JSON.stringify({ revision, ...e });
      const bytes = Buffer.byteLength(data);
      this.#events.push({
        seq: this.#nextSeq++,
        revision,
        kind: e.kind,
        name: e.name,
        type: e.type,
        data,
        bytes,
        lastOfRevision: i === events.length - 1,
      });
      this.#bytes += bytes;
    });
    this.#lastRevision = revision;
    this.#evict();
    for (const l of [...this.#listeners]) l.appended(revision);
  }

  /** Restarts the log at `revision` (a snapshot install; > lastRevision), then tells the listeners. */
  reset(revision: number): void {
    assert.ok(revision >= this.#lastRevision, `event log: reset to ${revision} goes back`);
    this.#events = [];
    this.#start = 0;
    this.#firstSeq = this.#nextSeq;
    this.#bytes = 0;
    this.#baseRevision = revision;
    this.#lastRevision = revision;
    for (const l of [...this.#listeners]) l.reset(revision);
  }

  /**
   * Where a stream of every change after `fromRevision` starts: the seq of the first stored event
   * with a greater revision (nextSeq when none yet, also when fromRevision is ahead of this node),
   * or `compacted` when changes after `fromRevision` are no longer all kept.
   */
  resumePoint(fromRevision: number): ResumePoint {
    if (fromRevision < this.#baseRevision)
      return { kind: 'compacted', oldestRevision: this.#baseRevision };
    let lo = this.#firstSeq;
    let hi = this.#nextSeq;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).revision <= fromRevision) lo = mid + 1;
      else hi = mid;
    }
    return { kind: 'ok', seq: lo };
  }

  /** Registers a listener; returns the unsubscribe function. */
  listen(listener: EventLogListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Listeners registered (open watches; leak tests). */
  listeners(): number {
    return this.#listeners.size;
  }

  /** Drops the oldest whole revisions while over a bound, never the newest revision. */
  #evict(): void {
    const overBound = (): boolean =>
      this.#nextSeq - this.#firstSeq > this.#limits.eventsMax ||
      this.#bytes > this.#limits.bytesMax;
    while (overBound()) {
      const oldest = this.at(this.#firstSeq).revision;
      if (oldest === this.#lastRevision) break;
      while (this.#firstSeq < this.#nextSeq && this.at(this.#firstSeq).revision === oldest) {
        this.#bytes -= this.at(this.#firstSeq).bytes;
        this.#start++;
        this.#firstSeq++;
      }
      this.#baseRevision = oldest;
    }
    // Reclaim the dropped prefix once it is at least half of the array (amortized O(1)).
    if (this.#start > 1024 && this.#start * 2 > this.#events.length) {
      this.#events = this.#events.slice(this.#start);
      this.#start = 0;
    }
  }

  /** Throws if an internal invariant is broken (tests). */
  checkInvariants(): void {
    assert.ok(this.#baseRevision <= this.#lastRevision, 'base ≤ last');
    assert.equal(this.#events.length - this.#start, this.#nextSeq - this.#firstSeq, 'stored count');
    let bytes = 0;
    let prev = this.#baseRevision;
    for (let s = this.#firstSeq; s < this.#nextSeq; s++) {
      const e = this.at(s);
      assert.ok(e.seq === s && e.revision > this.#baseRevision && e.revision >= prev, 'order');
      prev = e.revision;
      bytes += e.bytes;
    }
    assert.equal(bytes, this.#bytes, 'byte count');
  }
}

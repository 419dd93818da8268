/**
 * One open streaming watch (docs/api.md, "Streaming watch"): a reader of the node's EventLog that
 * writes the changes passing its filter to an SSE sink, in log order, from a resume revision.
 *
 * - It holds a position in the shared log, not a copy of the events: its "buffer" is the part of
 *   the log it has not written yet. When the sink refuses more data (`write` answered false) it
 *   waits for `drain`; if more than `bufferEventsMax` matching events then wait for it, or the log
 *   drops events it has not written, it sends `overflow` and ends (never skips silently).
 * - The `id:` of a revision goes on its last event in this stream, so a reader resuming from its
 *   last id never loses the rest of a revision whose events were cut off mid-way.
 * - A snapshot install that moves the log past its position ends it with `compacted`.
 * - Every write is authorized first (`authorize`, against the auth state current then): a stream
 *   whose token was revoked or lost the right ends with an `error` event instead (docs/security.md).
 */
import { strict as assert } from 'node:assert';
import type { EventLog, EventLogListener } from './event-log.js';
import {
  changeFrame,
  compactedFrame,
  errorFrame,
  KEEPALIVE_FRAME,
  overflowFrame,
  progressFrame,
} from './sse.js';
import { matches, type WatchFilter } from './watch-filter.js';

/** Where the frames go: the HTTP response in the server, a fake in tests. */
export interface SseSink {
  /** Queues `chunk`; false when the caller should wait for `onDrain` before writing more. */
  write(chunk: string): boolean;
  /** Calls `fn` once, when the sink takes data again. */
  onDrain(fn: () => void): void;
  /** Ends the response. */
  end(): void;
}

/** How a stream ended. */
export type WatchEndReason = 'compacted' | 'overflow' | 'closed' | 'refused';

/** Why a stream may no longer send: an error code (`unauthorized`, `forbidden`) and message. */
export interface WatchRefusal {
  readonly code: string;
  readonly message: string;
}

/** Options of one stream. */
export interface WatchStreamOptions {
  readonly filter: WatchFilter;
  /** Most matching events that may wait for a blocked sink before `overflow`. */
  readonly bufferEventsMax: number;
  /** Called once when the stream ends, for whatever reason. */
  readonly onEnd: (reason: WatchEndReason) => void;
  /**
   * Runs the write of newly appended events later (default `setImmediate`): appends arrive inside
   * Raft's apply, which must not wait for thousands of socket writes, and the entries applied
   * meanwhile go out in one write. Tests pass a synchronous one.
   */
  readonly schedule?: (fn: () => void) => void;
  /**
   * Asked before every write: null while the stream may go on, else why not (the stream then
   * sends an `error` event and ends). Default: always allowed (auth off).
   */
  readonly authorize?: () => WatchRefusal | null;
}

/** A write gathers whole revisions up to about this many characters. */
const CHUNK_CHARS_MAX = 64 * 1024;

/** A watch stream; `start` it once, `close` it when the client goes away. */
export class WatchStream implements EventLogListener {
  readonly #log: EventLog;
  readonly #sink: SseSink;
  readonly #opts: WatchStreamOptions;
  /** Next log seq to look at. Invariant while open: seq ≤ log.nextSeq. */
  #cursor = 0;
  /** Every matching change up to this revision has been written (the resume point). */
  #position = 0;
  /** The last `id:` written (≤ #position). */
  #lastId = 0;
  /** True while waiting for the sink's drain. */
  #blocked = false;
  /** While blocked: matching events not yet written (counted up to bufferEventsMax + 1). */
  #backlog = 0;
  #unlisten: (() => void) | null = null;
  #ended = false;
  /** True while a pump is scheduled and has not run yet. */
  #pumpScheduled = false;

  constructor(log: EventLog, sink: SseSink, opts: WatchStreamOptions) {
    assert.ok(opts.bufferEventsMax >= 1, 'bufferEventsMax ≥ 1');
    this.#log = log;
    this.#sink = sink;
    this.#opts = opts;
  }

  /** True once ended. */
  get ended(): boolean {
    return this.#ended;
  }

  /**
   * Starts after `fromRevision` (null: after the log's last revision, i.e. with the next change):
   * a `progress` event naming the start, then the stored changes after it, then live ones. A
   * revision older than the log keeps gets `compacted` and the end.
   */
  start(fromRevision: number | null): void {
    const from = fromRevision ?? this.#log.lastRevision;
    const point = this.#log.resumePoint(from);
    if (point.kind === 'compacted') {
      this.#sink.write(compactedFrame(from, point.oldestRevision));
      this.#end('compacted');
      return;
    }
    this.#cursor = point.seq;
    this.#position = from;
    this.#lastId = from;
    this.#unlisten = this.#log.listen(this);
    if (this.#sink.write(progressFrame(from))) this.#pump();
    else this.#block();
  }

  /** EventLogListener: a revision was appended. */
  appended(revision: number): void {
    if (this.#ended) return;
    if (this.#cursor < this.#log.firstSeq) return this.#overflow();
    if (!this.#blocked) return this.#schedulePump();
    for (let s = this.#log.nextSeq - 1; s >= this.#cursor; s--) {
      const e = this.#log.at(s);
      if (e.revision !== revision) break;
      if (matches(this.#opts.filter, e)) this.#backlog++;
    }
    if (this.#backlog > this.#opts.bufferEventsMax) this.#overflow();
  }

  /** EventLogListener: the log restarted at `revision` (snapshot install). */
  reset(revision: number): void {
    if (this.#ended) return;
    if (this.#position < revision) {
      this.#sink.write(compactedFrame(this.#position, revision));
      this.#end('compacted');
      return;
    }
    this.#cursor = this.#log.nextSeq;
  }

  /**
   * Keepalive tick: a comment, and when caught up with a log that moved on (changes this watch
   * filtered out), a `progress` event so a resume starts from there.
   */
  keepalive(): void {
    if (this.#ended || this.#blocked || this.#refused()) return;
    let ok = this.#sink.write(KEEPALIVE_FRAME);
    if (ok && this.#cursor === this.#log.nextSeq && this.#log.lastRevision > this.#lastId) {
      this.#position = Math.max(this.#position, this.#log.lastRevision);
      this.#lastId = this.#position;
      ok = this.#sink.write(progressFrame(this.#lastId));
    }
    if (!ok) this.#block();
  }

  /** Auth changed: end now, with an `error` event, if the stream may no longer send. */
  reauthorize(): void {
    if (!this.#ended) this.#refused();
  }

  /** The client went away (or the server is closing): stop without another frame. */
  close(): void {
    this.#end('closed');
  }

  #schedulePump(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    (this.#opts.schedule ?? setImmediate)(() => {
      this.#pumpScheduled = false;
      if (!this.#ended && !this.#blocked) this.#pump();
    });
  }

  /** Writes whole revisions from the cursor until caught up or the sink pushes back. */
  #pump(): void {
    const log = this.#log;
    if (this.#ended || this.#refused()) return;
    while (!this.#ended && !this.#blocked && this.#cursor < log.nextSeq) {
      if (this.#cursor < log.firstSeq) return this.#overflow();
      const chunk = this.#nextChunk();
      if (chunk.length > 0 && !this.#sink.write(chunk)) this.#block();
    }
    if (!this.#blocked && this.#cursor === log.nextSeq)
      this.#position = Math.max(this.#position, log.lastRevision);
  }

  /** The frames of whole revisions from the cursor (up to CHUNK_CHARS_MAX), moving the cursor. */
  #nextChunk(): string {
    const log = this.#log;
    let out = '';
    while (out.length < CHUNK_CHARS_MAX && this.#cursor < log.nextSeq) {
      const revision = log.at(this.#cursor).revision;
      let end = this.#cursor;
      while (end < log.nextSeq && log.at(end).revision === revision) end++;
      let chunk = '';
      let last = -1;
      // A stream resumed ahead of this node skips what its reader has already seen elsewhere.
      if (revision > this.#position)
        for (let s = this.#cursor; s < end; s++)
          if (matches(this.#opts.filter, log.at(s))) last = s;
      for (let s = this.#cursor; s <= last; s++) {
        const e = log.at(s);
        if (matches(this.#opts.filter, e)) chunk += changeFrame(e, s === last);
      }
      this.#cursor = end;
      this.#position = Math.max(this.#position, revision);
      if (chunk.length === 0) continue;
      this.#lastId = revision;
      out += chunk;
    }
    return out;
  }

  /** The sink refused data: count what waits, overflow at once if too much, else wait for drain. */
  #block(): void {
    this.#blocked = true;
    this.#backlog = 0;
    const max = this.#opts.bufferEventsMax;
    for (let s = this.#cursor; s < this.#log.nextSeq && this.#backlog <= max; s++)
      if (matches(this.#opts.filter, this.#log.at(s))) this.#backlog++;
    if (this.#backlog > max) return this.#overflow();
    this.#sink.onDrain(() => {
      if (this.#ended) return;
      this.#blocked = false;
      this.#backlog = 0;
      this.#pump();
    });
  }

  /** True (and ended, after an `error` event) when `authorize` refuses the stream now. */
  #refused(): boolean {
    const refusal = this.#opts.authorize?.() ?? null;
    if (refusal === null) return false;
    this.#sink.write(errorFrame(refusal.code, refusal.message));
    this.#end('refused');
    return true;
  }

  #overflow(): void {
    this.#sink.write(overflowFrame(this.#position));
    this.#end('overflow');
  }

  #end(reason: WatchEndReason): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#unlisten?.();
    this.#unlisten = null;
    this.#sink.end();
    this.#opts.onEnd(reason);
  }
}

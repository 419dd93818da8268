/**
 * The simulator's discrete-event scheduler: a binary min-heap of callbacks keyed by (sim time ms, seq).
 *
 * Ties at the same instant run in scheduling order (seq), which keeps runs deterministic.
 */
import assert from 'node:assert/strict';

interface ScheduledEvent {
  readonly atMs: number;
  readonly seq: number;
  readonly run: () => void;
}

/** Bound on events waiting at once; a run that exceeds it has a runaway feedback loop (a bug). */
export const EVENTS_QUEUED_MAX = 1_000_000;

/**
 * Simulated time advances only by popping events: `nowMs` is the time of the event being run.
 * Scheduling in the past is a bug (assertion).
 */
export class EventQueue {
  #heap: ScheduledEvent[] = [];
  #seq = 0;
  #nowMs = 0;
  #eventsRun = 0;

  /** Current simulated time in ms (non-decreasing). */
  get nowMs(): number {
    return this.#nowMs;
  }

  /** Number of events run so far. */
  get eventsRun(): number {
    return this.#eventsRun;
  }

  get size(): number {
    return this.#heap.length;
  }

  /** Run `run` at sim time `atMs` (≥ now). */
  at(atMs: number, run: () => void): void {
    assert.ok(
      atMs >= this.#nowMs && Number.isFinite(atMs),
      `event scheduled in the past: ${atMs} < ${this.#nowMs}`,
    );
    assert.ok(this.#heap.length < EVENTS_QUEUED_MAX, 'event queue overflow (EVENTS_QUEUED_MAX)');
    this.#push({ atMs, seq: this.#seq++, run });
  }

  /** Run `run` `delayMs` (≥ 0) from now. */
  after(delayMs: number, run: () => void): void {
    this.at(this.#nowMs + delayMs, run);
  }

  /** Run the next event if it is due at or before `untilMs`; returns false when none is. */
  runNext(untilMs: number): boolean {
    const top = this.#heap[0];
    if (top === undefined || top.atMs > untilMs) return false;
    this.#pop();
    this.#nowMs = top.atMs;
    this.#eventsRun++;
    top.run();
    return true;
  }

  #less(a: ScheduledEvent, b: ScheduledEvent): boolean {
    return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);
  }

  #push(ev: ScheduledEvent): void {
    const heap = this.#heap;
    heap.push(ev);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && this.#less(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && this.#less(heap[r]!, heap[m]!)) m = r;
      if (m === i) break;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  }
}

/**
 * The state snapshot of snapshot.ts written in bounded steps, so a runtime can encode a large state
 * without holding its event loop for the whole encoding (docs/operations.md "Snapshots of a large
 * state"). The concatenation of the slices is byte for byte `writeSnapshot(core)`: the same
 * MessagePack document, written piece by piece — the top-level map header, each field name, each
 * section's array header, then its rows packed one by one with the same msgpackr settings.
 *
 * Each step (one `next()` of the generator) does at most about `sliceEntries` units of work: rows
 * encoded, or names gathered and sorted. The by-name sections are sorted without one big sort:
 * names are gathered and sorted in runs of `sliceEntries` (one step each), then merged lazily while
 * the rows are written (a k-way merge, log(runs) comparisons a row).
 *
 * The state must not change between steps: the bytes must describe one applied index. The runtime
 * holds applies while it drives the generator; a step that finds the applied index moved throws.
 * Pure and deterministic: no timers, no I/O — the caller decides when to take the next step.
 */
import assert from 'node:assert';
import { authRows } from './auth.js';
import { makePackr } from './codec.js';
import type { Core } from './core.js';
import {
  compareKeys,
  electionRow,
  idempotencyRow,
  kvRow,
  leaseRow,
  semaphoreRow,
  sessionRow,
  STATE_SNAPSHOT_FORMAT,
  waiterOutcomeRow,
} from './snapshot.js';

/**
 * Default bound on the work of one step of `snapshotSlices`: rows encoded, or names sorted. A lease
 * row costs about 10 µs of CPU to build, pack and hash (`npm run bench:snapshot-loop`), so a step
 * is a few milliseconds — well under a heartbeat interval; a lease with many waiters weighs more,
 * bounded by the waiter limits.
 */
export const SNAPSHOT_SLICE_ENTRIES = 256;

const packr = makePackr();

/** Fields of the snapshot document, in the order `writeSnapshot` writes them. */
const DOC_FIELDS = [
  'format',
  'lastIndex',
  'lastTimeMs',
  'dueSeq',
  'sessions',
  'leases',
  'semaphores',
  'elections',
  'retiredElections',
  'kv',
  'idempotency',
  'waiterOutcomes',
  'history',
  'auth',
] as const;

/**
 * The snapshot of `core` in slices: concatenated, they are `writeSnapshot(core)`. Each `next()` does
 * at most about `sliceEntries` (a positive integer) units of work and yields the bytes it wrote
 * (possibly none while names are being sorted). Throws (assertion) if `core` applied an entry
 * between two steps.
 */
export function* snapshotSlices(
  core: Core,
  sliceEntries: number = SNAPSHOT_SLICE_ENTRIES,
): Generator<Uint8Array, void, undefined> {
  assert(
    Number.isSafeInteger(sliceEntries) && sliceEntries > 0,
    'sliceEntries: a positive integer',
  );
  const out = new SliceWriter(core, sliceEntries);
  const field = (name: (typeof DOC_FIELDS)[number]): void => {
    assert.equal(name, DOC_FIELDS[out.fields++], 'snapshot slices: fields out of order');
    out.pack(name);
  };
  out.raw(mapHeader16(DOC_FIELDS.length));
  field('format');
  out.pack(STATE_SNAPSHOT_FORMAT);
  field('lastIndex');
  out.pack(core.lastIndex);
  field('lastTimeMs');
  out.pack(core.lastTimeMs);
  field('dueSeq');
  out.pack(core.dueSeq);
  field('sessions');
  yield* sortedSection(out, core.sessions, sessionRow);
  field('leases');
  yield* sortedSection(out, core.leases, leaseRow);
  field('semaphores');
  yield* sortedSection(out, core.semaphores, semaphoreRow);
  field('elections');
  yield* sortedSection(out, core.elections, electionRow);
  field('retiredElections');
  yield* orderedSection(out, core.retiredElections.size, core.retiredElections.entries(), (e) => e);
  field('kv');
  yield* sortedSection(out, core.kv, kvRow);
  field('idempotency');
  yield* orderedSection(out, core.idempotency.size, core.idempotency.entries(), ([key, e]) =>
    idempotencyRow(key, e),
  );
  field('waiterOutcomes');
  yield* orderedSection(out, core.waiterOutcomes.size, core.waiterOutcomes.entries(), ([id, e]) =>
    waiterOutcomeRow(id, e),
  );
  field('history');
  yield* orderedSection(out, core.history.namesCount, core.history.entries(), (e) => e);
  field('auth');
  out.pack(authRows(core.auth));
  assert.equal(out.fields, DOC_FIELDS.length, 'snapshot slices: a field is missing');
  yield out.take();
}

/** Collects the bytes of one step and counts its work. */
class SliceWriter {
  readonly #core: Core;
  readonly #lastIndex: number;
  readonly #sliceEntries: number;
  #parts: Uint8Array[] = [];
  #bytes = 0;
  #work = 0;
  /** Top-level fields written so far. */
  fields = 0;

  constructor(core: Core, sliceEntries: number) {
    this.#core = core;
    this.#lastIndex = core.lastIndex;
    this.#sliceEntries = sliceEntries;
  }

  get sliceEntries(): number {
    return this.#sliceEntries;
  }

  raw(bytes: Uint8Array): void {
    this.#parts.push(bytes);
    this.#bytes += bytes.byteLength;
  }

  pack(value: unknown): void {
    this.raw(packr.pack(value));
  }

  /** Counts `units` of work; true when this step's budget is spent (the caller yields). */
  charge(units: number): boolean {
    this.#work += units;
    return this.#work >= this.#sliceEntries;
  }

  /** Ends a step: yields its bytes, and on resumption checks that the state did not move. */
  *flush(): Generator<Uint8Array, void, undefined> {
    yield this.take();
    assert.equal(
      this.#core.lastIndex,
      this.#lastIndex,
      'snapshot slices: the state applied an entry between two slices',
    );
  }

  /** The bytes written since the last take, as one array. */
  take(): Uint8Array {
    const joined = new Uint8Array(this.#bytes);
    let at = 0;
    for (const part of this.#parts) {
      joined.set(part, at);
      at += part.byteLength;
    }
    this.#parts = [];
    this.#bytes = 0;
    this.#work = 0;
    return joined;
  }
}

/** A section of rows sorted by name: gathered and sorted in runs, then merged as it is written. */
function* sortedSection<T>(
  out: SliceWriter,
  map: ReadonlyMap<string, T>,
  row: (name: string, value: T) => unknown,
): Generator<Uint8Array, void, undefined> {
  out.raw(arrayHeader(map.size));
  const runs: string[][] = [];
  let run: string[] = [];
  for (const name of map.keys()) {
    run.push(name);
    if (run.length < out.sliceEntries) continue;
    runs.push(run.sort(compareKeys));
    run = [];
    if (out.charge(out.sliceEntries)) yield* out.flush();
  }
  if (run.length > 0) runs.push(run.sort(compareKeys));
  let written = 0;
  for (const name of mergeRuns(runs)) {
    out.pack(row(name, map.get(name)!));
    written++;
    if (out.charge(1)) yield* out.flush();
  }
  assert.equal(written, map.size, 'snapshot slices: a sorted section lost rows');
}

/** A section of rows in the order `entries` gives (age order), `size` of them. */
function* orderedSection<E>(
  out: SliceWriter,
  size: number,
  entries: Iterable<E>,
  row: (entry: E) => unknown,
): Generator<Uint8Array, void, undefined> {
  out.raw(arrayHeader(size));
  let written = 0;
  for (const entry of entries) {
    out.pack(row(entry));
    written++;
    if (out.charge(1)) yield* out.flush();
  }
  assert.equal(written, size, 'snapshot slices: an ordered section lost rows');
}

/** The names of sorted `runs` in one sorted sequence (a binary min-heap of the run heads). */
function* mergeRuns(runs: readonly string[][]): Generator<string, void, undefined> {
  const heads = runs.map(() => 0);
  const heap = runs.map((_, i) => i);
  const headOf = (r: number): string => runs[r]![heads[r]!]!;
  const less = (a: number, b: number): boolean => compareKeys(headOf(a), headOf(b)) < 0;
  const siftDown = (from: number): void => {
    let i = from;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < heap.length && less(heap[l]!, heap[least]!)) least = l;
      if (r < heap.length && less(heap[r]!, heap[least]!)) least = r;
      if (least === i) return;
      [heap[i], heap[least]] = [heap[least]!, heap[i]!];
      i = least;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(i);
  while (heap.length > 0) {
    const r = heap[0]!;
    yield headOf(r);
    heads[r] = heads[r]! + 1;
    if (heads[r] === runs[r]!.length) {
      heap[0] = heap[heap.length - 1]!;
      heap.pop();
    }
    siftDown(0);
  }
}

/** MessagePack map 16 header (msgpackr writes every plain object with one). */
function mapHeader16(size: number): Uint8Array {
  assert(size < 0x10000, 'map 16 holds fewer than 65536 pairs');
  return Uint8Array.of(0xde, size >> 8, size & 0xff);
}

/** MessagePack array header of `length` items: fixarray, array 16 or array 32. */
function arrayHeader(length: number): Uint8Array {
  if (length < 0x10) return Uint8Array.of(0x90 | length);
  if (length < 0x10000) return Uint8Array.of(0xdc, length >> 8, length & 0xff);
  const header = new Uint8Array(5);
  header[0] = 0xdd;
  new DataView(header.buffer).setUint32(1, length);
  return header;
}

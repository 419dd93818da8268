/**
 * A map whose entries live for a window of cluster time and whose size is bounded: insertion
 * order equals age because cluster time never decreases (docs/concepts.md), so expiry and eviction both
 * take from the head — O(1) amortised, no scans. Used for idempotency records (docs/concepts.md) and
 * waiter outcomes.
 */
import assert from 'node:assert';
import { FifoMap } from './fifo-map.js';

/** One stored value with the cluster time (ms) it was recorded at. */
export interface Windowed<V> {
  value: V;
  readonly atMs: number;
}

export class WindowedMap<K, V> {
  readonly #entries = new FifoMap<K, Windowed<V>>();
  readonly #windowMs: number;
  readonly #sizeMax: number;
  #lastAtMs = 0;

  /** `windowMs`: lifetime in cluster ms; `sizeMax`: bound, the oldest entry is evicted first. */
  constructor(windowMs: number, sizeMax: number) {
    this.#windowMs = windowMs;
    this.#sizeMax = sizeMax;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The live entry for `key` at `nowMs` (entries at or past their window read as absent). */
  get(key: K, nowMs: number): Windowed<V> | undefined {
    const e = this.#entries.get(key);
    return e !== undefined && e.atMs + this.#windowMs > nowMs ? e : undefined;
  }

  /** Records `value` at `atMs` (≥ every earlier `atMs`), replacing any entry for `key` and evicting the oldest when full. */
  set(key: K, value: V, atMs: number): void {
    assert(atMs >= this.#lastAtMs, 'windowed-map: time went backwards');
    this.#lastAtMs = atMs;
    this.#entries.delete(key);
    if (this.#sizeMax === 0) return;
    while (this.#entries.size >= this.#sizeMax) this.#deleteOldest();
    this.#entries.set(key, { value, atMs });
  }

  /** Drops every entry whose window ended at or before `nowMs`. */
  expire(nowMs: number): void {
    for (
      let first = this.#entries.oldest();
      first !== undefined && first[1].atMs + this.#windowMs <= nowMs;
      first = this.#entries.oldest()
    ) {
      this.#entries.shift();
    }
  }

  /** Entries oldest first (snapshot order). */
  entries(): IterableIterator<[K, Windowed<V>]> {
    return this.#entries.entries();
  }

  clear(): void {
    this.#entries.clear();
    this.#lastAtMs = 0;
  }

  /** Throws unless entries are in non-decreasing `atMs` order and within the bound. */
  checkInvariants(): void {
    assert(this.#entries.size <= Math.max(this.#sizeMax, 0), 'windowed-map: over its bound');
    let prev = -Infinity;
    for (const [, e] of this.#entries.entries()) {
      assert(e.atMs >= prev, 'windowed-map: not in time order');
      prev = e.atMs;
    }
  }

  #deleteOldest(): void {
    this.#entries.shift();
  }
}

/**
 * A map that also remembers insertion order and can drop its oldest entry in O(1) amortised.
 * Why not a plain `Map` and `keys().next()`: V8 keeps deleted slots of a Map as holes until it
 * rehashes, so "delete the first, insert at the end" in a loop makes every `keys().next()` skip
 * all earlier holes — quadratic. Here the order lives in an array with a moving head; stale order
 * slots (deleted or re-inserted keys) are skipped and the array is compacted when half is dead.
 */
import assert from 'node:assert';

interface Slot<V> {
  value: V;
  /** Position of this key's live slot in the order array (absolute, before head adjustment). */
  pos: number;
}

export class FifoMap<K, V> {
  readonly #map = new Map<K, Slot<V>>();
  #order: K[] = [];
  /** Index into #order of the oldest possibly-live key; slots before it are dead. */
  #head = 0;

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    return this.#map.get(key)?.value;
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  /** Inserts or replaces `key`, making it the newest entry. */
  set(key: K, value: V): void {
    const slot = this.#map.get(key);
    const pos = this.#order.length;
    this.#order.push(key);
    if (slot === undefined) this.#map.set(key, { value, pos });
    else {
      slot.value = value;
      slot.pos = pos;
    }
  }

  /** Replaces the value of an existing key without changing its age. */
  replace(key: K, value: V): void {
    const slot = this.#map.get(key);
    assert(slot !== undefined, 'fifo-map: replace of a missing key');
    slot.value = value;
  }

  delete(key: K): boolean {
    const had = this.#map.delete(key);
    if (had) this.#maybeCompact();
    return had;
  }

  /** The oldest entry, or undefined. */
  oldest(): [K, V] | undefined {
    this.#skipDead();
    if (this.#head >= this.#order.length) return undefined;
    const key = this.#order[this.#head]!;
    return [key, this.#map.get(key)!.value];
  }

  /** Removes and returns the oldest entry. */
  shift(): [K, V] | undefined {
    const first = this.oldest();
    if (first !== undefined) {
      this.#map.delete(first[0]);
      this.#head++;
      this.#maybeCompact();
    }
    return first;
  }

  /** Entries oldest first. */
  *entries(): IterableIterator<[K, V]> {
    for (let i = this.#head; i < this.#order.length; i++) {
      const key = this.#order[i]!;
      const slot = this.#map.get(key);
      if (slot !== undefined && slot.pos === i) yield [key, slot.value];
    }
  }

  clear(): void {
    this.#map.clear();
    this.#order = [];
    this.#head = 0;
  }

  #skipDead(): void {
    const order = this.#order;
    while (this.#head < order.length) {
      const slot = this.#map.get(order[this.#head]!);
      if (slot !== undefined && slot.pos === this.#head) return;
      this.#head++;
    }
  }

  #maybeCompact(): void {
    const order = this.#order;
    if (order.length < 1024 || order.length < 2 * this.#map.size + 64) return;
    const next: K[] = [];
    for (const [key] of this.entries()) {
      this.#map.get(key)!.pos = next.length;
      next.push(key);
    }
    this.#order = next;
    this.#head = 0;
  }
}

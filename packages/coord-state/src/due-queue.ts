/**
 * An indexed binary min-heap of things that fall due at a cluster time (lease expiry, candidacy
 * expiry, waiter deadline, lock-delay end). Ordered by (`dueMs`, `seq`): `seq` is a unique number
 * assigned by the owner, so the order is total and identical on every replica (docs/architecture.md habit 2).
 * Each entry remembers its own position (`heapIndex`), so reschedule and removal are O(log n)
 * without lazy garbage, and `peek` is O(1).
 */
import assert from 'node:assert';

/** Something that can sit in a `DueQueue`. `heapIndex` is −1 while not queued (owned by the queue). */
export interface DueEntry {
  /** Cluster time (ms) at which the entry falls due. */
  dueMs: number;
  /** Tie-break among equal `dueMs`, unique per queue owner. */
  seq: number;
  /** Position in the heap array, −1 when not queued. Only the queue writes it. */
  heapIndex: number;
}

function before(a: DueEntry, b: DueEntry): boolean {
  return a.dueMs < b.dueMs || (a.dueMs === b.dueMs && a.seq < b.seq);
}

/** Min-heap on (dueMs, seq). All operations O(log n) except `peek` and `size` (O(1)). */
export class DueQueue<T extends DueEntry> {
  /** Heap array: `#items[i].heapIndex === i` for every i (checked by `checkInvariants`). */
  readonly #items: T[] = [];

  get size(): number {
    return this.#items.length;
  }

  /** Earliest entry, or undefined when empty. */
  peek(): T | undefined {
    return this.#items[0];
  }

  /** Adds an entry that is not queued yet. */
  push(entry: T): void {
    assert(entry.heapIndex === -1, 'due-queue: entry already queued');
    entry.heapIndex = this.#items.length;
    this.#items.push(entry);
    this.#up(entry.heapIndex);
  }

  /** Removes and returns the earliest entry. */
  pop(): T | undefined {
    const top = this.#items[0];
    if (top !== undefined) this.remove(top);
    return top;
  }

  /** Removes a queued entry (no-op when not queued). */
  remove(entry: T): void {
    const i = entry.heapIndex;
    if (i === -1) return;
    assert(this.#items[i] === entry, 'due-queue: heapIndex out of sync');
    const last = this.#items.pop()!;
    entry.heapIndex = -1;
    if (last === entry) return;
    this.#items[i] = last;
    last.heapIndex = i;
    this.#down(i);
    this.#up(last.heapIndex);
  }

  /** Call after changing `dueMs`/`seq` of a queued entry; pushes it when not queued. */
  update(entry: T): void {
    if (entry.heapIndex === -1) {
      this.push(entry);
      return;
    }
    this.#down(entry.heapIndex);
    this.#up(entry.heapIndex);
  }

  /** Entries in heap-array order (for invariant checks and counting; not sorted). */
  entries(): readonly T[] {
    return this.#items;
  }

  /** Throws unless the heap property and the index back-pointers hold. */
  checkInvariants(): void {
    const items = this.#items;
    for (let i = 0; i < items.length; i++) {
      const e = items[i]!;
      assert.equal(e.heapIndex, i, 'due-queue: heapIndex mismatch');
      if (i > 0) assert(!before(e, items[(i - 1) >> 1]!), 'due-queue: heap order broken');
    }
  }

  #up(i: number): void {
    const items = this.#items;
    const e = items[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = items[p]!;
      if (!before(e, parent)) break;
      items[i] = parent;
      parent.heapIndex = i;
      i = p;
    }
    items[i] = e;
    e.heapIndex = i;
  }

  #down(i: number): void {
    const items = this.#items;
    const n = items.length;
    const e = items[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && before(items[r]!, items[l]!)) c = r;
      const child = items[c]!;
      if (!before(child, e)) break;
      items[i] = child;
      child.heapIndex = i;
      i = c;
    }
    items[i] = e;
    e.heapIndex = i;
  }
}

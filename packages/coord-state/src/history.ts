/**
 * Ended grants per resource (docs/api.md, holder history): holder, fencingToken, mode, session,
 * grantedAtMs, endedAtMs and why it ended. Also lets renew/release answer `lease_expired` (rather
 * than `not_holder`) when the server knows that very grant ended without its holder (docs/api.md).
 *
 * Keyed by resource key (`lease:NAME`, `semaphore:NAME`, `election:GROUP`). Bounded three ways:
 * the last `perNameMax` grants per resource, at most `namesMax` resources, and at most
 * `entriesMax` entries in total (least recently ended resource evicted first). Every entry has
 * bounded size (holder ≤ 200 characters), so the total memory is bounded too.
 */
import type { FencingToken, GrantEndReason, LeaseMode } from './api.js';
import { FifoMap } from './fifo-map.js';

export type { GrantEndReason } from './api.js';

/** One ended grant. Times are cluster ms. */
export interface EndedGrant {
  readonly holder: string;
  readonly fencingToken: FencingToken;
  readonly grantedAtMs: number;
  readonly endedAtMs: number;
  readonly reason: GrantEndReason;
  /** Leases only (null for semaphores and elections). */
  readonly mode: LeaseMode | null;
  /** Session id when the grant was session-bound. */
  readonly session: string | null;
}

export class GrantHistory {
  /** resource key → ended grants, oldest first; Map order = least recently ended first. */
  readonly #byName = new FifoMap<string, EndedGrant[]>();
  readonly #perNameMax: number;
  readonly #namesMax: number;
  readonly #entriesMax: number;
  /** Sum of list lengths. Invariant: ≤ entriesMax. */
  #entries = 0;

  constructor(perNameMax: number, namesMax: number, entriesMax: number) {
    this.#perNameMax = perNameMax;
    this.#namesMax = namesMax;
    this.#entriesMax = entriesMax;
  }

  get namesCount(): number {
    return this.#byName.size;
  }

  get entriesCount(): number {
    return this.#entries;
  }

  /** Appends an ended grant of resource `key`. */
  add(key: string, ended: EndedGrant): void {
    if (this.#namesMax === 0 || this.#entriesMax === 0) return;
    let list = this.#byName.get(key);
    if (list === undefined) {
      while (this.#byName.size >= this.#namesMax) this.#evictOldest();
      list = [];
    }
    // set() (re-)inserts as newest: the least recently ended resource is evicted first.
    list.push(ended);
    this.#entries++;
    if (list.length > this.#perNameMax) {
      list.shift();
      this.#entries--;
    }
    this.#byName.set(key, list);
    while (this.#entries > this.#entriesMax) this.#evictOldest();
  }

  /** The ended grant `(holder, fencingToken)` of `key`, if remembered. */
  find(key: string, holder: string, fencingToken: FencingToken): EndedGrant | undefined {
    const list = this.#byName.get(key);
    if (list === undefined) return undefined;
    for (const g of list) if (g.fencingToken === fencingToken && g.holder === holder) return g;
    return undefined;
  }

  /** Ended grants of `key`, oldest first. */
  of(key: string): readonly EndedGrant[] {
    return this.#byName.get(key) ?? [];
  }

  /** All resources with their lists in eviction order (snapshot order). */
  entries(): IterableIterator<[string, EndedGrant[]]> {
    return this.#byName.entries();
  }

  /** Replaces the content (restore). */
  load(entries: readonly (readonly [string, readonly EndedGrant[]])[]): void {
    this.#byName.clear();
    this.#entries = 0;
    for (const [key, list] of entries) {
      this.#byName.set(key, [...list]);
      this.#entries += list.length;
    }
  }

  #evictOldest(): void {
    const first = this.#byName.shift();
    if (first !== undefined) this.#entries -= first[1].length;
  }
}

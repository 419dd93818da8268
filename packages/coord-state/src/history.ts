/**
 * Ended grants per lease name (SPEC §6 "holder history" seed): holder, fencingToken, grantedAtMs,
 * endedAtMs and why it ended. Lets renew/release answer `lease_expired` (rather than
 * `not_holder`) when the server knows that very grant expired (SPEC §3). Bounded: the last
 * `perNameMax` grants per name, at most `namesMax` names (least recently ended evicted first).
 */
import type { FencingToken } from './api.js';
import { FifoMap } from './fifo-map.js';

/** Why a grant ended. `revoked` is reserved for SPEC §6 operator revoke. */
export type GrantEndReason = 'released' | 'expired' | 'revoked';

/** One ended grant of a lease. Times are cluster ms. */
export interface EndedGrant {
  readonly holder: string;
  readonly fencingToken: FencingToken;
  readonly grantedAtMs: number;
  readonly endedAtMs: number;
  readonly reason: GrantEndReason;
}

export class GrantHistory {
  /** name → ended grants, oldest first; Map order = least recently ended name first. */
  readonly #byName = new FifoMap<string, EndedGrant[]>();
  readonly #perNameMax: number;
  readonly #namesMax: number;

  constructor(perNameMax: number, namesMax: number) {
    this.#perNameMax = perNameMax;
    this.#namesMax = namesMax;
  }

  get namesCount(): number {
    return this.#byName.size;
  }

  /** Appends an ended grant of `name`. */
  add(name: string, ended: EndedGrant): void {
    if (this.#namesMax === 0) return;
    let list = this.#byName.get(name);
    if (list === undefined) {
      while (this.#byName.size >= this.#namesMax) this.#byName.shift();
      list = [];
    }
    // set() (re-)inserts as newest: the least recently ended name is evicted first.
    list.push(ended);
    if (list.length > this.#perNameMax) list.shift();
    this.#byName.set(name, list);
  }

  /** The ended grant `(holder, fencingToken)` of `name`, if remembered. */
  find(name: string, holder: string, fencingToken: FencingToken): EndedGrant | undefined {
    const list = this.#byName.get(name);
    if (list === undefined) return undefined;
    for (const g of list) if (g.fencingToken === fencingToken && g.holder === holder) return g;
    return undefined;
  }

  /** Ended grants of `name`, oldest first. */
  of(name: string): readonly EndedGrant[] {
    return this.#byName.get(name) ?? [];
  }

  /** All names with their lists in eviction order (snapshot order). */
  entries(): IterableIterator<[string, EndedGrant[]]> {
    return this.#byName.entries();
  }

  /** Replaces the content (restore). */
  load(entries: readonly (readonly [string, readonly EndedGrant[]])[]): void {
    this.#byName.clear();
    for (const [name, list] of entries) this.#byName.set(name, [...list]);
  }
}

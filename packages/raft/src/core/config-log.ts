/**
 * ConfigLog: which membership is in effect at each point of one node's log (dissertation §4.1:
 * "a server always uses the latest configuration in its log, regardless of whether the entry is
 * committed").
 *
 * It holds a base — the membership at the log's compaction point (from the snapshot, or the bootstrap
 * membership at index 0) — and the `config` entries after it, in index order. Invariants: base.index
 * ≤ every listed index; listed indices strictly increase; every listed (index, term) is in the log
 * (the owner calls `dropInvalid` after each truncation, which rolls back changes whose entry is gone).
 */
import assert from 'node:assert/strict';
import type { Membership } from './membership.js';
import { assertValidMembership, decodeMembership } from './membership.js';
import type { Entry, LogIndex, Term } from './types.js';
import { asIndex } from './types.js';

/** A membership and the index (and term) of the entry that set it. */
export interface ConfigPoint {
  readonly index: LogIndex;
  readonly term: Term;
  readonly membership: Membership;
}

/** The memberships of one log (see the file comment for the invariants). */
export class ConfigLog {
  #base: ConfigPoint;
  readonly #points: ConfigPoint[] = [];

  constructor(base: ConfigPoint) {
    assertValidMembership(base.membership);
    this.#base = base;
  }

  /** The membership in effect now: the newest `config` entry in the log, else the base. */
  current(): ConfigPoint {
    return this.#points[this.#points.length - 1] ?? this.#base;
  }

  /** The membership in effect at log index `index` (≥ base.index; assertion). */
  at(index: number): ConfigPoint {
    assert.ok(index >= this.#base.index, 'membership asked below the compaction point');
    for (let i = this.#points.length - 1; i >= 0; i--) {
      const p = this.#points[i]!;
      if (p.index <= index) return p;
    }
    return this.#base;
  }

  /**
   * Record the `config` entries among `entries` (just appended to the log, in order). Entries at or
   * below the newest listed point are ignored (already known). Throws (assertion) on an undecodable
   * config entry: message checks and storage validation reject those before they reach the log.
   */
  noteAppended(entries: readonly Entry[]): void {
    for (const e of entries) {
      if (e.type !== 'config' || e.index <= this.current().index) continue;
      const membership = decodeMembership(e.data);
      assert.ok(membership !== null, `config entry ${e.index} holds no valid membership`);
      this.#points.push({ index: e.index, term: e.term, membership });
    }
  }

  /**
   * Roll back points whose entry is no longer in the log (truncated or overwritten by a leader, §4.1):
   * `termAt(i)` is the log's term at i (undefined beyond its end). Returns true if any was dropped.
   */
  dropInvalid(termAt: (index: number) => Term | undefined): boolean {
    let dropped = false;
    for (let p = this.#points.at(-1); p !== undefined; p = this.#points.at(-1)) {
      if (termAt(p.index) === p.term) break;
      this.#points.pop();
      dropped = true;
    }
    return dropped;
  }

  /** The log was compacted up to `index`: fold the points ≤ index into the base (Raft §7). */
  compactTo(index: number): void {
    const at = this.at(index);
    this.#base = at;
    while (this.#points.length > 0 && this.#points[0]!.index <= index) this.#points.shift();
  }

  /** A snapshot replaced the whole log: its membership becomes the base, every point goes. */
  restore(base: ConfigPoint): void {
    assertValidMembership(base.membership);
    this.#base = base;
    this.#points.length = 0;
  }

  /** Throws (assertion) if a relation of the file comment is broken. */
  checkInvariants(termAt: (index: number) => Term | undefined): void {
    let prev = this.#base.index;
    for (const p of this.#points) {
      assert.ok(p.index > prev, 'config points strictly increase above the base');
      assert.equal(termAt(p.index), p.term, 'every config point is in the log');
      prev = p.index;
    }
  }
}

/** The bootstrap point: `voters` at index 0, term 0, no learners. */
export function bootstrapPoint(voters: readonly string[]): ConfigPoint {
  return { index: asIndex(0), term: 0 as Term, membership: { voters, learners: [] } };
}

/**
 * The runtime's Random (core/types.ts): a small seeded generator (sfc32), seeded from crypto by
 * default so that nodes differ, with the seed logged so a run can be replayed.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import type { Random } from './core/types.js';

/** A fresh 31-bit seed from the OS CSPRNG. */
export function cryptoSeed(): number {
  return randomInt(2 ** 31);
}

/** sfc32 seeded from one 31-bit integer; `intBelow(n)` is uniform enough for election jitter. */
export class SeededRandom implements Random {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(readonly seed: number) {
    assert.ok(Number.isSafeInteger(seed), 'seed must be an integer');
    this.#a = 0x9e3779b9;
    this.#b = 0x243f6a88;
    this.#c = 0xb7e15162;
    this.#d = seed | 0;
    for (let i = 0; i < 16; i++) this.#next(); // mix the seed in
  }

  #next(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return t >>> 0;
  }

  /** Integer in [0, n). `n` must be a positive safe integer ≤ 2^32. */
  intBelow(n: number): number {
    assert.ok(Number.isSafeInteger(n) && n > 0 && n <= 2 ** 32, `bad bound ${n}`);
    return Math.floor((this.#next() / 2 ** 32) * n);
  }
}

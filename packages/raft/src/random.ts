/**
 * The one seeded generator of the raft package: xoshiro128** seeded via splitmix32. The runtime
 * seeds it from crypto by default (so nodes differ) and logs the seed so a run can be replayed; the
 * deterministic simulator (testing/) draws every choice from it, so a simulation replays from its
 * seed (TigerBeetle's simulator discipline). Implements the core's `Random` interface.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import type { Random } from './core/types.js';

/** A fresh 31-bit seed from the OS CSPRNG. */
export function cryptoSeed(): number {
  return randomInt(2 ** 31);
}

const TWO_POW_32 = 4_294_967_296;

/** splitmix32 step: a well-mixed 32-bit value from a 32-bit state; used only to seed xoshiro. */
function splitmix32(state: number): { value: number; next: number } {
  const next = (state + 0x9e3779b9) | 0;
  let z = next;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  z ^= z >>> 16;
  return { value: z >>> 0, next };
}

/**
 * A seeded stream (xoshiro128**, period 2^128 − 1). Deterministic: the same seed gives the same
 * sequence on every platform. `fork()` derives an independent child stream, so adding draws to one
 * component does not shift the choices of another.
 */
export class SeededRandom implements Random {
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;

  /** @param seed any safe integer; two different seeds give unrelated streams. */
  constructor(readonly seed: number) {
    assert.ok(Number.isSafeInteger(seed), `SeededRandom seed must be a safe integer, got ${seed}`);
    // Fold the high bits in so seeds above 2^32 still differ.
    let state = (seed ^ Math.floor(seed / TWO_POW_32)) | 0;
    const words: number[] = [];
    for (let i = 0; i < 4; i++) {
      const step = splitmix32(state);
      words.push(step.value);
      state = step.next;
    }
    this.#s0 = words[0]!;
    this.#s1 = words[1]!;
    this.#s2 = words[2]!;
    this.#s3 = words[3]!;
    if ((this.#s0 | this.#s1 | this.#s2 | this.#s3) === 0) this.#s0 = 1;
  }

  /** Next raw value, an integer in [0, 2^32). */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.#s1, 5), 7), 9) >>> 0;
    const t = this.#s1 << 9;
    this.#s2 ^= this.#s0;
    this.#s3 ^= this.#s1;
    this.#s1 ^= this.#s2;
    this.#s0 ^= this.#s3;
    this.#s2 ^= t;
    this.#s3 = rotl(this.#s3, 11);
    return result;
  }

  /** Uniform float in [0, 1). */
  float(): number {
    return this.nextU32() / TWO_POW_32;
  }

  /** Uniform integer in [0, n). Throws (assertion) unless n is a positive integer ≤ 2^32. */
  intBelow(n: number): number {
    assert.ok(
      Number.isInteger(n) && n > 0 && n <= TWO_POW_32,
      `intBelow(n) needs 0 < n ≤ 2^32, got ${n}`,
    );
    return Math.floor(this.float() * n);
  }

  /** Uniform integer in [lo, hi], both inclusive. */
  intBetween(lo: number, hi: number): number {
    assert.ok(hi >= lo, `intBetween needs lo ≤ hi, got ${lo}..${hi}`);
    return lo + this.intBelow(hi - lo + 1);
  }

  /** Uniform float in [lo, hi). */
  between(lo: number, hi: number): number {
    return lo + this.float() * (hi - lo);
  }

  /** True with probability `p` (0 ≤ p ≤ 1). */
  chance(p: number): boolean {
    return p > 0 && this.float() < p;
  }

  /** One element of a non-empty array, uniformly. */
  pick<T>(items: readonly T[]): T {
    assert.ok(items.length > 0, 'pick() from an empty array');
    return items[this.intBelow(items.length)]!;
  }

  /** A shuffled copy (Fisher–Yates). */
  shuffled<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.intBelow(i + 1);
      const tmp = out[i]!;
      out[i] = out[j]!;
      out[j] = tmp;
    }
    return out;
  }

  /** An independent child stream seeded from this one. */
  fork(): SeededRandom {
    return new SeededRandom(this.nextU32() * 0x200000 + (this.nextU32() & 0x1fffff));
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

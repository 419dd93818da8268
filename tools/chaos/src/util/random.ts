/**
 * Seeded pseudo-random numbers for the chaos harness (sfc32, with labels hashed by FNV-1a for
 * `fork`). Every schedule and workload choice flows from the run's seed, so a run replays from it.
 */
import type { Random } from '../types.js';

/** FNV-1a 32-bit hash of a string (used to derive stream seeds from labels). */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * A `Random` from a 32-bit integer seed (any number is truncated to uint32).
 * Errors: `int` throws RangeError when max < min; `pick` throws RangeError on an empty array.
 */
export function createRandom(seed: number): Random {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const nextUint32 = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (a + b + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 15; i++) nextUint32(); // warm up: the first outputs of sfc32 are weak
  const random: Random = {
    next: () => nextUint32() / 4294967296,
    int: (minInclusive, maxInclusive) => {
      if (maxInclusive < minInclusive)
        throw new RangeError(`int(${minInclusive}, ${maxInclusive}): max < min`);
      return minInclusive + Math.floor(random.next() * (maxInclusive - minInclusive + 1));
    },
    pick: (items) => {
      if (items.length === 0) throw new RangeError('pick from an empty array');
      return items[Math.floor(random.next() * items.length)]!;
    },
    fork: (label) => createRandom((nextUint32() ^ fnv1a(label)) >>> 0),
  };
  return random;
}

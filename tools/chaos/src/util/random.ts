/**
 * Seeded pseudo-random numbers for the chaos harness (testkit's SeededRandom, with labels hashed by
 * FNV-1a for `fork`). Every schedule and workload choice flows from the run's seed, so a run replays from it.
 */
import { SeededRandom } from '@tenure/testkit';
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
 * A `Random` from a 32-bit integer seed (any number is truncated to uint32), drawn from testkit's one
 * seeded generator. Same seed → same run.
 * Errors: `int` throws RangeError when max < min; `pick` throws RangeError on an empty array.
 */
export function createRandom(seed: number): Random {
  const source = new SeededRandom(seed >>> 0);
  const random: Random = {
    next: () => source.float(),
    int: (minInclusive, maxInclusive) => {
      if (maxInclusive < minInclusive)
        throw new RangeError(`int(${minInclusive}, ${maxInclusive}): max < min`);
      return minInclusive + Math.floor(random.next() * (maxInclusive - minInclusive + 1));
    },
    pick: (items) => {
      if (items.length === 0) throw new RangeError('pick from an empty array');
      return items[Math.floor(random.next() * items.length)]!;
    },
    fork: (label) => createRandom((source.nextU32() ^ fnv1a(label)) >>> 0),
  };
  return random;
}

/**
 * The one seeded generator of the tests, the chaos harness and the benches: the raft package's
 * `SeededRandom` (xoshiro128** seeded via splitmix32), re-used rather than copied. The same seed
 * gives the same sequence on every platform, so a run that prints its seed replays from it.
 */
import { SeededRandom } from '@tenure/raft';

export { SeededRandom };

/**
 * A uniform [0, 1) source drawn from `new SeededRandom(seed)`: for code that takes a
 * `() => number` (as `Math.random` is shaped). `seed` must be a safe integer (assertion otherwise).
 */
export function seededFloats(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.float();
}

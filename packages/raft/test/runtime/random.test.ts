// Proves SeededRandom replays the same sequence from the same seed and stays within [0, n).
import t from 'tap';
import { SeededRandom } from '../../src/random.js';

t.test('same seed, same sequence; different seeds differ; values in range', async (t) => {
  const draw = (seed: number) => {
    const random = new SeededRandom(seed);
    return Array.from({ length: 200 }, () => random.intBelow(100));
  };
  t.same(draw(42), draw(42));
  t.notSame(draw(42), draw(43));
  t.ok(draw(7).every((v) => Number.isInteger(v) && v >= 0 && v < 100));
  t.equal(new Set(draw(7)).size > 50, true, 'spreads over the range');
  t.throws(() => new SeededRandom(1).intBelow(0));
});

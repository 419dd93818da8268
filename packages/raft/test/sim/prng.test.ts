// Proves SimRandom is deterministic per seed, independent across seeds and forks, and in range.
import t from 'tap';
import { SimRandom } from '../../src/testing/index.js';

t.test('same seed, same stream; different seeds differ', async (t) => {
  const a = new SimRandom(42);
  const b = new SimRandom(42);
  const c = new SimRandom(43);
  const seqA = Array.from({ length: 100 }, () => a.nextU32());
  const seqB = Array.from({ length: 100 }, () => b.nextU32());
  const seqC = Array.from({ length: 100 }, () => c.nextU32());
  t.same(seqA, seqB);
  t.notSame(seqA, seqC);
  t.notSame(
    new SimRandom(1).fork().nextU32(),
    new SimRandom(1).nextU32(),
    'a fork is its own stream',
  );
});

t.test('intBelow stays in [0, n) and covers it roughly evenly', async (t) => {
  const r = new SimRandom(7);
  const counts = [0, 0, 0, 0, 0];
  for (let i = 0; i < 50_000; i++) counts[r.intBelow(5)]!++;
  for (const c of counts) t.ok(c > 9_000 && c < 11_000, `bucket count ${c}`);
  t.throws(() => r.intBelow(0));
  t.throws(() => r.intBelow(1.5));
  for (let i = 0; i < 1000; i++) {
    const x = r.intBetween(3, 5);
    if (x < 3 || x > 5) t.fail(`intBetween out of range: ${x}`);
  }
  t.pass('intBetween in range');
});

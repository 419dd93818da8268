// Proves FifoMap keeps insertion order (re-set = newest), drops the oldest in order, and stays correct across compaction, against a plain array reference.
import t from 'tap';
import fc from 'fast-check';
import { FifoMap } from '../src/fifo-map.js';

const SEED = 777;

t.test(
  'random set/delete/shift/replace match an ordered-array reference (crossing compaction)',
  async (t) => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 40 })), {
          minLength: 1,
          maxLength: 4000,
          size: 'max',
        }),
        (ops) => {
          const m = new FifoMap<number, number>();
          let ref: [number, number][] = [];
          let v = 0;
          for (const [op, k] of ops) {
            if (op <= 1) {
              ref = ref.filter(([x]) => x !== k);
              ref.push([k, ++v]);
              m.set(k, v);
            } else if (op === 2) {
              if (m.delete(k) !== ref.some(([x]) => x === k)) return false;
              ref = ref.filter(([x]) => x !== k);
            } else if (op === 3) {
              const got = m.shift();
              const want = ref.shift();
              if (JSON.stringify(got) !== JSON.stringify(want)) return false;
            } else if (ref.some(([x]) => x === k)) {
              m.replace(k, -k);
              ref = ref.map(([x, y]) => [x, x === k ? -k : y]);
            }
            if (m.size !== ref.length) return false;
          }
          return (
            JSON.stringify([...m.entries()]) === JSON.stringify(ref) &&
            JSON.stringify(m.oldest()) === JSON.stringify(ref[0])
          );
        },
      ),
      { seed: SEED, numRuns: 60 },
    );
    t.pass(`seed ${SEED}`);
  },
);

t.test(
  'a long delete-oldest / insert-newest loop stays O(1) per step (no quadratic skip)',
  async (t) => {
    const m = new FifoMap<number, number>();
    for (let i = 0; i < 10_000; i++) m.set(i, i);
    for (let i = 10_000; i < 210_000; i++) {
      m.shift();
      m.set(i, i);
    }
    t.equal(m.size, 10_000);
    t.same(m.oldest(), [200_000, 200_000]);
  },
);

// Proves the indexed min-heap pops in (dueMs, seq) order under random push / update / remove, against a sorted-array reference.
import t from 'tap';
import fc from 'fast-check';
import { DueQueue, type DueEntry } from '../src/due-queue.js';

const SEED = 20261129;

t.test('random operations keep (dueMs, seq) order and back-pointers', async (t) => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 50 }), fc.nat()),
        { maxLength: 200 },
      ),
      (ops) => {
        const q = new DueQueue<DueEntry>();
        const live: DueEntry[] = [];
        let seq = 0;
        for (const [op, due, pick] of ops) {
          if (op === 0 || live.length === 0) {
            const e = { dueMs: due, seq: ++seq, heapIndex: -1 };
            q.push(e);
            live.push(e);
          } else if (op === 1) {
            const e = live[pick % live.length]!;
            e.dueMs = due;
            e.seq = ++seq;
            q.update(e);
          } else if (op === 2) {
            const [e] = live.splice(pick % live.length, 1);
            q.remove(e!);
          } else {
            live.sort((a, b) => a.dueMs - b.dueMs || a.seq - b.seq);
            const top = q.pop();
            if (top !== live[0]) return false;
            live.shift();
          }
          q.checkInvariants();
          if (q.size !== live.length) return false;
        }
        return true;
      },
    ),
    { seed: SEED, numRuns: 300 },
  );
  t.pass(`seed ${SEED}`);
});

// Proves the fencing-token scheme: token = index × 1000 + seq strictly increases per resource, within an entry and across entries, and refuses overflow.
import t from 'tap';
import { nextFencingToken, tokenIndex, TOKENS_PER_ENTRY } from '../src/index.js';
import { Driver, okValue } from './fixtures/driver.js';

t.test(
  'first grant in an entry is index × TOKENS_PER_ENTRY; a second one in the same entry is +1',
  async (t) => {
    t.equal(nextFencingToken(7, 0), 7 * TOKENS_PER_ENTRY);
    t.equal(nextFencingToken(7, 7000), 7001);
    t.equal(nextFencingToken(8, 7001), 8000);
    t.equal(tokenIndex(7001), 7);
    t.throws(() => nextFencingToken(7, 7999));
  },
);

t.test(
  'one entry that grants the same lease twice (expiry grants a waiter, the command releases it) gives increasing tokens',
  async (t) => {
    const d = new Driver();
    d.acquire('L', 'A', { ttlMs: 1000 });
    d.acquire('L', 'B', { waitMs: 10_000 });
    d.acquire('L', 'C', { waitMs: 10_000 });
    // Entry 4 at t=1000: expiry grants B with token 4000; the command releases exactly that grant; C gets 4001.
    const r = d.release('L', 'B', 4000, { atMs: 1000 });
    t.same(okValue(r), { name: 'L', released: true });
    t.equal(d.sm.getLease('L', 1000)?.fencingToken, 4001);
    t.equal(d.sm.getLease('L', 1000)?.holder, 'C');
  },
);

t.test(
  'tokens of a name keep increasing after its record is deleted (release, expiry) and after restore',
  async (t) => {
    const d = new Driver();
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const g = okValue<{ fencingToken: number }>(d.acquire('L', 'A', { ttlMs: 100 }));
      seen.push(g.fencingToken);
      if (i % 2 === 0) d.release('L', 'A', g.fencingToken);
      else d.at(d.nowMs + 100);
      const snap = d.sm.snapshot();
      d.sm.restore(snap);
    }
    for (let i = 1; i < seen.length; i++)
      t.ok(seen[i]! > seen[i - 1]!, `${seen[i]} > ${seen[i - 1]}`);
  },
);

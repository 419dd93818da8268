// Proves FenceGuard rejects any token below the highest seen per resource (docs/concepts.md), accepts equal and
// higher ones, keeps resources independent, and stays within its resource bound.
import t from 'tap';
import { FenceGuard, StaleTokenError } from '../src/index.js';

t.test('accepts rising and equal tokens, rejects a lower one with StaleTokenError', async (t) => {
  const guard = new FenceGuard();
  t.equal(guard.check('L', 3), true);
  t.equal(guard.check('L', 3), true, 'the same grant may write again');
  t.equal(guard.check('L', 7), true);
  const error = t.throws(() => guard.check('L', 5)) as StaleTokenError;
  t.ok(error instanceof StaleTokenError);
  t.equal(error.resource, 'L');
  t.equal(error.fencingToken, 5);
  t.equal(error.highestFencingToken, 7);
  t.equal(guard.highest('L'), 7, 'a rejected token does not lower the mark');
});

t.test('resources are independent', async (t) => {
  const guard = new FenceGuard();
  guard.check('a', 10);
  t.equal(guard.check('b', 1), true);
  t.equal(guard.tryCheck('a', 9), false);
  t.equal(guard.tryCheck('b', 2), true);
  t.equal(guard.highest('c'), null);
});

t.test('BC-02 shape: a paused holder with t1 cannot write after t2 was seen', async (t) => {
  const guard = new FenceGuard();
  const writes: string[] = [];
  const write = (token: number, v: string): void => {
    if (guard.tryCheck('L', token)) writes.push(v);
  };
  write(1, 'A-before-pause');
  write(2, 'B');
  write(1, 'A-after-pause');
  t.same(writes, ['A-before-pause', 'B']);
});

t.test('bounded: forgets the least recently used resource beyond resourcesMax', async (t) => {
  const guard = new FenceGuard({ resourcesMax: 2 });
  guard.check('a', 1);
  guard.check('b', 1);
  guard.check('a', 2); // a is now the most recent
  guard.check('c', 1);
  t.equal(guard.size, 2);
  t.equal(guard.highest('b'), null, 'b evicted');
  t.equal(guard.highest('a'), 2);
});

t.test('rejects tokens that are not non-negative integers', async (t) => {
  const guard = new FenceGuard();
  t.throws(() => guard.check('L', 1.5), TypeError);
  t.throws(() => guard.check('L', -1), TypeError);
  t.throws(() => guard.check('L', Number.NaN), TypeError);
  t.throws(() => new FenceGuard({ resourcesMax: 0 }));
});

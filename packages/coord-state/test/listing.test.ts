// Proves pageOfNames: names by prefix, strictly after the cursor, sorted, at most limit.
import t from 'tap';
import { pageOfNames } from '../src/listing.js';

t.test('a page is sorted, after the cursor, filtered by prefix and bounded', async (t) => {
  const names = ['b2', 'a', 'b10', 'c', 'b1'];
  t.same(pageOfNames(names, '', null, 10), ['a', 'b1', 'b10', 'b2', 'c']);
  t.same(pageOfNames(names, 'b', null, 2), ['b1', 'b10']);
  t.same(pageOfNames(names, 'b', 'b10', 2), ['b2']);
  t.same(pageOfNames(names, '', 'c', 5), [], 'nothing after the last name');
  t.same(pageOfNames(names, '', 'a0', 1), ['b1'], 'a cursor need not be present');
  t.same(pageOfNames(new Map([['x', 1]]).keys(), '', null, 0), [], 'limit 0');
});

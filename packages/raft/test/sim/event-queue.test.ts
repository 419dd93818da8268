// Proves the event queue runs events in (time, scheduling order), advances sim time, and refuses the past.
import t from 'tap';
import { EventQueue } from '../../src/testing/index.js';

t.test('events run in time order, ties in scheduling order', async (t) => {
  const q = new EventQueue();
  const seen: string[] = [];
  q.at(5, () => seen.push('b'));
  q.at(1, () => seen.push('a'));
  q.at(5, () => seen.push('c'));
  q.at(9, () => seen.push('late'));
  while (q.runNext(8)) {
    /* run */
  }
  t.same(seen, ['a', 'b', 'c']);
  t.equal(q.nowMs, 5);
  t.equal(q.size, 1, 'the event after untilMs stays queued');
  t.throws(() => q.at(4, () => undefined), 'scheduling in the past is a bug');
});

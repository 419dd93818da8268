// Proves the ended-grant history (docs/primitives.md seed) is bounded per name and by names, least recently ended name evicted first.
import t from 'tap';
import { GrantHistory } from '../src/history.js';

const ended = (token: number, reason: 'released' | 'expired' = 'expired') => ({
  mode: null,
  session: null,
  holder: 'A',
  fencingToken: token,
  grantedAtMs: 0,
  endedAtMs: 1,
  reason,
});

t.test('keeps the last perNameMax grants of a name', async (t) => {
  const h = new GrantHistory(2, 10, 100);
  h.add('L', ended(1));
  h.add('L', ended(2, 'released'));
  h.add('L', ended(3));
  t.same(
    h.of('L').map((e) => e.fencingToken),
    [2, 3],
  );
  t.equal(h.find('L', 'A', 1), undefined);
  t.equal(h.find('L', 'A', 2)?.reason, 'released');
  t.equal(h.find('L', 'B', 3), undefined);
});

t.test('keeps at most namesMax names, evicting the least recently ended', async (t) => {
  const h = new GrantHistory(2, 2, 100);
  h.add('a', ended(1));
  h.add('b', ended(2));
  h.add('a', ended(3)); // a is now the most recent
  h.add('c', ended(4));
  t.same(
    [...h.entries()].map(([n]) => n),
    ['a', 'c'],
  );
  t.equal(h.namesCount, 2);
});

t.test(
  'keeps at most entriesMax entries in total, evicting the least recently ended resource',
  async (t) => {
    const h = new GrantHistory(16, 100, 3);
    h.add('a', ended(1));
    h.add('a', ended(2));
    h.add('b', ended(3));
    h.add('b', ended(4));
    t.same(
      [...h.entries()].map(([n, l]) => [n, l.length]),
      [['b', 2]],
    );
    t.equal(h.entriesCount, 2);
  },
);

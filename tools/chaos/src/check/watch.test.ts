// Proves the watch checker fails on a revision going backwards, a change before the start, a
// repeated change, an acknowledged write inside the iterator's range that it never yielded, and a
// wrong value — and passes when a write lies beyond the last revision an iterator reached.
import t from 'tap';
import { checkWatch } from './watch.js';
import { HistoryBuilder, ok } from './testing.js';
import type { JsonObject } from '../types.js';

function stream(h: HistoryBuilder, fromRevision: number, events: JsonObject[]): void {
  h.add('w', 'watch.open', { watcher: 'w', stream: 1, fromRevision, prefix: 'p-' }, 0, 0, ok(null));
  events.forEach((e, i) =>
    h.add('w', 'watch.event', { watcher: 'w', stream: 1, seq: i + 1 }, 10 + i, 10 + i, ok(e)),
  );
  h.add('w', 'watch.end', { watcher: 'w', stream: 1, reason: 'stopped' }, 100, 100, ok(''));
}

function put(h: HistoryBuilder, key: string, value: number, revision: number): void {
  h.add('k', 'kv.put', { key, value }, 1, 2, ok({ key, revision }));
}

const ev = (revision: number, name: string, value: number): JsonObject => ({
  revision,
  kind: 'kv',
  name,
  type: 'put',
  value,
});

t.test('a complete, ordered stream passes; writes beyond its reach are not required', async (t) => {
  const h = new HistoryBuilder();
  put(h, 'p-a', 1, 11);
  put(h, 'q-x', 4, 12); // outside the prefix
  put(h, 'p-b', 2, 13);
  put(h, 'p-a', 3, 20); // beyond the last revision yielded
  stream(h, 10, [ev(11, 'p-a', 1), ev(13, 'p-b', 2)]);
  const r = checkWatch(h.ops);
  t.ok(r.ok, JSON.stringify(r.violations));
  t.equal(r.stats['ackedWritesRequired'], 2);
});

t.test('a revision going backwards fails', async (t) => {
  const h = new HistoryBuilder();
  stream(h, 10, [ev(12, 'p-b', 2), ev(11, 'p-a', 1)]);
  t.ok(checkWatch(h.ops).violations.some((v) => v.property === 'watch-revision-regression'));
});

t.test('a change at or before the start revision fails', async (t) => {
  const h = new HistoryBuilder();
  stream(h, 10, [ev(10, 'p-a', 1)]);
  t.equal(checkWatch(h.ops).violations[0]?.property, 'watch-before-start');
});

t.test('a change yielded twice fails', async (t) => {
  const h = new HistoryBuilder();
  stream(h, 10, [ev(11, 'p-a', 1), ev(11, 'p-a', 1)]);
  t.equal(checkWatch(h.ops).violations[0]?.property, 'watch-duplicate');
});

t.test('a gap (an acknowledged write skipped, no compacted end) fails', async (t) => {
  const h = new HistoryBuilder();
  put(h, 'p-a', 1, 11);
  put(h, 'p-b', 2, 12);
  put(h, 'p-a', 3, 13);
  stream(h, 10, [ev(11, 'p-a', 1), ev(13, 'p-a', 3)]);
  const r = checkWatch(h.ops);
  t.equal(r.violations.length, 1);
  t.equal(r.violations[0]?.property, 'watch-missed-write');
});

t.test('a change with another value than written fails', async (t) => {
  const h = new HistoryBuilder();
  put(h, 'p-a', 1, 11);
  stream(h, 10, [ev(11, 'p-a', 5)]);
  t.equal(checkWatch(h.ops).violations[0]?.property, 'watch-wrong-value');
});

// Proves invoke/complete events pair into operations (open ones become unknown), retry attempts
// sharing an Idempotency-Key merge into one logical operation with the first definite answer, and
// outcomes classify as ok / fail (4xx) / maybe (503, 5xx, unknown).
import t from 'tap';
import { pairEvents, effectOf } from './history.js';
import { mergeAttempts } from './merge.js';
import { HistoryBuilder, ok, fail, unknown } from './testing.js';

t.test('pairing', async (t) => {
  const ops = pairEvents([
    {
      type: 'invoke',
      opId: 2,
      process: 'b',
      node: null,
      kind: 'kv.get',
      args: { key: 'k' },
      timeMs: 5,
    },
    {
      type: 'invoke',
      opId: 1,
      process: 'a',
      node: 'n1',
      kind: 'kv.get',
      args: { key: 'k' },
      timeMs: 1,
    },
    {
      type: 'complete',
      opId: 1,
      process: 'a',
      node: 'n2',
      kind: 'kv.get',
      timeMs: 3,
      outcome: ok({ key: 'k', value: 1, revision: 1 }),
    },
  ]);
  t.same(
    ops.map((o) => [o.opId, o.completeMs, o.outcome.status, o.node]),
    [
      [1, 3, 'ok', 'n2'],
      [2, null, 'unknown', null],
    ],
  );
  t.throws(() =>
    pairEvents([
      {
        type: 'complete',
        opId: 9,
        process: 'a',
        node: null,
        kind: 'kv.get',
        timeMs: 1,
        outcome: unknown(),
      },
    ]),
  );
});

t.test('classification', async (t) => {
  t.equal(effectOf(ok(null)), 'ok');
  t.equal(effectOf(fail('held')), 'fail');
  t.equal(effectOf(fail('no_leader', 503)), 'maybe', '503 may have been proposed');
  t.equal(effectOf(unknown()), 'maybe');
});

t.test('merging attempts by idempotency key', async (t) => {
  const h = new HistoryBuilder();
  h.add('a', 'kv.put', { key: 'k', value: 1, idempotencyKey: 'x', attempt: 1 }, 0, 100, unknown());
  h.add(
    'a',
    'kv.put',
    { key: 'k', value: 1, idempotencyKey: 'x', attempt: 2 },
    150,
    160,
    fail('no_leader', 503),
  );
  h.add(
    'a',
    'kv.put',
    { key: 'k', value: 1, idempotencyKey: 'x', attempt: 3 },
    200,
    210,
    ok({ key: 'k', revision: 3 }),
  );
  h.add('b', 'kv.put', { key: 'k', value: 2, idempotencyKey: 'y', attempt: 1 }, 50, 60, unknown());
  h.add('c', 'kv.get', { key: 'k' }, 300, 310, ok({ key: 'k', value: 1, revision: 3 }));
  const m = mergeAttempts(h.ops);
  t.equal(m.length, 3);
  t.same([m[0]!.opId, m[0]!.invokeMs, m[0]!.completeMs, m[0]!.outcome.status], [1, 0, 210, 'ok']);
  t.equal(m[1]!.outcome.status, 'unknown');
});

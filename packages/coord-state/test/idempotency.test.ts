// Proves docs/concepts.md at-most-once effects in the state machine: a repeated key replays the first result without applying again, a different fingerprint is rejected, records live for the window and are bounded.
import t from 'tap';
import { WindowedMap } from '../src/windowed-map.js';
import { Driver, errCode, okValue } from './fixtures/driver.js';

type Granted = { fencingToken: number };

t.test(
  'a repeat with the same fingerprint returns the first result with replayed: true and applies nothing',
  async (t) => {
    const d = new Driver();
    const first = d.run(
      { type: 'kv.put', key: 'k', value: 1, fence: null, ifRevision: null },
      { key: 'i1' },
    );
    const again = d.run(
      { type: 'kv.put', key: 'k', value: 1, fence: null, ifRevision: null },
      { key: 'i1' },
    );
    t.same(again.result, { ...first.result, replayed: true });
    t.same(again.changed, []);
    t.equal(d.sm.getKv('k')?.revision, 1);
  },
);

t.test('errors are remembered too (a 409 replays as the same 409)', async (t) => {
  const d = new Driver();
  d.acquire('L', 'A');
  const r1 = d.acquire('L', 'B', { key: 'i2' });
  const a = d.sm.getLease('L', d.nowMs)!;
  d.release('L', 'A', a.fencingToken);
  const r2 = d.acquire('L', 'B', { key: 'i2' });
  t.equal(errCode(r2), 'held');
  t.same(r2, { ...r1, replayed: true });
  t.equal(d.sm.getLease('L', d.nowMs), null);
});

t.test(
  'a different fingerprint under the same key is idempotency_key_reused and applies nothing',
  async (t) => {
    const d = new Driver();
    d.run(
      { type: 'kv.put', key: 'k', value: 1, fence: null, ifRevision: null },
      { key: 'i3', fingerprint: 'a' },
    );
    const r = d.run(
      { type: 'kv.put', key: 'k', value: 2, fence: null, ifRevision: null },
      { key: 'i3', fingerprint: 'b' },
    );
    t.equal(errCode(r.result), 'idempotency_key_reused');
    t.equal(d.sm.getKv('k')?.value, 1);
  },
);

t.test('a replayed acquire does not re-grant after release (at-most-once)', async (t) => {
  const d = new Driver();
  const g = okValue<Granted>(d.acquire('L', 'A', { key: 'i4' }));
  d.release('L', 'A', g.fencingToken);
  const replay = d.acquire('L', 'A', { key: 'i4' });
  t.match(replay, { ok: true, replayed: true });
  t.equal(d.sm.getLease('L', d.nowMs), null);
});

t.test('records expire after the idempotency window of cluster time', async (t) => {
  const d = new Driver({ idempotencyWindowMs: 1000 });
  d.run({ type: 'kv.put', key: 'k', value: 1, fence: null, ifRevision: null }, { key: 'i5' });
  d.at(999);
  t.ok(d.sm.idempotentResult('i5'));
  d.at(1000);
  t.equal(d.sm.idempotentResult('i5'), null);
  const again = d.run(
    { type: 'kv.put', key: 'k', value: 1, fence: null, ifRevision: null },
    { key: 'i5' },
  );
  t.equal(again.result.replayed, undefined);
  t.equal(d.sm.getKv('k')?.revision, 4);
});

t.test('records are bounded by idempotencyRecordsMax, oldest evicted first', async (t) => {
  const d = new Driver({ idempotencyRecordsMax: 2 });
  for (const k of ['a', 'b', 'c']) d.run({ type: 'time.advance' }, { key: k });
  t.equal(d.sm.counts().idempotencyRecords, 2);
  t.equal(d.sm.idempotentResult('a'), null);
  t.ok(d.sm.idempotentResult('c'));
});

t.test('WindowedMap: expiry and eviction take from the head, time must not go back', async (t) => {
  const m = new WindowedMap<string, number>(100, 2);
  m.set('a', 1, 0);
  m.set('b', 2, 50);
  m.set('a', 3, 60); // re-set moves to the end
  t.same(
    [...m.entries()].map(([k]) => k),
    ['b', 'a'],
  );
  m.set('c', 4, 70);
  t.same(
    [...m.entries()].map(([k]) => k),
    ['a', 'c'],
  );
  m.expire(160);
  t.same(
    [...m.entries()].map(([k]) => k),
    ['c'],
  );
  t.equal(m.get('c', 170), undefined);
  t.throws(() => m.set('d', 5, 10));
});

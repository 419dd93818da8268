// Proves the apply contract of CoordStateMachine: time and index only move forward (asserted), expiry happens before the command and is reported in `changed`, nextDueMs is the earliest wake-up, null entries only advance time.
import t from 'tap';
import { CoordStateMachine } from '../src/index.js';
import { Driver, okValue } from './fixtures/driver.js';

t.test(
  'cluster time passed to apply never decreases and the index strictly increases (assertions)',
  async (t) => {
    const sm = new CoordStateMachine();
    sm.apply(1, 100, null);
    t.throws(() => sm.apply(2, 99, null), { name: 'AssertionError' });
    t.throws(() => sm.apply(1, 200, null), { name: 'AssertionError' });
    t.throws(() => sm.apply(3, 1.5, null), { name: 'AssertionError' });
    t.same(sm.apply(3, 100, null), {
      result: { ok: true, value: null },
      changed: [],
      events: [],
    });
    t.equal(sm.lastAppliedTimeMs(), 100);
    t.equal(sm.lastAppliedIndex(), 3);
  },
);

t.test(
  'changed lists every resource touched, including expiries of other resources, sorted',
  async (t) => {
    const d = new Driver();
    d.acquire('b', 'A', { ttlMs: 100 });
    d.campaign('g', 'p', { ttlMs: 100 });
    d.acquire('a', 'A', { ttlMs: 100 });
    const out = d.run(
      { type: 'kv.put', key: 'k', value: 1, fence: null, ifRevision: null },
      { atMs: 100 },
    );
    t.same(out.changed, ['election:g', 'kv:k', 'lease:a', 'lease:b']);
    t.same(d.sm.counts(), {
      leases: 0,
      waiters: 0,
      elections: 0,
      candidates: 0,
      keys: 1,
      idempotencyRecords: 0,
    });
  },
);

t.test(
  'expiry happens before the command: a name due at T can be acquired by the entry at T',
  async (t) => {
    const d = new Driver();
    d.acquire('L', 'A', { ttlMs: 100 });
    const r = okValue<{ holder: string }>(d.acquire('L', 'B', { atMs: 100 }));
    t.equal(r.holder, 'B');
  },
);

t.test(
  'nextDueMs is the earliest grant, candidacy or waiter deadline; null when idle',
  async (t) => {
    const d = new Driver();
    t.equal(d.sm.nextDueMs(), null);
    d.acquire('L', 'A', { ttlMs: 5000 });
    d.campaign('g', 'p', { ttlMs: 3000 });
    t.equal(d.sm.nextDueMs(), 3000);
    d.acquire('L', 'B', { waitMs: 1000 });
    t.equal(d.sm.nextDueMs(), 1000);
    d.at(1000);
    t.equal(d.sm.nextDueMs(), 3000);
    d.at(5000);
    t.equal(d.sm.nextDueMs(), null);
  },
);

t.test('time.advance and null entries only advance time', async (t) => {
  const d = new Driver();
  t.same(d.run({ type: 'time.advance' }).result, { ok: true, value: null });
  t.same(d.run(null).result, { ok: true, value: null });
});

t.test('a large number of due entries expire in one entry in deterministic order', async (t) => {
  const a = new Driver();
  const b = new Driver();
  for (const d of [a, b]) {
    for (let i = 0; i < 200; i++) d.acquire(`n${(i * 7919) % 200}`, 'A', { ttlMs: 100 + (i % 3) });
    for (let i = 0; i < 200; i += 2) d.acquire(`n${i}`, 'B', { waitMs: 5000 });
  }
  const oa = a.at(1000);
  const ob = b.at(1000);
  t.same(oa, ob);
  t.equal(oa.changed.length, 200);
  t.equal(a.sm.counts().leases, 100);
  t.same(Buffer.from(a.sm.snapshot()), Buffer.from(b.sm.snapshot()));
});

// Proves the change events of each entry: in the order things happened (expiry, settle, command), one per grant change, with the fields a watch stream needs; renewals included; replays add none.
import t from 'tap';
import { Driver, okValue } from './fixtures/driver.js';

t.test(
  'acquire, renew, release, expiry and waiter grant produce granted/renewed/released/expired events',
  async (t) => {
    const d = new Driver();
    const a = d.run({
      type: 'lease.acquire',
      name: 'L',
      holder: 'A',
      ttlMs: 1000,
      waitMs: 0,
      lockDelayMs: 0,
      maxHoldMs: null,
    });
    t.same(a.events, [
      {
        kind: 'lease',
        name: 'L',
        type: 'granted',
        holder: 'A',
        fencingToken: 1000,
        mode: 'exclusive',
        ttlMs: 1000,
      },
    ]);
    t.same(
      d
        .run({ type: 'lease.renew', name: 'L', holder: 'A', fencingToken: 1000 })
        .events.map((e) => e.type),
      ['renewed'],
    );
    d.acquire('L', 'B', { waitMs: 60_000 });
    const exp = d.at(1000);
    t.same(
      exp.events.map((e) => `${e.type}:${e.holder}:${e.endReason ?? ''}`),
      ['expired:A:expired', 'granted:B:'],
    );
  },
);

t.test('maxHoldMs ends read as expired with endReason max_hold', async (t) => {
  const d = new Driver();
  d.acquire('L', 'A', { ttlMs: 1000, maxHoldMs: 500 });
  t.match(d.at(500).events, [{ type: 'expired', endReason: 'max_hold' }]);
  t.match(d.sm.history('lease', 'L', 1), [{ endReason: 'max_hold', endedAtMs: 500 }]);
});

t.test('elections: elected, value, resigned; kv: put and deleted', async (t) => {
  const d = new Driver();
  t.match(
    d.run({ type: 'election.campaign', group: 'g', candidate: 'p', ttlMs: 1000, value: 1 }).events,
    [
      {
        kind: 'election',
        name: 'g',
        type: 'elected',
        candidate: 'p',
        fencingToken: 1000,
        value: 1,
      },
    ],
  );
  t.match(
    d.run({ type: 'election.proclaim', group: 'g', candidate: 'p', fencingToken: 1000, value: 2 })
      .events,
    [{ type: 'value', value: 2 }],
  );
  t.match(d.run({ type: 'election.resign', group: 'g', candidate: 'p' }).events, [
    { type: 'resigned', endReason: 'resigned' },
  ]);
  t.same(d.run({ type: 'kv.put', key: 'k', value: [1], fence: null, ifRevision: null }).events, [
    { kind: 'kv', name: 'k', type: 'put', value: [1] },
  ]);
  t.same(d.run({ type: 'kv.delete', key: 'k', fence: null, ifRevision: null }).events, [
    { kind: 'kv', name: 'k', type: 'deleted' },
  ]);
});

t.test('a replayed result adds no events; failed commands add none', async (t) => {
  const d = new Driver();
  const first = d.run({ type: 'session.create', ttlMs: 1000, name: null }, { key: 'k1' });
  t.equal(first.events.length, 1);
  const again = d.run({ type: 'session.create', ttlMs: 1000, name: null }, { key: 'k1' });
  t.equal(again.result.replayed, true);
  t.same(again.events, []);
  t.same(okValue(again.result), okValue(first.result));
  t.same(d.run({ type: 'session.keepalive', sessionId: 's9' }).events, []);
});

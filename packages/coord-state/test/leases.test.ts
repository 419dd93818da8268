// Proves the lease rules of docs/api.md (acquire/renew/release, waiters, lock-delay, maxHoldMs, not_holder vs lease_expired) one rule per test.
import t from 'tap';
import { Driver, errCode, errDetails, okValue } from './fixtures/driver.js';

type Granted = {
  kind: 'granted';
  name: string;
  holder: string;
  fencingToken: number;
  ttlMs: number;
};
type Queued = { kind: 'queued'; waiterId: number; deadlineMs: number };

t.test('acquire of a free name grants with token = index × 1000 and the asked ttl', async (t) => {
  const d = new Driver();
  const v = okValue<Granted>(d.acquire('L', 'A', { ttlMs: 1500 }));
  t.same(v, { kind: 'granted', name: 'L', holder: 'A', fencingToken: 1000, ttlMs: 1500 });
  t.same(d.sm.getLease('L', 0), {
    name: 'L',
    holder: 'A',
    fencingToken: 1000,
    ttlMs: 1500,
    remainingMs: 1500,
  });
});

t.test('acquire by the current holder renews and returns the same token', async (t) => {
  const d = new Driver();
  const first = okValue<Granted>(d.acquire('L', 'A', { ttlMs: 1000 }));
  const again = okValue<Granted>(d.acquire('L', 'A', { ttlMs: 2000, atMs: 500 }));
  t.equal(again.fencingToken, first.fencingToken);
  t.equal(again.ttlMs, 2000);
  t.equal(d.sm.getLease('L', 500)?.remainingMs, 2000);
});

t.test('acquire of a held name without waitMs is held with the holder in details', async (t) => {
  const d = new Driver();
  d.acquire('L', 'A');
  const r = d.acquire('L', 'B');
  t.equal(errCode(r), 'held');
  t.same(errDetails(r), { holder: 'A' });
});

t.test(
  'no early expiry: a lease is live until exactly grant time + ttlMs in cluster time',
  async (t) => {
    const d = new Driver();
    d.acquire('L', 'A', { ttlMs: 1000, atMs: 100 });
    d.at(1099);
    t.equal(d.sm.getLease('L', 1099)?.holder, 'A');
    t.equal(errCode(d.acquire('L', 'B', { atMs: 1099 })), 'held');
    const out = d.at(1100);
    t.same(out.changed, ['lease:L']);
    t.equal(d.sm.getLease('L', 1100), null);
    t.equal(okValue<Granted>(d.acquire('L', 'B', { atMs: 1100 })).holder, 'B');
  },
);

t.test('renew extends from the entry time and keeps the token', async (t) => {
  const d = new Driver();
  const g = okValue<Granted>(d.acquire('L', 'A', { ttlMs: 1000 }));
  const r = okValue<Granted>(d.renew('L', 'A', g.fencingToken, { atMs: 900 }));
  t.same(r, { name: 'L', holder: 'A', fencingToken: g.fencingToken, ttlMs: 1000 });
  d.at(1500);
  t.equal(d.sm.getLease('L', 1500)?.remainingMs, 400);
});

t.test('renew with a wrong token or by another holder is not_holder', async (t) => {
  const d = new Driver();
  const g = okValue<Granted>(d.acquire('L', 'A'));
  t.equal(errCode(d.renew('L', 'A', g.fencingToken + 1)), 'not_holder');
  t.equal(errCode(d.renew('L', 'B', g.fencingToken)), 'not_holder');
  t.equal(errCode(d.renew('nope', 'A', 1)), 'not_holder');
});

t.test('renew or release of the very grant that expired is lease_expired', async (t) => {
  const d = new Driver();
  const g = okValue<Granted>(d.acquire('L', 'A', { ttlMs: 1000 }));
  d.at(1000);
  t.equal(errCode(d.renew('L', 'A', g.fencingToken)), 'lease_expired');
  t.equal(errCode(d.release('L', 'A', g.fencingToken)), 'lease_expired');
  // ...even after someone else took the name.
  d.acquire('L', 'B');
  t.equal(errCode(d.renew('L', 'A', g.fencingToken)), 'lease_expired');
  t.same(
    d.sm.leaseHistory('L').map((e) => [e.holder, e.reason]),
    [['A', 'expired']],
  );
});

t.test('release of the live grant frees the name with no lock-delay', async (t) => {
  const d = new Driver();
  const g = okValue<Granted>(d.acquire('L', 'A', { lockDelayMs: 5000 }));
  t.same(okValue(d.release('L', 'A', g.fencingToken)), { name: 'L', released: true });
  t.equal(d.sm.getLease('L', 0), null);
  t.equal(d.sm.lockDelayRemainingMs('L', 0), 0);
  t.equal(okValue<Granted>(d.acquire('L', 'B')).holder, 'B');
  t.equal(d.sm.counts().leases, 1);
});

t.test("another holder's release never touches the lease (BC-12)", async (t) => {
  const d = new Driver();
  const g1 = okValue<Granted>(d.acquire('L', 'A'));
  d.release('L', 'A', g1.fencingToken);
  const g2 = okValue<Granted>(d.acquire('L', 'A'));
  // A replay of the old release: same holder, old token.
  t.equal(errCode(d.release('L', 'A', g1.fencingToken)), 'not_holder');
  t.equal(errCode(d.release('L', 'B', g2.fencingToken)), 'not_holder');
  t.equal(d.sm.getLease('L', d.nowMs)?.fencingToken, g2.fencingToken);
  t.ok(g2.fencingToken > g1.fencingToken);
});

t.test(
  'lock-delay applies after expiry: held with holder null and lockDelayRemainingMs',
  async (t) => {
    const d = new Driver();
    d.acquire('L', 'A', { ttlMs: 1000, lockDelayMs: 3000 });
    d.at(1000);
    const r = d.acquire('L', 'B', { atMs: 1500 });
    t.equal(errCode(r), 'held');
    t.same(errDetails(r), { holder: null, lockDelayRemainingMs: 2500 });
    t.equal(d.sm.lockDelayRemainingMs('L', 1500), 2500);
    // Lock-delay without waiters never wakes the leader.
    t.equal(d.sm.nextDueMs(), null);
    t.equal(okValue<Granted>(d.acquire('L', 'B', { atMs: 4000 })).holder, 'B');
  },
);

t.test(
  'a waiter behind a lock-delay is granted when it ends and nextDueMs reports it',
  async (t) => {
    const d = new Driver();
    d.acquire('L', 'A', { ttlMs: 1000, lockDelayMs: 3000 });
    d.at(1000);
    const q = okValue<Queued>(d.acquire('L', 'B', { waitMs: 10_000, atMs: 1200 }));
    t.equal(d.sm.nextDueMs(), 4000);
    d.at(3999);
    t.equal(d.sm.waiterOutcome('L', q.waiterId).kind, 'pending');
    const out = d.at(4000);
    t.same(out.changed, ['lease:L']);
    t.match(d.sm.waiterOutcome('L', q.waiterId), { kind: 'granted', holder: 'B', ttlMs: 1000 });
  },
);

t.test('waiters are granted FIFO, each with a fresh ttl from its grant entry', async (t) => {
  const d = new Driver();
  const a = okValue<Granted>(d.acquire('L', 'A'));
  const qb = okValue<Queued>(d.acquire('L', 'B', { waitMs: 10_000, ttlMs: 700 }));
  const qc = okValue<Queued>(d.acquire('L', 'C', { waitMs: 10_000 }));
  d.release('L', 'A', a.fencingToken, { atMs: 300 });
  const gb = d.sm.waiterOutcome('L', qb.waiterId);
  t.match(gb, { kind: 'granted', holder: 'B', ttlMs: 700 });
  t.equal(d.sm.getLease('L', 300)?.remainingMs, 700);
  t.equal(d.sm.waiterOutcome('L', qc.waiterId).kind, 'pending');
  d.at(1000); // B expires at 300 + 700
  t.match(d.sm.waiterOutcome('L', qc.waiterId), { kind: 'granted', holder: 'C' });
  t.ok(
    (d.sm.getLease('L', 1000)?.fencingToken ?? 0) >
      (gb.kind === 'granted' ? gb.fencingToken : Infinity),
  );
});

t.test(
  'a waiter whose deadline passed is never granted and its answer becomes held (BC-01)',
  async (t) => {
    const d = new Driver();
    const a = okValue<Granted>(d.acquire('L', 'A', { ttlMs: 5000 }));
    const q = okValue<Queued>(d.acquire('L', 'B', { waitMs: 1000, key: 'kb' }));
    t.equal(q.deadlineMs, 1000);
    t.equal(d.sm.nextDueMs(), 1000);
    const out = d.at(1000);
    t.same(out.changed, ['lease:L']);
    t.same(d.sm.waiterOutcome('L', q.waiterId), { kind: 'timed_out', holder: 'A' });
    d.release('L', 'A', a.fencingToken, { atMs: 2000 });
    t.equal(d.sm.getLease('L', 2000), null);
    const replay = d.sm.idempotentResult('kb');
    t.equal(replay?.result.ok, false);
    t.equal(!replay?.result.ok && replay?.result.error.code, 'held');
  },
);

t.test(
  'a waiter due in the same entry as the expiry that frees the name is not granted',
  async (t) => {
    const d = new Driver();
    d.acquire('L', 'A', { ttlMs: 1000 });
    const qb = okValue<Queued>(d.acquire('L', 'B', { waitMs: 990, atMs: 10 })); // deadline 1000
    const qc = okValue<Queued>(d.acquire('L', 'C', { waitMs: 5000, atMs: 20 }));
    d.at(1500);
    t.same(
      d.sm.waiterOutcome('L', qb.waiterId),
      { kind: 'timed_out', holder: 'A' },
      'it timed out while A still held the name',
    );
    t.match(d.sm.waiterOutcome('L', qc.waiterId), { kind: 'granted', holder: 'C' });
    t.equal(d.sm.getLease('L', 1500)?.remainingMs, 1000, 'ttl counts from the granting entry');
  },
);

t.test(
  'a waiter live when the name fell free is granted, even if the next entry is past its deadline',
  async (t) => {
    // Cluster time can jump past both the expiry (1000) and the deadline (1200) in one entry, e.g.
    // after a leaderless spell: the waiter was live at 1000, so it gets the lease (chaos history:
    // a waited acquire answered 409 held with holder null and no lock-delay).
    const d = new Driver();
    d.acquire('L', 'A', { ttlMs: 1000 });
    const qb = okValue<Queued>(d.acquire('L', 'B', { waitMs: 1190, atMs: 10, ttlMs: 800 }));
    t.equal(qb.deadlineMs, 1200);
    d.at(1500);
    t.match(d.sm.waiterOutcome('L', qb.waiterId), { kind: 'granted', holder: 'B', ttlMs: 800 });
    t.equal(d.sm.getLease('L', 1500)?.remainingMs, 800, 'ttl counts from the granting entry');
  },
);

t.test(
  'a waiter whose deadline falls inside the lock-delay is not granted by a jump',
  async (t) => {
    const d = new Driver();
    d.acquire('L', 'A', { ttlMs: 1000, lockDelayMs: 300 }); // free at 1300
    const qb = okValue<Queued>(d.acquire('L', 'B', { waitMs: 1190, atMs: 10 })); // deadline 1200
    const qc = okValue<Queued>(d.acquire('L', 'C', { waitMs: 5000, atMs: 20 }));
    d.at(1500);
    t.same(d.sm.waiterOutcome('L', qb.waiterId), { kind: 'timed_out', holder: null });
    t.match(d.sm.waiterOutcome('L', qc.waiterId), { kind: 'granted', holder: 'C' });
  },
);

t.test(
  "a waiter's fate is remembered for the window after the entry that decided it, not after its deadline",
  async (t) => {
    // A jump longer than the outcome window (10 min; e.g. a long leaderless spell): the entry at
    // 700000 grants D on M as of 115 (C's grant fell free) and times B out as of 1200 (A held L);
    // both fates must be readable after that entry (the server answers a waiting acquire from it).
    const d = new Driver();
    d.acquire('L', 'A', { ttlMs: 5000 });
    const qb = okValue<Queued>(d.acquire('L', 'B', { waitMs: 1190, atMs: 10 })); // deadline 1200
    d.acquire('M', 'C', { ttlMs: 100, atMs: 15 }); // free at 115
    const qd = okValue<Queued>(d.acquire('M', 'D', { waitMs: 60_000, atMs: 20 }));
    d.at(700_000);
    t.same(d.sm.waiterOutcome('L', qb.waiterId), { kind: 'timed_out', holder: 'A' });
    t.match(d.sm.waiterOutcome('M', qd.waiterId), { kind: 'granted', holder: 'D' });
  },
);

t.test('a granted waiter updates the idempotency record of its acquire', async (t) => {
  const d = new Driver();
  const a = okValue<Granted>(d.acquire('L', 'A'));
  d.acquire('L', 'B', { waitMs: 5000, key: 'kb' });
  t.match(d.sm.idempotentResult('kb')?.result, { ok: true, value: { kind: 'queued' } });
  d.release('L', 'A', a.fencingToken);
  t.match(d.sm.idempotentResult('kb')?.result, {
    ok: true,
    value: { kind: 'granted', holder: 'B' },
  });
  const replay = d.acquire('L', 'B', { waitMs: 5000, key: 'kb' });
  t.match(replay, { ok: true, replayed: true, value: { kind: 'granted', holder: 'B' } });
});

t.test(
  'a second acquire-with-wait by the same holder returns the same waiter and may extend its deadline',
  async (t) => {
    const d = new Driver();
    d.acquire('L', 'A');
    const q1 = okValue<Queued>(d.acquire('L', 'B', { waitMs: 1000 }));
    const q2 = okValue<Queued>(d.acquire('L', 'B', { waitMs: 3000, atMs: 100 }));
    t.equal(q2.waiterId, q1.waiterId);
    t.equal(q2.deadlineMs, 3100);
    t.equal(d.sm.counts().waiters, 1);
  },
);

t.test(
  'cancelWait withdraws a pending waiter; again or by another holder is a no-op / not_holder',
  async (t) => {
    const d = new Driver();
    const a = okValue<Granted>(d.acquire('L', 'A'));
    const q = okValue<Queued>(d.acquire('L', 'B', { waitMs: 5000 }));
    t.equal(
      errCode(
        d.run({ type: 'lease.cancelWait', name: 'L', holder: 'C', waiterId: q.waiterId }).result,
      ),
      'not_holder',
    );
    t.same(
      okValue(
        d.run({ type: 'lease.cancelWait', name: 'L', holder: 'B', waiterId: q.waiterId }).result,
      ),
      { name: 'L', waiterId: q.waiterId, cancelled: true },
    );
    t.same(
      d.sm.waiterOutcome('L', q.waiterId),
      { kind: 'cancelled', holder: 'A' },
      'the outcome names the holder when the waiter was withdrawn',
    );
    t.same(
      okValue(
        d.run({ type: 'lease.cancelWait', name: 'L', holder: 'B', waiterId: q.waiterId }).result,
      ),
      { name: 'L', waiterId: q.waiterId, cancelled: false },
    );
    d.release('L', 'A', a.fencingToken);
    t.equal(d.sm.getLease('L', d.nowMs), null, 'a cancelled waiter is never granted (BC-27)');
    t.same(d.sm.waiterOutcome('nope', q.waiterId), { kind: 'unknown' });
  },
);

t.test(
  'maxHoldMs caps renewals with a shorter ttlMs, then the grant expires (lease_expired)',
  async (t) => {
    const d = new Driver();
    const g = okValue<Granted>(d.acquire('L', 'A', { ttlMs: 1000, maxHoldMs: 2500 }));
    t.equal(okValue<Granted>(d.renew('L', 'A', g.fencingToken, { atMs: 1000 - 1 })).ttlMs, 1000);
    t.equal(okValue<Granted>(d.renew('L', 'A', g.fencingToken, { atMs: 1800 })).ttlMs, 700);
    d.at(2500);
    t.equal(errCode(d.renew('L', 'A', g.fencingToken)), 'lease_expired');
    t.equal(d.sm.getLease('L', 2500), null);
  },
);

t.test('maxHoldMs shorter than ttlMs caps the first grant', async (t) => {
  const d = new Driver();
  t.equal(okValue<Granted>(d.acquire('L', 'A', { ttlMs: 5000, maxHoldMs: 200 })).ttlMs, 200);
});

t.test(
  'ttlMs, waitMs, lockDelayMs, maxHoldMs out of range are invalid_argument naming the field',
  async (t) => {
    const d = new Driver();
    for (const [o, field] of [
      [{ ttlMs: 99 }, 'ttlMs'],
      [{ ttlMs: 3_600_001 }, 'ttlMs'],
      [{ waitMs: 60_001 }, 'waitMs'],
      [{ lockDelayMs: 600_001 }, 'lockDelayMs'],
      [{ maxHoldMs: 1 }, 'maxHoldMs'],
    ] as const) {
      const r = d.acquire('L', 'A', o);
      t.equal(errCode(r), 'invalid_argument');
      t.equal(errDetails(r)['field'], field);
    }
    t.equal(d.sm.counts().leases, 0);
  },
);

t.test('bad names and holders are invalid_argument', async (t) => {
  const d = new Driver();
  t.equal(errDetails(d.acquire('-bad', 'A'))['field'], 'name');
  t.equal(errDetails(d.acquire('a/b', 'A'))['field'], 'name');
  t.equal(errDetails(d.acquire('x'.repeat(201), 'A'))['field'], 'name');
  t.equal(errDetails(d.acquire('y', 'A\n'))['field'], 'holder');
  t.equal(errDetails(d.acquire('y', ''))['field'], 'holder');
  t.ok(okValue(d.acquire('x'.repeat(200), 'B')));
});

t.test(
  'limits: leasesMax, waitersPerLeaseMax and waitersMax give resource_exhausted',
  async (t) => {
    const d = new Driver({ leasesMax: 2, waitersPerLeaseMax: 1, waitersMax: 2 });
    d.acquire('a', 'A');
    d.acquire('b', 'A');
    t.same(errDetails(d.acquire('c', 'A')), { limit: 'leasesMax' });
    d.acquire('a', 'B', { waitMs: 1000 });
    t.same(errDetails(d.acquire('a', 'C', { waitMs: 1000 })), { limit: 'waitersPerLeaseMax' });
    d.acquire('b', 'B', { waitMs: 1000 });
    t.equal(d.sm.counts().waiters, 2);
  },
);

t.test('listLeases returns live leases by prefix, sorted, limited', async (t) => {
  const d = new Driver();
  for (const n of ['b2', 'a1', 'b1', 'b3']) d.acquire(n, 'A', { ttlMs: 1000 });
  t.same(
    d.sm.listLeases('b', 2, 0).map((l) => l.name),
    ['b1', 'b2'],
  );
  t.same(d.sm.listLeases('', 10, 1000), []);
});

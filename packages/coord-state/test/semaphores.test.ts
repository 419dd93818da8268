// Proves the semaphore rules: at most `limit` live permits, a token per permit above every earlier one, one permit per holder (a repeat renews), limit_mismatch, FIFO waiters with deadlines, renew/release per permit, fencing with {semaphore, fencingToken}, limits.
import t from 'tap';
import { Driver, errCode, errDetails, okValue } from './fixtures/driver.js';

type Permit = { kind: string; fencingToken: number; holder: string; limit: number; ttlMs: number };

t.test('grants up to limit permits, each with its own increasing token; then held', async (t) => {
  const d = new Driver();
  const a = okValue<Permit>(d.semAcquire('S', 'A', { limit: 2 }));
  const b = okValue<Permit>(d.semAcquire('S', 'B', { limit: 2 }));
  t.same(a, { kind: 'granted', name: 'S', holder: 'A', fencingToken: 1000, limit: 2, ttlMs: 1000 });
  t.ok(b.fencingToken > a.fencingToken);
  const full = d.semAcquire('S', 'C', { limit: 2 });
  t.equal(errCode(full), 'held');
  t.same(errDetails(full), { holder: null, limit: 2, live: 2 });
  t.same(d.sm.getSemaphore('S', 0), {
    name: 'S',
    limit: 2,
    holders: [
      { holder: 'A', fencingToken: 1000, remainingMs: 1000 },
      { holder: 'B', fencingToken: 2000, remainingMs: 1000 },
    ],
    waiters: 0,
  });
});

t.test(
  'a second acquire by the same holder renews its permit (same token, one permit)',
  async (t) => {
    const d = new Driver();
    const a = okValue<Permit>(d.semAcquire('S', 'A', { limit: 1 }));
    const again = okValue<Permit>(d.semAcquire('S', 'A', { limit: 1, atMs: 500 }));
    t.equal(again.fencingToken, a.fencingToken);
    t.equal(d.sm.getSemaphore('S', 500)?.holders.length, 1);
    t.equal(d.sm.getSemaphore('S', 500)?.holders[0]?.remainingMs, 1000);
  },
);

t.test(
  'another limit while the name has holders or waiters is limit_mismatch; an idle name takes a new one',
  async (t) => {
    const d = new Driver();
    const a = okValue<Permit>(d.semAcquire('S', 'A', { limit: 1 }));
    const r = d.semAcquire('S', 'B', { limit: 3 });
    t.equal(errCode(r), 'limit_mismatch');
    t.same(errDetails(r), { limit: 1 });
    d.run({ type: 'semaphore.release', name: 'S', holder: 'A', fencingToken: a.fencingToken });
    t.equal(okValue<Permit>(d.semAcquire('S', 'B', { limit: 3 })).limit, 3);
  },
);

t.test(
  'FIFO waiters get freed permits in order; a waiter past its deadline is never granted',
  async (t) => {
    const d = new Driver();
    const a = okValue<Permit>(d.semAcquire('S', 'A', { limit: 1, ttlMs: 10_000 }));
    const w1 = okValue<{ kind: string; waiterId: number }>(
      d.semAcquire('S', 'B', { limit: 1, waitMs: 100 }),
    );
    t.equal(w1.kind, 'queued');
    d.semAcquire('S', 'C', { limit: 1, waitMs: 60_000 });
    t.equal(d.sm.getSemaphore('S', 0)?.waiters, 2);
    d.at(100); // B's deadline passes
    t.equal(d.sm.waiterOutcome('S', w1.waiterId).kind, 'timed_out');
    const out = d.run(
      { type: 'semaphore.release', name: 'S', holder: 'A', fencingToken: a.fencingToken },
      { atMs: 200 },
    );
    t.same(out.changed, ['semaphore:S']);
    t.same(
      d.sm.getSemaphore('S', 200)?.holders.map((h) => h.holder),
      ['C'],
    );
  },
);

t.test(
  'renew/release name one permit; others answer not_holder, an expired one lease_expired',
  async (t) => {
    const d = new Driver();
    const a = okValue<Permit>(d.semAcquire('S', 'A', { limit: 2, ttlMs: 1000 }));
    const b = okValue<Permit>(d.semAcquire('S', 'B', { limit: 2, ttlMs: 5000 }));
    t.equal(
      errCode(
        d.run({ type: 'semaphore.renew', name: 'S', holder: 'A', fencingToken: b.fencingToken })
          .result,
      ),
      'not_holder',
    );
    t.same(
      okValue(
        d.run(
          { type: 'semaphore.renew', name: 'S', holder: 'A', fencingToken: a.fencingToken },
          { atMs: 900 },
        ).result,
      ),
      {
        name: 'S',
        holder: 'A',
        fencingToken: a.fencingToken,
        limit: 2,
        ttlMs: 1000,
      },
    );
    d.at(1900);
    t.equal(
      errCode(
        d.run({ type: 'semaphore.release', name: 'S', holder: 'A', fencingToken: a.fencingToken })
          .result,
      ),
      'lease_expired',
    );
    t.same(
      okValue(
        d.run({ type: 'semaphore.release', name: 'S', holder: 'B', fencingToken: b.fencingToken })
          .result,
      ),
      {
        name: 'S',
        released: true,
      },
    );
    t.equal(d.sm.getSemaphore('S', 1900), null, 'idle semaphore reads 404');
  },
);

t.test(
  'fence checks and fenced KV writes take {semaphore, fencingToken}: valid while that permit is live',
  async (t) => {
    const d = new Driver();
    const a = okValue<Permit>(d.semAcquire('S', 'A', { limit: 2, ttlMs: 1000 }));
    const b = okValue<Permit>(d.semAcquire('S', 'B', { limit: 2, ttlMs: 5000 }));
    t.same(d.sm.fenceCheck({ semaphore: 'S', fencingToken: a.fencingToken }), {
      valid: true,
      current: b.fencingToken,
    });
    const put = (token: number) =>
      d.run({
        type: 'kv.put',
        key: 'k',
        value: 1,
        fence: { semaphore: 'S', fencingToken: token },
        ifRevision: null,
      }).result;
    t.ok(put(a.fencingToken).ok);
    d.at(1000);
    t.equal(errCode(put(a.fencingToken)), 'stale_token');
    t.ok(put(b.fencingToken).ok);
    t.same(d.sm.fenceCheck({ semaphore: 'never', fencingToken: 1 }), {
      valid: false,
      current: null,
    });
  },
);

t.test(
  'limit range and limits: limit 0 or above semaphoreLimitMax is invalid; semaphoresMax, waiters',
  async (t) => {
    const d = new Driver({ semaphoresMax: 1, semaphoreLimitMax: 5, waitersPerLeaseMax: 1 });
    t.same(errDetails(d.semAcquire('S', 'A', { limit: 0 })), { field: 'limit' });
    t.same(errDetails(d.semAcquire('S', 'A', { limit: 6 })), { field: 'limit' });
    d.semAcquire('S', 'A', { limit: 1 });
    t.same(errDetails(d.semAcquire('T', 'A', { limit: 1 })), { limit: 'semaphoresMax' });
    d.semAcquire('S', 'B', { limit: 1, waitMs: 1000 });
    t.same(errDetails(d.semAcquire('S', 'C', { limit: 1, waitMs: 1000 })), {
      limit: 'waitersPerLeaseMax',
    });
  },
);

t.test(
  'cancelWait withdraws a semaphore waiter (BC-44: an aborted wait leaves nothing behind)',
  async (t) => {
    const d = new Driver();
    d.semAcquire('S', 'A', { limit: 1, ttlMs: 10_000 });
    const w = okValue<{ waiterId: number }>(d.semAcquire('S', 'B', { limit: 1, waitMs: 60_000 }));
    t.equal(
      errCode(
        d.run({ type: 'semaphore.cancelWait', name: 'S', holder: 'C', waiterId: w.waiterId })
          .result,
      ),
      'not_holder',
    );
    t.same(
      okValue(
        d.run({ type: 'semaphore.cancelWait', name: 'S', holder: 'B', waiterId: w.waiterId })
          .result,
      ),
      {
        name: 'S',
        waiterId: w.waiterId,
        cancelled: true,
      },
    );
    t.equal(d.sm.getSemaphore('S', 0)?.waiters, 0);
  },
);

t.test('an acquire by the holder under another binding is grant_mismatch', async (t) => {
  const d = new Driver();
  const sid = okValue<{ sessionId: string }>(
    d.run({ type: 'session.create', ttlMs: 5000, name: null }).result,
  ).sessionId;
  const a = okValue<Permit>(d.semAcquire('S', 'A', { limit: 2 }));
  const bound = d.semAcquire('S', 'A', { limit: 2, session: sid });
  t.equal(errCode(bound), 'grant_mismatch');
  t.same(errDetails(bound), { holder: 'A', fencingToken: a.fencingToken, session: null });
  const b = okValue<Permit>(d.semAcquire('S', 'B', { limit: 2, session: sid }));
  t.same(errDetails(d.semAcquire('S', 'B', { limit: 2 })), {
    holder: 'B',
    fencingToken: b.fencingToken,
    session: sid,
  });
  t.equal(
    okValue<Permit>(d.semAcquire('S', 'B', { limit: 2, session: sid })).fencingToken,
    b.fencingToken,
  );
  t.equal(d.sm.getSemaphore('S', 0)?.holders[0]?.remainingMs, 1000, 'the ttl permit is untouched');
});

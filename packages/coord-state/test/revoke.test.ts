// Proves operator revoke for leases, semaphores and elections: ends all live grants (or one by token) as if expired with reason revoked, fences the token, applies lock-delay, not_holder for a token that is not live, [] when nothing is live.
import t from 'tap';
import { Driver, errCode, okValue } from './fixtures/driver.js';

type G = { fencingToken: number };

t.test(
  'lease revoke without a token ends every live grant, fences it and starts lock-delay',
  async (t) => {
    const d = new Driver();
    const a = okValue<G>(d.acquire('L', 'A', { lockDelayMs: 400, ttlMs: 10_000 }));
    d.acquire('L', 'B', { waitMs: 60_000 });
    const out = d.run(
      { type: 'lease.revoke', name: 'L', fencingToken: null, reason: 'stuck' },
      { atMs: 100 },
    );
    t.same(okValue(out.result), { name: 'L', revoked: [a.fencingToken] });
    t.match(out.events, [
      {
        kind: 'lease',
        type: 'revoked',
        holder: 'A',
        fencingToken: a.fencingToken,
        endReason: 'revoked',
      },
    ]);
    t.equal(d.sm.fenceCheck({ lease: 'L', fencingToken: a.fencingToken }).valid, false);
    t.equal(errCode(d.renew('L', 'A', a.fencingToken)), 'lease_expired');
    t.equal(d.sm.lockDelayRemainingMs('L', 100), 400);
    d.at(500);
    t.equal(d.sm.getLease('L', 500)?.holder, 'B', 'the waiter gets it once the lock-delay is over');
    t.match(d.sm.history('lease', 'L', 20), [
      { holder: 'B', endReason: null, endedAtMs: null },
      { holder: 'A', endReason: 'revoked', endedAtMs: 100, mode: 'exclusive' },
    ]);
  },
);

t.test(
  'revoke by token ends only that grant; a token that is not live is not_holder; nothing live is []',
  async (t) => {
    const d = new Driver();
    const a = okValue<G>(d.acquire('L', 'A', { mode: 'shared' }));
    const b = okValue<G>(d.acquire('L', 'B', { mode: 'shared' }));
    t.same(
      okValue(
        d.run({ type: 'lease.revoke', name: 'L', fencingToken: a.fencingToken, reason: null })
          .result,
      ),
      {
        name: 'L',
        revoked: [a.fencingToken],
      },
    );
    t.equal(d.sm.fenceCheck({ lease: 'L', fencingToken: b.fencingToken }).valid, true);
    t.equal(
      errCode(
        d.run({ type: 'lease.revoke', name: 'L', fencingToken: a.fencingToken, reason: null })
          .result,
      ),
      'not_holder',
    );
    t.same(
      okValue(
        d.run({ type: 'lease.revoke', name: 'none', fencingToken: null, reason: null }).result,
      ),
      {
        name: 'none',
        revoked: [],
      },
    );
  },
);

t.test('semaphore revoke ends permits (oldest first) and hands them to waiters', async (t) => {
  const d = new Driver();
  const a = okValue<G>(d.semAcquire('S', 'A', { limit: 2, ttlMs: 10_000 }));
  const b = okValue<G>(d.semAcquire('S', 'B', { limit: 2, ttlMs: 10_000 }));
  d.semAcquire('S', 'C', { limit: 2, waitMs: 60_000 });
  t.same(
    okValue(
      d.run({ type: 'semaphore.revoke', name: 'S', fencingToken: null, reason: null }).result,
    ),
    {
      name: 'S',
      revoked: [a.fencingToken, b.fencingToken],
    },
  );
  t.same(
    d.sm.getSemaphore('S', 0)?.holders.map((h) => h.holder),
    ['C'],
  );
  t.match(d.sm.history('semaphore', 'S', 3), [
    { holder: 'C' },
    { holder: 'B', endReason: 'revoked' },
    { holder: 'A', endReason: 'revoked' },
  ]);
});

t.test(
  'election revoke ends the leadership; the next candidate leads with a higher token',
  async (t) => {
    const d = new Driver();
    const p = okValue<G>(d.campaign('g', 'p', { ttlMs: 10_000 }));
    d.campaign('g', 'q', { ttlMs: 10_000 });
    t.equal(
      errCode(
        d.run({
          type: 'election.revoke',
          group: 'g',
          fencingToken: p.fencingToken + 1,
          reason: null,
        }).result,
      ),
      'not_holder',
    );
    t.same(
      okValue(
        d.run({ type: 'election.revoke', group: 'g', fencingToken: p.fencingToken, reason: null })
          .result,
      ),
      {
        group: 'g',
        revoked: [p.fencingToken],
      },
    );
    const leader = d.sm.getElection('g').leader!;
    t.equal(leader.candidate, 'q');
    t.ok(leader.fencingToken > p.fencingToken);
    t.equal(d.sm.fenceCheck({ election: 'g', fencingToken: p.fencingToken }).valid, false);
    t.match(d.sm.history('election', 'g', 5), [
      { holder: 'q', endReason: null },
      { holder: 'p', endReason: 'revoked' },
    ]);
    t.same(
      okValue(
        d.run({ type: 'election.revoke', group: 'empty', fencingToken: null, reason: null }).result,
      ),
      {
        group: 'empty',
        revoked: [],
      },
    );
  },
);

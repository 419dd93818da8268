// Proves the session rules: ids from the log index, keepalive/end/expiry in cluster time, grants bound to a session end together in one entry (leases, permits, waiters, candidacies), lock-delay only on expiry, limits.
import t from 'tap';
import type { ChangeEvent } from '../src/index.js';
import { Driver, errCode, errDetails, okValue } from './fixtures/driver.js';

type Sess = { sessionId: string; ttlMs: number };

function session(d: Driver, ttlMs = 1000, name: string | null = null): string {
  return okValue<Sess>(d.run({ type: 'session.create', ttlMs, name }).result).sessionId;
}

t.test(
  'create answers an id derived from the log index and the ttl; ids are never reused',
  async (t) => {
    const d = new Driver();
    const out = d.run({ type: 'session.create', ttlMs: 1500, name: 'worker-1' });
    t.same(okValue(out.result), { sessionId: 's1', ttlMs: 1500 });
    t.same(out.changed, ['session:s1']);
    t.same(out.events, [{ kind: 'session', name: 's1', type: 'granted', ttlMs: 1500 }]);
    d.run({ type: 'session.end', sessionId: 's1' });
    t.equal(session(d), 's3');
    t.match(d.sm.getSession('s3', 0), {
      sessionId: 's3',
      name: null,
      ttlMs: 1000,
      remainingMs: 1000,
    });
  },
);

t.test(
  'keepalive extends from the entry time; unknown or ended sessions are not_found',
  async (t) => {
    const d = new Driver();
    const id = session(d, 1000);
    t.same(okValue(d.run({ type: 'session.keepalive', sessionId: id }, { atMs: 900 }).result), {
      sessionId: id,
      ttlMs: 1000,
    });
    d.at(1899);
    t.equal(d.sm.getSession(id, 1899)?.remainingMs, 1);
    const out = d.at(1900);
    t.same(out.changed, [`session:${id}`]);
    t.equal(d.sm.getSession(id, 1900), null);
    t.equal(errCode(d.run({ type: 'session.keepalive', sessionId: id }).result), 'not_found');
    t.equal(errCode(d.run({ type: 'session.end', sessionId: id }).result), 'not_found');
    t.equal(errCode(d.run({ type: 'session.keepalive', sessionId: 's999' }).result), 'not_found');
    t.equal(d.sm.nextDueMs(), null);
  },
);

t.test(
  'a session-bound lease has no ttl of its own and lives while the session does',
  async (t) => {
    const d = new Driver();
    const id = session(d, 1000);
    const g = okValue<{ fencingToken: number; ttlMs: null; session: string }>(
      d.acquire('L', 'A', { ttlMs: null, session: id }),
    );
    t.same(g, {
      kind: 'granted',
      name: 'L',
      holder: 'A',
      fencingToken: 2000,
      ttlMs: null,
      session: id,
    });
    t.equal(d.sm.getLease('L', 0), null, 'getLease shows ttl grants only');
    t.same(d.sm.leaseState('L', 500), {
      name: 'L',
      holder: 'A',
      fencingToken: 2000,
      ttlMs: null,
      session: id,
      remainingMs: 500,
    });
    // renew of the grant answers like a keepalive of its session
    const r = d.renew('L', 'A', 2000, { atMs: 800 });
    t.same(okValue(r), { name: 'L', holder: 'A', fencingToken: 2000, ttlMs: null, session: id });
    t.equal(d.sm.getSession(id, 800)?.remainingMs, 1000);
    t.same(d.sm.getSession(id, 800)?.leases, [{ name: 'L', fencingToken: 2000 }]);
    d.at(1799);
    t.equal(d.sm.fenceCheck({ lease: 'L', fencingToken: 2000 }).valid, true);
  },
);

t.test(
  'session expiry ends every grant, waiter and candidacy in one entry; lock-delay from the expiry time',
  async (t) => {
    const d = new Driver();
    const id = session(d, 1000);
    d.acquire('L', 'A', { ttlMs: null, session: id, lockDelayMs: 300 });
    d.acquire('M', 'B', { ttlMs: 5000 });
    d.acquire('M', 'A', { ttlMs: null, session: id, waitMs: 60_000 }); // waiter bound to the session
    d.run({
      type: 'semaphore.acquire',
      name: 'S',
      holder: 'A',
      limit: 2,
      ttlMs: null,
      session: id,
      waitMs: 0,
    });
    d.campaign('g', 'A', { ttlMs: null, session: id, value: 1 });
    d.campaign('g', 'q', { ttlMs: 60_000 });
    t.equal(d.sm.getSession(id, 0)?.candidacies.length, 1);
    const out = d.at(1200); // the session expired at 1000
    t.same(out.changed, ['election:g', 'lease:L', 'lease:M', 'semaphore:S', `session:${id}`]);
    const ends = out.events.filter((e: ChangeEvent) => e.type === 'session_ended');
    t.same(
      ends.map((e) => `${e.kind}:${e.name}`),
      ['lease:L', 'semaphore:S', 'election:g', `session:${id}`],
    );
    t.equal(d.sm.counts().waiters, 0, 'the waiter was withdrawn');
    t.equal(d.sm.waiterOutcome('M', 4).kind, 'cancelled');
    t.equal(d.sm.getElection('g').leader?.candidate, 'q', 'the next candidate leads');
    t.equal(d.sm.getSemaphore('S', 1200), null);
    t.equal(d.sm.lockDelayRemainingMs('L', 1200), 100, 'lock-delay runs from the expiry at 1000');
    t.match(d.sm.history('lease', 'L', 5), [
      { holder: 'A', session: id, endedAtMs: 1000, endReason: 'session_ended' },
    ]);
    t.equal(errCode(d.renew('L', 'A', 2000)), 'lease_expired');
  },
);

t.test(
  'DELETE ends everything now without lock-delay; the next waiter is granted in the same entry',
  async (t) => {
    const d = new Driver();
    const id = session(d, 10_000);
    d.acquire('L', 'A', { ttlMs: null, session: id, lockDelayMs: 5000 });
    d.acquire('L', 'B', { waitMs: 60_000 });
    const out = d.run({ type: 'session.end', sessionId: id }, { atMs: 100 });
    t.same(okValue(out.result), { sessionId: id, ended: true });
    t.equal(d.sm.getLease('L', 100)?.holder, 'B');
    t.same(
      out.events.map((e) => `${e.kind}:${e.type}`),
      ['lease:session_ended', 'session:session_ended', 'lease:granted'],
    );
  },
);

t.test(
  'bad bindings: both or neither of ttlMs/session, unknown session, maxHoldMs with a session',
  async (t) => {
    const d = new Driver();
    const id = session(d);
    t.same(errDetails(d.acquire('L', 'A', { ttlMs: 1000, session: id })), { field: 'session' });
    t.same(errDetails(d.acquire('L', 'A', { ttlMs: null })), { field: 'ttlMs' });
    t.equal(errCode(d.acquire('L', 'A', { ttlMs: null, session: 's77' })), 'not_found');
    t.same(errDetails(d.acquire('L', 'A', { ttlMs: null, session: id, maxHoldMs: 1000 })), {
      field: 'maxHoldMs',
    });
    t.equal(errCode(d.campaign('g', 'p', { ttlMs: null })), 'invalid_argument');
    t.equal(
      errCode(d.run({ type: 'session.create', ttlMs: 99, name: null }).result),
      'invalid_argument',
    );
  },
);

t.test(
  'a grant made as of an earlier due time whose session expires later in the same entry ends when it began',
  async (t) => {
    // One entry at 3000 replays: 200 (A's lease and C's permit end; B and D, bound to a session
    // live then, are granted, their grants starting at 3000), then 1000 (the session expires).
    const d = new Driver();
    const id = session(d, 1000);
    d.acquire('L', 'A', { ttlMs: 200 });
    const q = okValue<{ waiterId: number }>(
      d.acquire('L', 'B', { ttlMs: null, session: id, waitMs: 5000 }),
    );
    const sem = { type: 'semaphore.acquire', name: 'S', limit: 1 } as const;
    t.match(d.run({ ...sem, holder: 'C', ttlMs: 200, session: null, waitMs: 0 }).result, {
      ok: true,
    });
    d.run({ ...sem, holder: 'D', ttlMs: null, session: id, waitMs: 5000 });
    d.at(3000);
    t.match(d.sm.waiterOutcome('L', q.waiterId), { kind: 'granted', holder: 'B', session: id });
    t.match(d.sm.history('lease', 'L', 1), [
      { holder: 'B', grantedAtMs: 3000, endedAtMs: 3000, endReason: 'session_ended' },
    ]);
    t.match(d.sm.history('semaphore', 'S', 1), [
      { holder: 'D', grantedAtMs: 3000, endedAtMs: 3000, endReason: 'session_ended' },
    ]);
    t.equal(d.sm.leaseState('L', 3000), null);
    t.equal(d.sm.getSemaphore('S', 3000), null);
  },
);

t.test('limits: sessionsMax and grantsPerSessionMax give resource_exhausted', async (t) => {
  const d = new Driver({ sessionsMax: 1, grantsPerSessionMax: 2 });
  const id = session(d);
  t.same(errDetails(d.run({ type: 'session.create', ttlMs: 1000, name: null }).result), {
    limit: 'sessionsMax',
  });
  d.acquire('a', 'A', { ttlMs: null, session: id });
  d.campaign('g', 'A', { ttlMs: null, session: id });
  t.same(errDetails(d.acquire('b', 'A', { ttlMs: null, session: id })), {
    limit: 'grantsPerSessionMax',
  });
});

// Proves the shared/exclusive lease rules: many shared holders at once, exclusive excludes all, FIFO fairness (a waiting exclusive blocks later shared acquirers; consecutive shared waiters are granted together), a token per grant, fencing with shared tokens.
import t from 'tap';
import { Driver, errCode, errDetails, okValue } from './fixtures/driver.js';

type G = { fencingToken: number; mode?: string; kind: string };

t.test('many shared holders at once, each with its own token; exclusive is held out', async (t) => {
  const d = new Driver();
  const a = okValue<G>(d.acquire('L', 'A', { mode: 'shared' }));
  const b = okValue<G>(d.acquire('L', 'B', { mode: 'shared' }));
  t.equal(a.mode, 'shared');
  t.ok(b.fencingToken > a.fencingToken);
  const x = d.acquire('L', 'X');
  t.equal(errCode(x), 'held');
  t.same(errDetails(x), { holder: 'A', mode: 'shared' });
  t.same(d.sm.leaseState('L', 0), {
    name: 'L',
    mode: 'shared',
    holders: [
      { holder: 'A', fencingToken: a.fencingToken, remainingMs: 1000 },
      { holder: 'B', fencingToken: b.fencingToken, remainingMs: 1000 },
    ],
  });
  t.equal(d.sm.getLease('L', 0), null);
});

t.test('an exclusive grant excludes shared acquirers', async (t) => {
  const d = new Driver();
  d.acquire('L', 'X');
  t.same(errDetails(d.acquire('L', 'A', { mode: 'shared' })), { holder: 'X' });
});

t.test(
  'FIFO: a waiting exclusive blocks later shared; consecutive shared waiters are granted together',
  async (t) => {
    const d = new Driver();
    const a = okValue<G>(d.acquire('L', 'A', { mode: 'shared', ttlMs: 10_000 }));
    t.equal(okValue<G>(d.acquire('L', 'X', { waitMs: 60_000, ttlMs: 10_000 })).kind, 'queued');
    t.equal(
      okValue<G>(d.acquire('L', 'B', { mode: 'shared', waitMs: 60_000 })).kind,
      'queued',
      'no writer starvation',
    );
    t.equal(okValue<G>(d.acquire('L', 'C', { mode: 'shared', waitMs: 60_000 })).kind, 'queued');
    t.same(errDetails(d.acquire('L', 'D', { mode: 'shared' })), {
      holder: 'A',
      mode: 'shared',
      exclusiveQueued: true,
    });
    d.release('L', 'A', a.fencingToken);
    t.equal(d.sm.getLease('L', 0)?.holder, 'X');
    const x = d.sm.getLease('L', 0)!;
    const out = d.release('L', 'X', x.fencingToken);
    t.ok(out.ok);
    const state = d.sm.leaseState('L', 0);
    t.same(state && 'holders' in state ? state.holders.map((h) => h.holder) : null, ['B', 'C']);
  },
);

t.test('a shared token fences only while its grant is live; renew/release per grant', async (t) => {
  const d = new Driver();
  const a = okValue<G>(d.acquire('L', 'A', { mode: 'shared', ttlMs: 1000 }));
  const b = okValue<G>(d.acquire('L', 'B', { mode: 'shared', ttlMs: 5000 }));
  t.same(d.sm.fenceCheck({ lease: 'L', fencingToken: a.fencingToken }), {
    valid: true,
    current: b.fencingToken,
  });
  t.ok(d.renew('L', 'A', a.fencingToken, { atMs: 900 }).ok);
  t.equal(errCode(d.renew('L', 'A', b.fencingToken)), 'not_holder');
  d.at(1900);
  t.equal(d.sm.fenceCheck({ lease: 'L', fencingToken: a.fencingToken }).valid, false);
  t.equal(errCode(d.release('L', 'A', a.fencingToken)), 'lease_expired');
  t.ok(d.release('L', 'B', b.fencingToken).ok);
  const x = okValue<G>(d.acquire('L', 'X'));
  t.equal(d.sm.fenceCheck({ lease: 'L', fencingToken: b.fencingToken }).valid, false);
  t.ok(x.fencingToken > b.fencingToken);
});

t.test('an expired shared grant starts its lock-delay: new grants wait for it', async (t) => {
  const d = new Driver();
  d.acquire('L', 'A', { mode: 'shared', ttlMs: 1000, lockDelayMs: 500 });
  d.acquire('L', 'B', { mode: 'shared', ttlMs: 5000 });
  d.at(1000);
  t.same(errDetails(d.acquire('L', 'C', { mode: 'shared' })), {
    holder: null,
    lockDelayRemainingMs: 500,
  });
  d.at(1500);
  t.ok(d.acquire('L', 'C', { mode: 'shared' }).ok);
});

t.test(
  'an acquire by the holder in another mode or binding is grant_mismatch and changes nothing',
  async (t) => {
    const d = new Driver();
    const sid = okValue<{ sessionId: string }>(
      d.run({ type: 'session.create', ttlMs: 5000, name: null }).result,
    ).sessionId;
    const r3 = okValue<G>(d.acquire('cfg', 'r3', { mode: 'shared' }));
    okValue<G>(d.acquire('cfg', 'r4', { mode: 'shared' }));
    const up = d.acquire('cfg', 'r3', { mode: 'exclusive' });
    t.equal(errCode(up), 'grant_mismatch', 'no exclusive answer while r4 holds shared');
    t.same(errDetails(up), {
      holder: 'r3',
      fencingToken: r3.fencingToken,
      mode: 'shared',
      session: null,
    });
    t.same(errDetails(d.acquire('cfg', 'r3', { mode: 'shared', ttlMs: null, session: sid })), {
      holder: 'r3',
      fencingToken: r3.fencingToken,
      mode: 'shared',
      session: null,
    });
    const x = okValue<G>(d.acquire('x', 'w', { ttlMs: null, session: sid }));
    const down = d.acquire('x', 'w', { mode: 'shared', ttlMs: null, session: sid });
    t.same(errDetails(down), {
      holder: 'w',
      fencingToken: x.fencingToken,
      mode: 'exclusive',
      session: sid,
    });
    t.equal(errCode(d.acquire('x', 'w', { ttlMs: 5000 })), 'grant_mismatch', 'ttl for a session');
    const same = okValue<G>(d.acquire('x', 'w', { ttlMs: null, session: sid }));
    t.equal(same.fencingToken, x.fencingToken, 'the same mode and session renews');
    t.same(
      d.sm.leaseState('cfg', 0),
      {
        name: 'cfg',
        mode: 'shared',
        holders: [
          { holder: 'r3', fencingToken: r3.fencingToken, remainingMs: 1000 },
          { holder: 'r4', fencingToken: r3.fencingToken + 1000, remainingMs: 1000 },
        ],
      },
      'the shared grants are unchanged',
    );
  },
);

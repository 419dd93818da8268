// Proves the Lease handle's safety timing on a fake clock: renewal at ttl/3, the docs/concepts.md safe deadline
// firing even when renewals hang or the loop stalls (BC-15), loss on 409, atRisk, capped ttl, token-checked
// idempotent release (BC-12) and withLease.
import t, { type Test } from 'tap';
import { TenureClient, TenureError, type Lease } from '../src/index.js';
import {
  errorBody,
  FakeClock,
  FakeServer,
  recordingSleep,
  type FakeReply,
  type FakeRequest,
} from './fixtures/fake-server.js';

interface Setup {
  server: FakeServer;
  clock: FakeClock;
  client: TenureClient;
  /** Handler for /renew (default: grant with the same ttl). */
  renew: (req: FakeRequest) => FakeReply | Promise<FakeReply>;
}

async function setup(t: Test, ttlCapMs?: number): Promise<Setup> {
  const server = await FakeServer.start();
  t.teardown(() => server.close());
  const clock = new FakeClock();
  const { sleep } = recordingSleep();
  const client = new TenureClient({
    endpoints: [server.url],
    clock,
    sleep,
    safetyMarginMs: 100,
    retry: { attempts: 1 },
  });
  const s: Setup = {
    server,
    clock,
    client,
    renew: (req) => {
      const body = req.body as { holder: string; fencingToken: number };
      return {
        body: {
          name: 'L',
          holder: body.holder,
          fencingToken: body.fencingToken,
          ttlMs: ttlCapMs ?? 3000,
        },
      };
    },
  };
  server.handler = (req) => {
    if (req.path === '/v1/leases/L/acquire') {
      const body = req.body as { holder: string; ttlMs: number };
      return { body: { name: 'L', holder: body.holder, fencingToken: 5, ttlMs: body.ttlMs } };
    }
    if (req.path === '/v1/leases/L/renew') return s.renew(req);
    if (req.path === '/v1/leases/L/release') return { body: { name: 'L', released: true } };
    return { status: 404, body: errorBody('not_found') };
  };
  return s;
}

function nextEvent<T>(lease: Lease, event: 'renewed' | 'atRisk' | 'lost'): Promise<T> {
  return new Promise((resolve) => lease.once(event, (arg: unknown) => resolve(arg as T)));
}

t.test('renews at ttl/3 and moves the safe deadline to sendTime + ttl(1-ρ) - margin', async (t) => {
  const { server, clock, client } = await setup(t);
  const lease = await client.acquire('L', { ttlMs: 3000 });
  t.equal(lease.fencingToken, 5);
  t.equal(lease.deadlineMs, 3000 * 0.99 - 100, 'deadline from the acquire send time (0)');
  clock.advance(999);
  t.equal(server.to('/v1/leases/L/renew').length, 0, 'no renewal before ttl/3');
  const renewed = nextEvent<{ deadlineMs: number }>(lease, 'renewed');
  clock.advance(1);
  await server.waitForRequests('/v1/leases/L/renew', 1);
  t.same(
    server.to('/v1/leases/L/renew')[0]!.body,
    { holder: lease.holder, fencingToken: 5 },
    'renew names the grant',
  );
  const event = await renewed;
  t.equal(event.deadlineMs, 1000 + 3000 * 0.99 - 100);
  t.equal(lease.deadlineMs, 1000 + 3000 * 0.99 - 100);
  t.ok(lease.isHeld());
  lease.checkInvariants();
  await lease.release();
  lease.checkInvariants();
});

t.test('isHeld flips exactly at the safe deadline; signal aborts with lease_lost', async (t) => {
  const { clock, client } = await setup(t);
  const lease = await client.acquire('L', { ttlMs: 3000, autoRenew: false });
  const lost = nextEvent<TenureError>(lease, 'lost');
  clock.advance(2869);
  t.ok(lease.isHeld());
  t.notOk(lease.signal.aborted);
  clock.advance(1);
  t.notOk(lease.isHeld());
  t.ok(lease.signal.aborted);
  const error = await lost;
  t.equal(error.code, 'lease_lost');
  t.equal(lease.endReason, 'expired');
  t.throws(() => lease.assertHeld(), { code: 'lease_lost' });
});

t.test('the deadline fires while a renewal hangs (BC-15)', async (t) => {
  const s = await setup(t);
  s.renew = () => 'hang';
  const lease = await s.client.acquire('L', { ttlMs: 3000 });
  s.clock.advance(1000);
  await s.server.waitForRequests('/v1/leases/L/renew', 1);
  t.ok(lease.isHeld(), 'still held while the renewal is in flight');
  s.clock.advance(1870);
  t.ok(lease.signal.aborted, 'signal aborted at the deadline despite the pending renewal');
  lease.checkInvariants();
  t.equal((lease.signal.reason as TenureError).code, 'lease_lost');
});

t.test(
  'after an event-loop stall isHeld() reads the clock, not a flag (BC-15 variant)',
  async (t) => {
    const { clock, client } = await setup(t);
    const lease = await client.acquire('L', { ttlMs: 3000 });
    clock.jump(4000); // timers did not run: the loop was blocked
    t.notOk(lease.signal.aborted, 'timers have not fired yet');
    t.notOk(lease.isHeld(), 'but the clock says the deadline passed');
    t.ok(lease.signal.aborted, 'and checking ends the lease');
    t.equal(lease.remainingMs, 0);
  },
);

t.test('a late renewal timer after a stall does not renew a lease past its deadline', async (t) => {
  const { server, clock, client } = await setup(t);
  const lease = await client.acquire('L', { ttlMs: 3000 });
  clock.jump(5000);
  clock.advance(0); // now the overdue timers run
  t.ok(lease.signal.aborted);
  t.equal(server.to('/v1/leases/L/renew').length, 0, 'no renewal sent after the deadline');
});

t.test('409 not_holder on renew: lost at once', async (t) => {
  const s = await setup(t);
  s.renew = () => ({ status: 409, body: errorBody('not_holder') });
  const lease = await s.client.acquire('L', { ttlMs: 3000 });
  const lost = nextEvent<TenureError>(lease, 'lost');
  s.clock.advance(1000);
  const error = await lost;
  t.equal(error.code, 'not_holder');
  t.ok(lease.signal.aborted);
  t.notOk(lease.isHeld());
  t.equal(lease.endReason, 'lost');
});

t.test('409 lease_expired on renew (maxHoldMs reached) ends the lease', async (t) => {
  const s = await setup(t);
  s.renew = () => ({ status: 409, body: errorBody('lease_expired') });
  const lease = await s.client.acquire('L', { ttlMs: 3000, maxHoldMs: 3000 });
  const lost = nextEvent<TenureError>(lease, 'lost');
  s.clock.advance(1000);
  t.equal((await lost).code, 'lease_expired');
});

t.test('a failing renewal emits atRisk, retries, and clears on success', async (t) => {
  const s = await setup(t);
  let renewCalls = 0;
  s.renew = (req) => {
    if (++renewCalls === 1) return { status: 503, body: errorBody('no_leader') };
    const body = req.body as { holder: string; fencingToken: number };
    return {
      body: { name: 'L', holder: body.holder, fencingToken: body.fencingToken, ttlMs: 3000 },
    };
  };
  const lease = await s.client.acquire('L', { ttlMs: 3000 });
  const atRisk = nextEvent<TenureError>(lease, 'atRisk');
  s.clock.advance(1000);
  t.equal((await atRisk).code, 'no_leader');
  t.ok(lease.atRisk);
  t.ok(lease.isHeld(), 'at risk is not lost');
  lease.checkInvariants();
  const renewed = nextEvent(lease, 'renewed');
  s.clock.advance(500); // the retry backoff (≤ 500 ms)
  await renewed;
  t.notOk(lease.atRisk);
  t.equal(renewCalls, 2);
  await lease.release();
});

t.test('a ttl capped by maxHoldMs is honoured for the deadline and the cadence', async (t) => {
  const s = await setup(t, 600);
  const lease = await s.client.acquire('L', { ttlMs: 3000, maxHoldMs: 1600 });
  const renewed = nextEvent(lease, 'renewed');
  s.clock.advance(1000);
  await renewed;
  t.equal(lease.ttlMs, 600);
  t.equal(lease.deadlineMs, 3000 * 0.99 - 100, 'old deadline kept (later than the capped one)');
  const second = nextEvent(lease, 'renewed');
  s.clock.advance(200); // next renewal at 1000 + 600/3
  await second;
  t.equal(s.server.to('/v1/leases/L/renew').length, 2);
  await lease.release();
});

t.test(
  'release sends the token once, is idempotent, aborts the signal without a lost event',
  async (t) => {
    const { server, client } = await setup(t);
    const lease = await client.acquire('L', { ttlMs: 3000 });
    let lostEvents = 0;
    lease.on('lost', () => lostEvents++);
    const first = lease.release();
    const second = lease.release();
    t.equal(first, second, 'same promise');
    t.equal(await first, true);
    t.equal(server.to('/v1/leases/L/release').length, 1);
    t.same(server.to('/v1/leases/L/release')[0]!.body, { holder: lease.holder, fencingToken: 5 });
    t.ok(lease.signal.aborted);
    t.equal((lease.signal.reason as TenureError).code, 'released');
    t.equal(lostEvents, 0);
    t.notOk(lease.isHeld());
  },
);

t.test('release of a grant that is gone resolves false', async (t) => {
  const s = await setup(t);
  s.server.handler = ((orig) => (req: FakeRequest, srv: FakeServer) =>
    req.path.endsWith('/release')
      ? { status: 409, body: errorBody('not_holder') }
      : orig(req, srv))(s.server.handler);
  const lease = await s.client.acquire('L', { ttlMs: 3000 });
  t.equal(await lease.release(), false);
});

t.test(
  'a lease that expired locally is given back with its token (the server may still hold it)',
  async (t) => {
    const s = await setup(t);
    s.renew = () => 'hang';
    const lease = await s.client.acquire('L', { ttlMs: 3000 });
    s.clock.advance(1000);
    await s.server.waitForRequests('/v1/leases/L/renew', 1);
    s.clock.advance(2000);
    t.ok(lease.signal.aborted);
    await s.server.waitForRequests('/v1/leases/L/release', 1);
    t.same(s.server.to('/v1/leases/L/release')[0]!.body, { holder: lease.holder, fencingToken: 5 });
  },
);

t.test(
  'default holder ids differ per acquire and share the process-incarnation prefix',
  async (t) => {
    const { client } = await setup(t);
    const a = await client.acquire('L', { ttlMs: 3000, autoRenew: false });
    const b = await client.acquire('L', { ttlMs: 3000, autoRenew: false });
    t.not(a.holder, b.holder);
    t.ok(a.holder.startsWith(`${client.clientId}#`));
    t.match(client.clientId, new RegExp(`:${process.pid}:[0-9a-f-]{36}$`));
  },
);

t.test('withLease runs fn with the lease and releases even when fn throws', async (t) => {
  const { server, client } = await setup(t);
  const value = await client.withLease('L', { ttlMs: 3000 }, async (lease) => {
    t.ok(lease.isHeld());
    return lease.fencingToken * 2;
  });
  t.equal(value, 10);
  await t.rejects(
    client.withLease('L', { ttlMs: 3000 }, async () => {
      throw new Error('boom');
    }),
    { message: 'boom' },
  );
  t.equal(server.to('/v1/leases/L/release').length, 2);
});

t.test('withLease rejects with lease_lost when the lease was lost while fn ran', async (t) => {
  const { server, clock, client } = await setup(t);
  // fn stalls past the safe deadline (3000 × 0.99 − 100 ms) without the renew timer getting a turn.
  const stalled = client.withLease('L', { ttlMs: 3000 }, async (lease) => {
    t.ok(lease.isHeld(), 'held when fn starts');
    clock.jump(5000);
    return 'fn-result';
  });
  await t.rejects(stalled, { code: 'lease_lost' });
  t.equal(server.to('/v1/leases/L/release').length, 1, 'still released in finally');
  // A lease that fn released itself is not a loss.
  const released = await client.withLease('L', { ttlMs: 3000 }, async (lease) => {
    await lease.release();
    return 'done';
  });
  t.equal(released, 'done');
});

t.test(
  'an acquire with unknown outcome releases the lease if it was in fact granted',
  async (t) => {
    const server = await FakeServer.start();
    t.teardown(() => server.close());
    let holder = '';
    server.handler = (req) => {
      if (req.path === '/v1/leases/L/acquire') {
        holder = (req.body as { holder: string }).holder;
        return { status: 504, body: errorBody('timeout') };
      }
      if (req.path === '/v1/leases/L')
        return { body: { name: 'L', holder, fencingToken: 8, ttlMs: 3000, remainingMs: 2000 } };
      return { body: { name: 'L', released: true } };
    };
    const { sleep } = recordingSleep();
    const client = new TenureClient({ endpoints: [server.url], sleep, retry: { attempts: 2 } });
    const error = (await client
      .acquire('L', { ttlMs: 3000 })
      .catch((e: unknown) => e)) as TenureError;
    t.equal(error.outcomeUnknown, true);
    await server.waitForRequests('/v1/leases/L/release', 1);
    t.same(server.to('/v1/leases/L/release')[0]!.body, { holder, fencingToken: 8 });
  },
);

t.test(
  'a grant that took more than ttl/3 to arrive is renewed before acquire returns',
  async (t) => {
    const server = await FakeServer.start();
    t.teardown(() => server.close());
    const clock = new FakeClock();
    server.handler = (req) => {
      const body = req.body as { holder: string; ttlMs?: number; fencingToken?: number };
      if (req.path.endsWith('/acquire')) {
        clock.jump(2000); // the wait in the queue took 2 s of a 3 s ttl
        return { body: { name: 'L', holder: body.holder, fencingToken: 3, ttlMs: 3000 } };
      }
      return { body: { name: 'L', holder: body.holder, fencingToken: 3, ttlMs: 3000 } };
    };
    const client = new TenureClient({ endpoints: [server.url], clock, safetyMarginMs: 100 });
    const lease = await client.acquire('L', { ttlMs: 3000, waitMs: 10_000 });
    t.equal(server.to('/v1/leases/L/renew').length, 1);
    t.equal(lease.deadlineMs, 2000 + 3000 * 0.99 - 100);
    await lease.release();
  },
);

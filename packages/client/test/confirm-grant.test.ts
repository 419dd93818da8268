// Proves that a grant answered long after its request was sent (a wait longer than the ttl) is confirmed by a renewal with the same token before acquire/campaign return, dated from that renewal (docs/concepts.md), and that a failed confirmation is reported honestly: 409 → lease_lost (outcome known), no answer → outcomeUnknown with the grant given back.
import t, { type Test } from 'tap';
import { TenureClient, TenureError } from '../src/index.js';
import { confirmGrant, needsConfirmation } from '../src/confirm-grant.js';
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
  /** Handler of /renew; default: same grant, same ttl. */
  renew: (req: FakeRequest) => FakeReply | Promise<FakeReply>;
}

/**
 * A fake node whose acquire answers after `waitedMs` of (fake) queueing: the handler moves the clock as a
 * real wait would, then grants token 7 with the asked ttl. Mirrors the repro of the bug: B acquires with
 * ttl 1 s and waitMs 5 s while A holds; A releases after 2 s.
 */
async function setup(
  t: Test,
  waitedMs: number,
  clientOptions: { retryAttempts?: number } = {},
): Promise<Setup> {
  const server = await FakeServer.start();
  t.teardown(() => server.close());
  const clock = new FakeClock();
  const { sleep } = recordingSleep();
  const client = new TenureClient({
    endpoints: [server.url],
    clock,
    sleep,
    retry: { attempts: clientOptions.retryAttempts ?? 3 },
  });
  const s: Setup = {
    server,
    clock,
    client,
    renew: (req) => {
      const body = req.body as { holder: string; fencingToken: number };
      return {
        body: { name: 'L', holder: body.holder, fencingToken: body.fencingToken, ttlMs: 1000 },
      };
    },
  };
  server.handler = (req) => {
    if (req.path === '/v1/leases/L/acquire') {
      const body = req.body as { holder: string; ttlMs: number };
      clock.jump(waitedMs);
      return { body: { name: 'L', holder: body.holder, fencingToken: 7, ttlMs: body.ttlMs } };
    }
    if (req.path === '/v1/leases/L/renew') return s.renew(req);
    if (req.path === '/v1/leases/L/release') return { body: { name: 'L', released: true } };
    return { status: 404, body: errorBody('not_found') };
  };
  return s;
}

t.test(
  'a grant arriving after a wait longer than the ttl is renewed first and returned held',
  async (t) => {
    const s = await setup(t, 2000);
    const lease = await s.client.acquire('L', { ttlMs: 1000, waitMs: 5000 });
    const renews = s.server.to('/v1/leases/L/renew');
    t.equal(renews.length, 1, 'one confirming renewal');
    t.same(
      renews[0]!.body,
      { holder: lease.holder, fencingToken: 7 },
      'it names the granted (holder, token)',
    );
    t.ok(lease.isHeld(), 'held');
    t.equal(lease.fencingToken, 7);
    // Default margin min(100, ttl/10) = 100; dated from the renewal sent at 2000, not the acquire at 0.
    t.equal(lease.deadlineMs, 2000 + 1000 * 0.99 - 100, 'deadline from the renewal send time');
    lease.checkInvariants();
    // It keeps renewing at ttl/3 after the renewal that dated it.
    const renewed = new Promise((resolve) => lease.once('renewed', resolve));
    s.clock.advance(334);
    await renewed;
    t.equal(s.server.to('/v1/leases/L/renew').length, 2, 'auto-renewal continues');
    t.equal(s.server.to('/v1/leases/L/release').length, 0, 'nothing released');
    await lease.release();
  },
);

t.test('no confirming renewal when the grant arrives within ttl/3', async (t) => {
  const s = await setup(t, 300);
  const lease = await s.client.acquire('L', { ttlMs: 1000, waitMs: 5000 });
  t.equal(s.server.to('/v1/leases/L/renew').length, 0);
  t.equal(lease.deadlineMs, 1000 * 0.99 - 100, 'dated from the acquire send time');
  await lease.release();
});

t.test('confirming renewal answered 409 not_holder: lease_lost, outcome known', async (t) => {
  const s = await setup(t, 2000);
  s.renew = () => ({ status: 409, body: errorBody('not_holder') });
  const error = await s.client.acquire('L', { ttlMs: 1000, waitMs: 5000 }).catch((e: unknown) => e);
  t.ok(error instanceof TenureError, 'rejects with a TenureError');
  const e = error as TenureError;
  t.equal(e.code, 'lease_lost');
  t.equal(e.outcomeUnknown, false, 'outcome known: not held');
  t.equal(e.details['fencingToken'], 7);
  t.equal(e.details['cause'], 'not_holder');
  t.equal(s.server.to('/v1/leases/L/renew').length, 1, 'not retried');
});

t.test('confirming renewal answered 409 lease_expired: lease_lost, outcome known', async (t) => {
  const s = await setup(t, 5000);
  s.renew = () => ({ status: 409, body: errorBody('lease_expired') });
  const e = (await s.client
    .acquire('L', { ttlMs: 1000, waitMs: 5000 })
    .catch((x: unknown) => x)) as TenureError;
  t.equal(e.code, 'lease_lost');
  t.equal(e.outcomeUnknown, false);
});

t.test(
  'confirming renewal gets 503 for a while, then succeeds: held, dated from the answering renewal',
  async (t) => {
    const s = await setup(t, 2000);
    let renews = 0;
    s.renew = (req) => {
      renews++;
      s.clock.jump(400); // each failed renewal call takes 400 ms
      if (renews <= 6) return { status: 503, body: errorBody('no_leader') };
      const body = req.body as { holder: string; fencingToken: number };
      return {
        body: { name: 'L', holder: body.holder, fencingToken: body.fencingToken, ttlMs: 1000 },
      };
    };
    const sent: number[] = [];
    s.server.handler = ((orig) => (req: FakeRequest, srv: FakeServer) => {
      if (req.path.endsWith('/renew')) sent.push(s.clock.now());
      return orig(req, srv);
    })(s.server.handler);
    const lease = await s.client.acquire('L', { ttlMs: 1000, waitMs: 5000 });
    t.equal(renews, 7);
    t.ok(lease.isHeld());
    t.equal(lease.deadlineMs, sent[6]! + 1000 * 0.99 - 100, 'dated from the renewal that answered');
    await lease.release();
  },
);

t.test(
  'confirming renewal never answered within the budget: outcomeUnknown, grant released',
  async (t) => {
    const s = await setup(t, 2000);
    s.renew = () => {
      s.clock.jump(400);
      return { status: 503, body: errorBody('no_leader') };
    };
    const e = (await s.client
      .acquire('L', { ttlMs: 1000, waitMs: 5000, timeoutMs: 3000 })
      .catch((x: unknown) => x)) as TenureError;
    t.ok(e instanceof TenureError);
    t.equal(e.code, 'no_leader');
    t.equal(e.outcomeUnknown, true, 'the grant may still be live');
    t.equal(e.details['fencingToken'], 7);
    await s.server.waitForRequests('/v1/leases/L/release', 1);
    const release = s.server.to('/v1/leases/L/release')[0]!;
    t.same(release.body, {
      holder: (s.server.to('/v1/leases/L/acquire')[0]!.body as { holder: string }).holder,
      fencingToken: 7,
    });
    const renewCount = s.server.to('/v1/leases/L/renew').length;
    t.ok(
      renewCount >= 3 && renewCount <= 3 * 3,
      `renewed until the 3 s budget (${renewCount} requests)`,
    );
  },
);

t.test(
  'a confirming renewal answered after its own safe deadline is repeated, not trusted',
  async (t) => {
    const s = await setup(t, 2000);
    let renews = 0;
    s.renew = (req) => {
      if (++renews === 1) s.clock.jump(950); // answered 950 ms after sending: past 1000·0.99 − 100
      const body = req.body as { holder: string; fencingToken: number };
      return {
        body: { name: 'L', holder: body.holder, fencingToken: body.fencingToken, ttlMs: 1000 },
      };
    };
    const lease = await s.client.acquire('L', { ttlMs: 1000, waitMs: 5000 });
    t.equal(renews, 2, 'renewed again after the late answer');
    t.equal(lease.deadlineMs, 2950 + 1000 * 0.99 - 100, 'dated from the second renewal');
    t.ok(lease.isHeld());
    await lease.release();
  },
);

t.test('a capped ttl from the confirming renewal is used for the deadline', async (t) => {
  const s = await setup(t, 2000);
  s.renew = (req) => {
    const body = req.body as { holder: string; fencingToken: number };
    return {
      body: { name: 'L', holder: body.holder, fencingToken: body.fencingToken, ttlMs: 600 },
    };
  };
  const lease = await s.client.acquire('L', { ttlMs: 1000, waitMs: 5000, maxHoldMs: 2600 });
  t.equal(lease.ttlMs, 600);
  t.equal(lease.deadlineMs, 2000 + 600 * 0.99 - 60, 'capped ttl and its margin (ttl/10)');
  await lease.release();
});

t.test(
  'aborting the acquire while confirming rejects aborted with outcome unknown and gives the grant back',
  async (t) => {
    const s = await setup(t, 2000);
    s.renew = () => 'hang';
    const controller = new AbortController();
    const pending = s.client
      .acquire('L', { ttlMs: 1000, waitMs: 5000, signal: controller.signal })
      .catch((x: unknown) => x);
    await s.server.waitForRequests('/v1/leases/L/renew', 1);
    controller.abort();
    const e = (await pending) as TenureError;
    t.equal(e.code, 'aborted');
    t.equal(e.outcomeUnknown, true);
    await s.server.waitForRequests('/v1/leases/L/release', 1);
  },
);

t.test(
  'campaign: elected long after sending is confirmed by a renewal and dated from it',
  async (t) => {
    const server = await FakeServer.start();
    t.teardown(() => server.close());
    const clock = new FakeClock();
    const { sleep } = recordingSleep();
    const client = new TenureClient({ endpoints: [server.url], clock, sleep, safetyMarginMs: 100 });
    let renewElects = true;
    server.handler = (req) => {
      const candidate = (req.body as { candidate: string }).candidate;
      const elected = {
        group: 'g',
        candidate,
        elected: true,
        fencingToken: 4,
        leader: { candidate, value: null, fencingToken: 4 },
      };
      if (req.path === '/v1/elections/g/campaign') {
        clock.jump(3500); // slow retries: the electing answer came 3.5 s after its request (ttl 3 s)
        return { body: elected };
      }
      if (req.path === '/v1/elections/g/renew')
        return renewElects
          ? { body: elected }
          : {
              body: {
                ...elected,
                elected: false,
                fencingToken: undefined,
                leader: { candidate: 'x', value: null, fencingToken: 5 },
              },
            };
      return { body: { group: 'g', resigned: true } };
    };
    const leadership = await client.campaign('g', { ttlMs: 3000, candidate: 'me' });
    t.ok(leadership.isHeld());
    t.equal(server.to('/v1/elections/g/renew').length, 1);
    t.equal(leadership.deadlineMs, 3500 + 3000 * 0.99 - 100);
    await leadership.resign();

    renewElects = false;
    const e = (await client
      .campaign('g', { ttlMs: 3000, candidate: 'me2' })
      .catch((x: unknown) => x)) as TenureError;
    t.equal(e.code, 'lease_lost', 'no longer leader when confirmed');
    t.equal(e.outcomeUnknown, false);
    await server.waitFor(() =>
      server
        .to('/v1/elections/g/resign')
        .some((r) => (r.body as { candidate: string }).candidate === 'me2'),
    );
    t.pass('the candidacy was resigned');
  },
);

t.test(
  'needsConfirmation: more than ttl/3 elapsed, or less than ttl/3 left before the deadline',
  async (t) => {
    const clock = new FakeClock();
    const timing = { clock, maxDriftRatio: 0.01, safetyMarginMs: 100 };
    t.equal(needsConfirmation(0, 333, 1000, timing), false);
    t.equal(needsConfirmation(0, 334, 1000, timing), true);
    t.equal(
      needsConfirmation(0, 0, 1000, { ...timing, safetyMarginMs: 700 }),
      true,
      'huge margin: deadline near at once',
    );
  },
);

t.test(
  'confirmGrant: a renewal answering another token is a loss; a 400 ends it as unknown',
  async (t) => {
    const clock = new FakeClock();
    const timing = { clock, maxDriftRatio: 0.01, safetyMarginMs: 100 };
    const other = await confirmGrant(
      async () => ({ fencingToken: 8, ttlMs: 1000 }),
      7,
      1000,
      timing,
      5000,
    );
    t.equal(other.kind, 'lost');
    let calls = 0;
    const bad = await confirmGrant(
      async () => {
        calls++;
        throw new TenureError('bad', { code: 'invalid_argument', status: 400 });
      },
      7,
      1000,
      timing,
      5000,
    );
    t.equal(bad.kind, 'unknown');
    t.equal(calls, 1, 'a final error is not retried');
    const budgets: number[] = [];
    const ok = await confirmGrant(
      async (timeoutMs) => {
        budgets.push(timeoutMs);
        return { fencingToken: 7, ttlMs: 1000 };
      },
      7,
      1000,
      timing,
      5000,
    );
    t.same(ok, { kind: 'held', sendTimeMs: 0, ttlMs: 1000 });
    t.same(budgets, [890], 'a renewal gets at most the time in which its answer is useful');
  },
);

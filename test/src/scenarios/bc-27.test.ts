// Proves BC-27 on a real three-node cluster: a waiter whose client process was SIGKILLed and a waiter whose HTTP request was aborted leave no queue entry behind, so when the holder releases, the lock goes to a live waiter queued behind them, or is free, within Δmax.
import t from 'tap';
import { LocalCluster } from '../support/cluster.js';
import {
  acquire,
  ChildClient,
  childPrelude,
  deltaMaxMs,
  electionTimeoutMs,
  followerOf,
  getLease,
  heartbeatMs,
  metric,
  nowMs,
  pollUntil,
} from './fixtures/helpers.js';

/** Child B: one blocking acquire (never answered: the test SIGKILLs it while it waits). */
const waiterScript = `${childPrelude}
const { URL_BASE, NAME, HOLDER } = process.env;
out({ event: 'sent' });
const r = await call('POST', URL_BASE + '/v1/leases/' + NAME + '/acquire', { holder: HOLDER, ttlMs: 3000, waitMs: 30000 });
out({ event: 'answer', ...r });
`;

/** Starts an in-process blocking acquire; `abort()` destroys its socket on the client side. */
function waiter(
  c: LocalCluster,
  via: string,
  name: string,
  holder: string,
): { answer: Promise<number | 'aborted'>; abort: () => void } {
  const ac = new AbortController();
  const answer = fetch(`${c.node(via).url}/v1/leases/${name}/acquire`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ holder, ttlMs: 3000, waitMs: 30000 }),
    signal: ac.signal,
  }).then(
    (r) => r.status,
    () => 'aborted' as const,
  );
  return { answer, abort: () => ac.abort() };
}

const waiters = (c: LocalCluster, leader: string): Promise<number> =>
  metric(c, leader, 'tenure_lease_waiters');

t.test('BC-27: dead and aborted waiters block nobody', async (t) => {
  const c = await LocalCluster.start({ heartbeatMs, electionTimeoutMs });
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  const follower = followerOf(c, leader);

  for (const [round, liveWaiter, race] of [
    [0, true, false],
    [1, false, false],
    [2, true, true],
  ] as const) {
    // Round 0: B's process via a follower, C via the leader, D live behind them.
    // Round 1: swapped routes, nobody live: L must become free.
    // Round 2: A releases right after the kill/abort, racing the withdrawal: a dead waiter may
    // then be granted, but must block D no longer than its own TTL (3 s) + Δmax.
    const bVia = round === 1 ? leader : follower;
    const cVia = round === 1 ? follower : leader;
    await t.test(
      `round ${round}: B killed (via ${bVia === leader ? 'leader' : 'follower'}), C aborted, ${liveWaiter ? 'D waiting live' : 'no live waiter'}${race ? ', release races the withdrawal' : ''}`,
      async (t) => {
        const name = `bc27-${round}`;
        const a = await acquire(c, leader, name, { holder: 'A', ttlMs: 30_000 });
        t.equal(a.status, 200, 'A holds L');
        const b = new ChildClient(waiterScript, {
          URL_BASE: c.node(bVia).url,
          NAME: name,
          HOLDER: 'B',
        });
        t.teardown(() => b.destroy());
        await b.next('sent');
        t.ok(
          await pollUntil(
            async () => ((await waiters(c, leader)) === 1 ? true : undefined),
            60_000,
          ),
          'B queued',
        );
        const cw = waiter(c, cVia, name, 'C');
        t.ok(
          await pollUntil(
            async () => ((await waiters(c, leader)) === 2 ? true : undefined),
            60_000,
          ),
          'C queued behind B',
        );
        const dw = liveWaiter ? waiter(c, follower, name, 'D') : null;
        if (dw)
          t.ok(
            await pollUntil(
              async () => ((await waiters(c, leader)) === 3 ? true : undefined),
              60_000,
            ),
            'D queued behind C',
          );

        b.signal('SIGKILL');
        cw.abort();
        if (!race) {
          await b.exited;
          t.equal(await cw.answer, 'aborted', "C's request aborted on the client side");
          const expectLeft = dw ? 1 : 0;
          t.ok(
            await pollUntil(
              async () => ((await waiters(c, leader)) === expectLeft ? true : undefined),
              deltaMaxMs,
            ),
            `dead/aborted entries withdrawn (${expectLeft} left)`,
          );
        }

        const relMs = nowMs();
        t.equal(
          (
            await c.request(leader, 'POST', `/v1/leases/${name}/release`, {
              holder: 'A',
              fencingToken: a.body.fencingToken,
            })
          ).status,
          200,
          'A releases',
        );
        if (dw) {
          const boundMs = race ? 3000 + deltaMaxMs : deltaMaxMs;
          let timer: NodeJS.Timeout | undefined;
          const status = await Promise.race([
            dw.answer,
            new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), boundMs))),
          ]);
          clearTimeout(timer);
          t.equal(
            status,
            200,
            `the live waiter D is granted within ${race ? "a dead waiter's TTL + " : ''}Δmax of the release (${(nowMs() - relMs).toFixed(0)} ms)`,
          );
          const g = await getLease(c, leader, name);
          t.equal(g.body.holder, 'D', 'get(L) shows D, not a dead waiter');
          t.ok(g.body.fencingToken > a.body.fencingToken, 'with a higher token');
          await c.request(leader, 'POST', `/v1/leases/${name}/release`, {
            holder: 'D',
            fencingToken: g.body.fencingToken,
          });
        } else {
          const e = await pollUntil(
            async () => {
              const r = await acquire(c, follower, name, { holder: 'E', ttlMs: 3000 }, 2000);
              return r.status === 200 ? r : undefined;
            },
            deltaMaxMs,
            20,
          );
          t.ok(e, 'L is free: a new client E gets it at once');
          t.ok(nowMs() - relMs <= deltaMaxMs, `within Δmax (${(nowMs() - relMs).toFixed(0)} ms)`);
          if (e) t.ok(e.body.fencingToken > a.body.fencingToken, 'with a higher token');
        }
        t.equal(await waiters(c, leader), 0, 'no queue entry left behind');
      },
    );
  }
});

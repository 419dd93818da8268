// Proves BC-01 on a real three-node cluster: a blocked waiter whose wait ran out while its client process was SIGSTOPped is never told it holds the lock and never shows up as holder, a waiter granted while stopped gets a fresh TTL that then expires normally, and an aborted wait is withdrawn — a later acquire always gets a higher token.
//
// Mapping (docs/api.md): a Tenure waiter has no lease of its own while it waits; its life in the queue is
// bounded by `waitMs`, and a grant starts a fresh `ttlMs`. So "B's lease expires while B is stopped"
// becomes "B's wait deadline passes while B's client process is SIGSTOPped" (B = a real child
// process holding the HTTP request, so the stop is a real client stop, not a simulation).
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
  sleep,
} from './fixtures/helpers.js';

/** Child B: one blocking acquire from env, printing `sent` before and `answer` after. */
const waiterScript = `${childPrelude}
const { URL_BASE, NAME, HOLDER, TTL_MS, WAIT_MS } = process.env;
out({ event: 'sent' });
const r = await call('POST', URL_BASE + '/v1/leases/' + NAME + '/acquire', { holder: HOLDER, ttlMs: Number(TTL_MS), waitMs: Number(WAIT_MS) });
out({ event: 'answer', ...r });
if (r.status === 200) {
  await line();
  const renew = await call('POST', URL_BASE + '/v1/leases/' + NAME + '/renew', { holder: HOLDER, fencingToken: r.body.fencingToken });
  out({ event: 'renew', ...renew });
}
`;

/** Polls get(L) on every node until stopped; collects every holder it ever saw. */
function watchHolders(
  c: LocalCluster,
  name: string,
): { seen: Set<string>; stop: () => Promise<void> } {
  const seen = new Set<string>();
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const n of c.nodes) {
        const g = await getLease(c, n.id, name, 2000).catch(() => null);
        if (g?.status === 200 && typeof g.body.holder === 'string') seen.add(g.body.holder);
      }
      await sleep(30);
    }
  })();
  return {
    seen,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

t.test('BC-01: a waiter is never told it holds the lock after its wait ended', async (t) => {
  const c = await LocalCluster.start({ heartbeatMs, electionTimeoutMs });
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  const follower = followerOf(c, leader);

  await t.test('wait deadline passes while B is SIGSTOPped: 409 held, never granted', async (t) => {
    const name = 'bc01-expired';
    const holders = watchHolders(c, name);
    const a = await acquire(c, leader, name, { holder: 'A', ttlMs: 30_000 });
    t.equal(a.status, 200);
    const t1 = a.body.fencingToken as number;
    const b = new ChildClient(waiterScript, {
      URL_BASE: c.node(follower).url,
      NAME: name,
      HOLDER: 'B',
      TTL_MS: '3000',
      WAIT_MS: '1500',
    });
    t.teardown(() => b.destroy());
    await b.next('sent');
    t.ok(
      await pollUntil(
        async () => ((await metric(c, leader, 'tenure_lease_waiters')) === 1 ? true : undefined),
        5000,
      ),
      'B is queued',
    );
    b.signal('SIGSTOP');
    const stoppedMs = nowMs();
    // B's wait (1.5 s) runs out while B is stopped; the queue entry must be gone with it.
    t.ok(
      await pollUntil(
        async () => ((await metric(c, leader, 'tenure_lease_waiters')) === 0 ? true : undefined),
        1500 + deltaMaxMs,
      ),
      'B left the queue when its wait ran out',
    );
    t.equal(
      (await getLease(c, leader, name)).body.holder,
      'A',
      'A still holds L (B left because its wait ran out, not by a grant)',
    );
    await sleep(Math.max(0, 2000 - (nowMs() - stoppedMs)));
    const rel = await c.request(leader, 'POST', `/v1/leases/${name}/release`, {
      holder: 'A',
      fencingToken: t1,
    });
    t.equal(rel.status, 200, 'A releases');
    const after = await getLease(c, leader, name);
    t.equal(
      after.status,
      404,
      'after A released, L is free — not handed to the withdrawn waiter B',
    );
    b.signal('SIGCONT');
    const answer = (await b.next('answer')).msg;
    t.equal(
      answer.status,
      409,
      `B's acquire ended with 409, not a grant: ${JSON.stringify(answer)}`,
    );
    t.equal(answer.body?.error?.code, 'held', 'code held');
    const cAns = await acquire(c, follower, name, { holder: 'C', ttlMs: 3000 });
    t.equal(cAns.status, 200, 'C is granted');
    t.ok(cAns.body.fencingToken > t1, `t3 ${cAns.body.fencingToken} > t1 ${t1}`);
    await holders.stop();
    t.notOk(holders.seen.has('B'), `get(L) never showed B (saw ${[...holders.seen].join(', ')})`);
  });

  await t.test(
    'B granted while SIGSTOPped: fresh TTL, expires unrenewed, C gets a higher token',
    async (t) => {
      // O1: a grant to a stopped waiter is legitimate only with a live lease at its log position —
      // Tenure starts B's TTL at the grant, so B holds it for ttlMs and loses it when it never renews.
      const name = 'bc01-granted';
      const a = await acquire(c, leader, name, { holder: 'A', ttlMs: 30_000 });
      const t1 = a.body.fencingToken as number;
      const b = new ChildClient(waiterScript, {
        URL_BASE: c.node(leader).url,
        NAME: name,
        HOLDER: 'B',
        TTL_MS: '1000',
        WAIT_MS: '20000',
      });
      t.teardown(() => b.destroy());
      await b.next('sent');
      t.ok(
        await pollUntil(
          async () => ((await metric(c, leader, 'tenure_lease_waiters')) === 1 ? true : undefined),
          5000,
        ),
        'B is queued',
      );
      b.signal('SIGSTOP');
      await c.request(leader, 'POST', `/v1/leases/${name}/release`, {
        holder: 'A',
        fencingToken: t1,
      });
      const grantedMs = nowMs();
      const g = await getLease(c, leader, name);
      t.equal(g.body.holder, 'B', 'the live queue entry is granted at release');
      const t2 = g.body.fencingToken as number;
      t.ok(t2 > t1, 't2 > t1');
      // B is stopped and never renews: its fresh 1 s TTL must run out; C then gets L.
      let cAns = await acquire(c, follower, name, { holder: 'C', ttlMs: 3000 });
      while (cAns.status !== 200 && nowMs() - grantedMs < 1000 + deltaMaxMs + 2000) {
        await sleep(20);
        cAns = await acquire(c, follower, name, { holder: 'C', ttlMs: 3000 });
      }
      t.equal(cAns.status, 200, 'C is granted once B’s unrenewed lease expired');
      t.ok(nowMs() - grantedMs <= 1000 + deltaMaxMs + 500, 'within ttl + Δmax of the grant');
      t.ok(cAns.body.fencingToken > t2, `t3 ${cAns.body.fencingToken} > t2 ${t2}`);
      b.signal('SIGCONT');
      const answer = (await b.next('answer')).msg;
      t.equal(answer.status, 200, 'B learns of its (real, now expired) grant on resume');
      t.equal(answer.body.fencingToken, t2, 'with the token it was granted');
      b.send('renew');
      const renew = (await b.next('renew')).msg;
      t.equal(
        renew.status,
        409,
        `B's renew after resuming is refused: ${JSON.stringify(renew.body)}`,
      );
      t.ok(
        ['not_holder', 'lease_expired'].includes(renew.body?.error?.code),
        'as not_holder / lease_expired',
      );
      t.equal((await getLease(c, leader, name)).body.holder, 'C', 'get(L) shows C');
    },
  );

  await t.test(
    "B's HTTP request aborted (client disconnect): waiter withdrawn, never granted",
    async (t) => {
      const name = 'bc01-aborted';
      const holders = watchHolders(c, name);
      const a = await acquire(c, leader, name, { holder: 'A', ttlMs: 30_000 });
      const t1 = a.body.fencingToken as number;
      for (const via of [follower, leader]) {
        const ac = new AbortController();
        const p = fetch(`${c.node(via).url}/v1/leases/${name}/acquire`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ holder: 'B', ttlMs: 3000, waitMs: 20000 }),
          signal: ac.signal,
        }).then(
          (r) => r.status,
          () => 'aborted',
        );
        t.ok(
          await pollUntil(
            async () =>
              (await metric(c, leader, 'tenure_lease_waiters')) === 1 ? true : undefined,
            5000,
          ),
          `B queued via ${via}`,
        );
        ac.abort();
        t.equal(await p, 'aborted');
        t.ok(
          await pollUntil(
            async () =>
              (await metric(c, leader, 'tenure_lease_waiters')) === 0 ? true : undefined,
            deltaMaxMs,
          ),
          `B's wait withdrawn after the disconnect (via ${via === leader ? 'leader' : 'follower'})`,
        );
      }
      t.equal(
        (
          await c.request(leader, 'POST', `/v1/leases/${name}/release`, {
            holder: 'A',
            fencingToken: t1,
          })
        ).status,
        200,
      );
      t.equal((await getLease(c, leader, name)).status, 404, 'L is free after the release');
      const cAns = await acquire(c, follower, name, { holder: 'C', ttlMs: 3000 });
      t.equal(cAns.status, 200);
      t.ok(cAns.body.fencingToken > t1, 't3 > t1');
      await holders.stop();
      t.notOk(holders.seen.has('B'), 'get(L) never showed B');
    },
  );
});

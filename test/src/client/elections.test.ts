// Proves, against a real three-node cluster, that client-side elections fence a deposed leader (BC-22: the cut-off leader's signal fires before its successor is elected with a higher epoch, and its old-epoch writes are rejected by fenced KV and FenceGuard) and that a contender with a shorter TTL never unseats a renewing leader (BC-28).
import t from 'tap';
import { FenceGuard, StaleTokenError, TenureError, type ElectionView } from '@tenure/client';
import { LocalCluster } from '../support/cluster.js';
import { clientFor, pollUntil, seededRandom, SwitchableFetch, testSeed } from './support.js';

const SEED = testSeed(0x5eed22);

t.test('elections through the client', async (t) => {
  t.setTimeout(180_000); // a hang fails this file instead of stalling the suite
  t.comment(`seed ${SEED}`);
  const random = seededRandom(SEED);
  const cluster = await LocalCluster.start();
  t.teardown(() => cluster.teardown());

  t.test('BC-22: a cut-off leader is deposed, signalled and fenced out', async (t) => {
    const GROUP = 'db-primary';
    const KEY = 'db-data';
    const pNet = new SwitchableFetch();
    const p = clientFor(cluster, random, { fetch: pNet.fetch });
    const q = clientFor(cluster, random);
    const store = new FenceGuard(); // the test-owned downstream store P can still reach

    const pLead = await p.campaign(GROUP, { ttlMs: 2000, value: 'P' });
    const e1 = pLead.fencingToken;
    let pAbortedAt: number | null = null;
    pLead.signal.addEventListener('abort', () => (pAbortedAt = performance.now()), { once: true });
    t.equal(store.check(GROUP, e1), true, 'P writes to the store with e1');
    await p.kv.put(KEY, 'from P', { fence: { election: GROUP, fencingToken: e1 } });

    const qCampaign = q.campaign(GROUP, { ttlMs: 2000, value: 'Q' });
    await pollUntil('Q queued behind P', async () => {
      const view = await q.getElection(GROUP);
      return view.candidates.length === 2 && view.leader?.candidate === pLead.candidate;
    });
    pNet.cut(random() < 0.5 ? 'refuse' : 'blackhole');
    const qLead = await qCampaign;
    const qElectedAt = performance.now();
    const e2 = qLead.fencingToken;

    t.ok(e2 > e1, `Q's epoch ${e2} > P's ${e1}`);
    t.not(pAbortedAt, null, "P's leadership signal fired");
    t.ok(
      pAbortedAt! < qElectedAt,
      `P's signal fired ${(qElectedAt - pAbortedAt!).toFixed(0)} ms before Q learned it was elected`,
    );
    t.equal(pLead.isHeld(), false, 'P no longer reports leadership');
    t.throws(() => pLead.assertHeld(), 'assertHeld throws for P');

    t.equal(store.check(GROUP, e2), true, 'Q writes to the store with e2');
    await q.kv.put(KEY, 'from Q', { fence: { election: GROUP, fencingToken: e2 } });
    // P keeps trying to write with e1: rejected everywhere.
    t.throws(
      () => store.check(GROUP, e1),
      StaleTokenError,
      "the store rejects P's e1 after Q's e2",
    );
    t.equal(store.tryCheck(GROUP, e1), false);
    t.equal(store.highest(GROUP), e2);
    const stale = await cluster.request(cluster.running()[0]!, 'PUT', `/v1/kv/${KEY}`, {
      value: 'late from P',
      fence: { election: GROUP, fencingToken: e1 },
    });
    t.equal(stale.status, 409, 'fenced KV write with e1 is refused');
    t.equal(stale.body?.error?.code, 'stale_token');
    const check = await q.fenceCheck({ election: GROUP, fencingToken: e1 });
    t.same(check, { valid: false, current: e2 }, 'fence check: e1 invalid, e2 current');
    t.equal((await q.kv.get(KEY))?.value, 'from Q', "only Q's write is there");

    // Heal: P observes Q as leader, and can only lead again under a newer epoch.
    pNet.heal();
    const seen: ElectionView[] = [];
    for await (const view of p.observe(GROUP, { pollTimeoutMs: 5000 })) {
      seen.push(view);
      break;
    }
    t.equal(seen[0]?.leader?.candidate, qLead.candidate, "P's observe shows Q");
    t.equal(seen[0]?.leader?.fencingToken, e2);
    t.equal(seen[0]?.leader?.value, 'Q');
    const pAgain = p.campaign(GROUP, { ttlMs: 2000, value: 'P again' });
    await pollUntil(
      'P queued behind Q',
      async () => (await q.getElection(GROUP)).candidates.length === 2,
    );
    t.equal(await qLead.resign(), true, 'Q resigns');
    const pLead2 = await pAgain;
    t.ok(
      pLead2.fencingToken > e2,
      `P leads again only under a newer epoch (${pLead2.fencingToken} > ${e2})`,
    );
    await pLead2.resign();
  });

  t.test('BC-28: a contender with a short TTL never unseats a renewing leader', async (t) => {
    const GROUP = 'x';
    const a = clientFor(cluster, random);
    const b = clientFor(cluster, random);
    const aLead = await a.campaign(GROUP, { ttlMs: 30_000, value: 'A' });
    const epoch = aLead.fencingToken;
    let lost = false;
    aLead.on('lost', () => (lost = true));

    const attempts = 8;
    for (let i = 0; i < attempts; i++) {
      // B campaigns once per round with a 2 s TTL, through a seeded node, never renewing.
      const node = cluster.nodes[Math.floor(random() * cluster.nodes.length)]!;
      const answer = await cluster.request(node.id, 'POST', `/v1/elections/${GROUP}/campaign`, {
        candidate: `B-${i}`,
        ttlMs: 2000,
        waitMs: 0,
      });
      t.equal(answer.status, 200, `round ${i}: campaign answered`);
      t.equal(answer.body.elected, false, `round ${i}: B not elected`);
      t.equal(answer.body.leader?.candidate, aLead.candidate, `round ${i}: A is the leader`);
      t.equal(answer.body.leader?.fencingToken, epoch, `round ${i}: epoch unchanged`);
      if (i % 3 === 2) await aLead.renew(); // A keeps renewing
      await new Promise((r) => setTimeout(r, 250 + Math.floor(random() * 250))); // pacing of B's rounds
    }
    // B through the client library: campaigns (renewing its 2 s candidacy) for a while, then gives up.
    const bCampaign = await b
      .campaign(GROUP, { ttlMs: 2000, value: 'B', signal: AbortSignal.timeout(2500) })
      .then(
        () => null,
        (e: unknown) => e,
      );
    t.ok(
      bCampaign instanceof TenureError && bCampaign.code === 'aborted',
      "B's client campaign never wins; it ends aborted",
    );

    const view = await a.getElection(GROUP);
    t.equal(view.leader?.candidate, aLead.candidate, 'A still leads');
    t.equal(view.leader?.fencingToken, epoch, 'epoch unchanged');
    t.equal(aLead.isHeld(), true, "A's handle still holds");
    t.equal(lost, false, 'A never signalled a loss');
    t.equal(await aLead.resign(), true);
  });
});

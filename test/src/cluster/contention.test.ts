// Proves 32 concurrent clients contending for one lease with waitMs get it one at a time, FIFO-fairly, each eventually, with strictly increasing tokens.
import t from 'tap';
import { LocalCluster } from '../support/cluster.js';
import { retrying } from '../support/http-client.js';

t.test('32 clients contend for one lease', async (t) => {
  const c = await LocalCluster.start();
  t.teardown(() => c.teardown());
  const clients = 32;
  const rounds = 2;
  let holder: string | null = null;
  let overlaps = 0;
  const grants: { holder: string; token: number }[] = [];
  const worker = async (i: number): Promise<number> => {
    let got = 0;
    for (let r = 0; r < rounds; r++) {
      const h = `client-${i}-r${r}`;
      const a = await retrying(
        c,
        'POST',
        '/v1/leases/hot/acquire',
        { holder: h, ttlMs: 10000, waitMs: 60000 },
        { startNode: i, totalMs: 90_000, attemptMs: 75_000 },
      );
      if (a.status !== 200) {
        t.fail(`client ${i} got ${a.status} ${JSON.stringify(a.body)}`);
        continue;
      }
      if (holder !== null) overlaps++;
      holder = h;
      grants.push({ holder: h, token: a.body.fencingToken as number });
      got++;
      await new Promise((r) => setTimeout(r, 2));
      holder = null;
      const rel = await retrying(
        c,
        'POST',
        '/v1/leases/hot/release',
        { holder: h, fencingToken: a.body.fencingToken },
        { startNode: i + 1 },
      );
      t.equal(rel.status, 200, `release by ${h}`);
    }
    return got;
  };
  const started = performance.now();
  const got = await Promise.all(Array.from({ length: clients }, (_, i) => worker(i)));
  t.comment(`${grants.length} hand-offs in ${(performance.now() - started).toFixed(0)} ms`);
  t.equal(overlaps, 0, 'at most one holder at a time');
  t.same(got, Array(clients).fill(rounds), 'every client got the lease every round');
  for (let i = 1; i < grants.length; i++) {
    if (!(grants[i]!.token > grants[i - 1]!.token))
      t.fail(`token ${grants[i]!.token} after ${grants[i - 1]!.token}`);
  }
  t.equal(grants.length, clients * rounds);
});

// Proves SIGKILL of the leader mid-workload loses no acknowledged grant, service resumes, tokens keep increasing, and a restart of all three nodes recovers every live lease.
import t from 'tap';
import { LocalCluster } from '../support/cluster.js';
import { retrying } from '../support/http-client.js';

t.test('SIGKILL of the leader during a workload', async (t) => {
  const c = await LocalCluster.start();
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  const workers = 8;
  let stop = false;
  let opsAfterKill = 0;
  let killed = false;
  const lastToken = new Map<number, number>();
  const held = new Map<number, { holder: string; token: number }>();
  let violations = 0;
  const worker = async (i: number): Promise<void> => {
    let n = 0;
    while (!stop) {
      const holder = `w${i}-${n++}`;
      const a = await retrying(
        c,
        'POST',
        `/v1/leases/job-${i}/acquire`,
        { holder, ttlMs: 60000 },
        { startNode: i, totalMs: 30_000, attemptMs: 5000 },
      );
      if (a.status !== 200) {
        violations++;
        t.fail(`worker ${i} acquire ${a.status} ${JSON.stringify(a.body)}`);
        return;
      }
      const tok = a.body.fencingToken as number;
      if (tok <= (lastToken.get(i) ?? 0)) violations++;
      lastToken.set(i, tok);
      held.set(i, { holder, token: tok });
      if (killed) opsAfterKill++;
      if (stop) break;
      const r = await retrying(
        c,
        'POST',
        `/v1/leases/job-${i}/release`,
        { holder, fencingToken: tok },
        { startNode: i + 1, totalMs: 30_000, attemptMs: 5000 },
      );
      if (r.status !== 200) {
        violations++;
        t.fail(`worker ${i} release ${r.status} ${JSON.stringify(r.body)}`);
        return;
      }
      held.delete(i);
    }
  };
  const running = Array.from({ length: workers }, (_, i) => worker(i));
  await new Promise((r) => setTimeout(r, 1000));
  await c.kill(leader, 'SIGKILL');
  killed = true;
  const newLeader = await c.waitForLeader();
  t.not(newLeader, leader, 'a new leader is elected');
  while (opsAfterKill < workers * 5) await new Promise((r) => setTimeout(r, 50));
  await c.restart(leader);
  await new Promise((r) => setTimeout(r, 500));
  stop = true;
  await Promise.all(running);
  t.equal(violations, 0, 'every token increased and every call eventually answered');
  t.ok(opsAfterKill >= workers * 5, 'service resumed after the kill');
  // Every acknowledged grant still held is visible with its token on every node.
  for (const [i, g] of held) {
    for (const n of c.nodes) {
      const v = await retrying(c, 'GET', `/v1/leases/job-${i}`, undefined, {
        startNode: c.nodes.indexOf(n),
      });
      t.equal(v.status, 200);
      t.equal(v.body.holder, g.holder, `job-${i} holder via ${n.id}`);
      t.equal(v.body.fencingToken, g.token, `job-${i} token via ${n.id}`);
    }
  }
});

t.test('restart of all three nodes recovers every live lease', async (t) => {
  const c = await LocalCluster.start();
  t.teardown(() => c.teardown());
  const grants: { name: string; token: number }[] = [];
  for (let i = 0; i < 20; i++) {
    const a = await c.request(c.nodes[i % 3]!.id, 'POST', `/v1/leases/keep-${i}/acquire`, {
      holder: `h${i}`,
      ttlMs: 120000,
    });
    t.equal(a.status, 200);
    grants.push({ name: `keep-${i}`, token: a.body.fencingToken });
  }
  const camp = await c.request('n1', 'POST', '/v1/elections/E/campaign', {
    candidate: 'P',
    ttlMs: 120000,
    value: 'v',
  });
  await c.request('n2', 'PUT', '/v1/kv/K', { value: 42 });
  for (const n of c.nodes) await c.kill(n.id, 'SIGKILL');
  for (const n of c.nodes) await c.restart(n.id);
  await c.waitForLeader();
  for (const g of grants) {
    const v = await retrying(c, 'GET', `/v1/leases/${g.name}`, undefined);
    t.equal(v.status, 200, `${g.name} still held`);
    t.equal(v.body.fencingToken, g.token);
    t.ok(v.body.remainingMs > 0);
  }
  t.match((await retrying(c, 'GET', '/v1/elections/E', undefined)).body, {
    leader: { candidate: 'P', fencingToken: camp.body.fencingToken },
  });
  t.equal((await retrying(c, 'GET', '/v1/kv/K', undefined)).body.value, 42);
  const next = await retrying(
    c,
    'POST',
    '/v1/leases/keep-0/acquire',
    { holder: 'other', ttlMs: 1000 },
    {},
  );
  t.equal(next.status, 409, 'recovered leases still exclude others');
  const fresh = await retrying(
    c,
    'POST',
    '/v1/leases/new-after-restart/acquire',
    { holder: 'x', ttlMs: 1000 },
    {},
  );
  t.ok(
    fresh.body.fencingToken > Math.max(...grants.map((g) => g.token)),
    'tokens keep increasing across the restart',
  );
});

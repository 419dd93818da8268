// Proves docs/concepts.md–§3 failure behaviour on a real cluster: Request-Timeout-Ms deadlines with a paused leader, check-quorum step-down, leases frozen while leaderless, recovery of a SIGKILLed node, forwarded requests ending by their deadline and stale reads showing frozen leases.
import t from 'tap';
import { LocalCluster } from '../support/cluster.js';
import { isError, raw, sleep, uniq, until } from './helpers.js';

/**
 * Least slack allowed past a deadline for scheduling (ms). Kept below the 500 ms the follower path
 * used to overshoot, so a regression to it is detected on an idle machine.
 */
const SLACK_MS = 300;
/** Slack for the leader-local deadline checks that pass today (ms). */
const LOCAL_SLACK_MS = 450;
/** On a loaded machine the slack grows to this many times the slowest measured deadline overshoot. */
const SLACK_PER_OVERSHOOT = 3;
/** Long-polls timed per follower by {@link slowestOvershootMs}, and the timeout each asks for (ms). */
const PROBES = 4;
const PROBE_TIMEOUT_MS = 200;

/**
 * How late this machine currently ends a deadline: the slowest overshoot past `timeoutMs` of
 * {@link PROBES} long-polls of `path` (a key that does not change) on each of `ids`, in ms. A loaded
 * machine fires the servers' timers late; this measures by how much, with the leader still up.
 */
async function slowestOvershootMs(
  c: LocalCluster,
  ids: readonly string[],
  path: string,
): Promise<number> {
  let slowestMs = 0;
  for (let i = 0; i < PROBES; i++) {
    const answers = await Promise.all(
      ids.map((id) => raw(c, id, `${path}?timeoutMs=${PROBE_TIMEOUT_MS}`)),
    );
    for (const a of answers) slowestMs = Math.max(slowestMs, a.elapsedMs - PROBE_TIMEOUT_MS);
  }
  return slowestMs;
}

t.test('SPEC failure behaviour', async (t) => {
  const c = await LocalCluster.start();
  t.teardown(() => c.teardown());

  t.test('paused leader: forwarded requests end by Request-Timeout-Ms with 503/504', async (t) => {
    const leader = await c.waitForLeader();
    const [f1, f2] = c.nodes.map((n) => n.id).filter((id) => id !== leader) as [string, string];
    const L = uniq('paused');
    const held = await raw(c, f1, `/v1/leases/${L}/acquire`, {
      json: { holder: 'A', ttlMs: 20000 },
    });
    t.equal(held.status, 200);
    const overshootMs = await slowestOvershootMs(c, [f1, f2], `/v1/leases/${uniq('quiet')}/watch`);
    const slackMs = Math.max(SLACK_MS, Math.ceil(SLACK_PER_OVERSHOOT * overshootMs));
    c.pause(leader);
    try {
      const deadlineMs = 800;
      const h = { 'request-timeout-ms': String(deadlineMs) };
      const [w, r, lp] = await Promise.all([
        raw(c, f1, `/v1/kv/${uniq('k')}`, { method: 'PUT', json: { value: 1 }, headers: h }),
        raw(c, f2, `/v1/leases/${L}`, { headers: h }),
        raw(c, f2, `/v1/leases/${L}/watch?timeoutMs=500`, { headers: h }),
      ]);
      for (const [what, a, limit] of [
        ['write', w, deadlineMs],
        ['linearizable read', r, deadlineMs],
        ['long-poll (timeoutMs 500 on top)', lp, deadlineMs + 500],
      ] as const) {
        t.ok(a.status === 503 || a.status === 504, `${what}: ${a.status} ${a.text}`);
        t.ok(
          isError(a.body, 'no_leader') || isError(a.body, 'timeout'),
          `${what}: no_leader / timeout`,
        );
        if (a.status === 503)
          t.ok(a.headers['retry-after'] !== undefined, `${what}: 503 sets Retry-After`);
        t.ok(
          a.elapsedMs <= limit + slackMs,
          `${what} answered by its deadline ${limit} ms (+${slackMs}, measured overshoot ${Math.round(overshootMs)} ms): took ${Math.round(a.elapsedMs)} ms`,
        );
      }
      const stale = await raw(c, f2, `/v1/leases/${L}?consistency=stale`);
      t.equal(stale.status, 200, 'a stale read answers locally while the leader is paused');
      t.equal(stale.headers['tenure-stale'], 'true');
      const newLeader = await c.waitForLeader(undefined, [f1, f2]);
      t.ok(newLeader === f1 || newLeader === f2, `the others elect ${newLeader}`);
      const g = await raw(c, newLeader, `/v1/leases/${L}`);
      t.equal(g.status, 200, 'the lease survives the leader change');
      t.equal(g.body.fencingToken, held.body.fencingToken);
    } finally {
      c.resume(leader);
    }
    await c.waitForLeader();
  });

  t.test('leader without a majority steps down; leases are frozen while leaderless', async (t) => {
    const leader = await c.waitForLeader();
    const followers = c.nodes.map((n) => n.id).filter((id) => id !== leader);
    const L = uniq('frozen');
    const ttlMs = 4000;
    const a = await raw(c, leader, `/v1/leases/${L}/acquire`, { json: { holder: 'A', ttlMs } });
    t.equal(a.status, 200);
    for (const id of followers) c.pause(id);
    const pausedAt = performance.now();
    let staleDuring: Awaited<ReturnType<typeof raw>> | null = null;
    try {
      const write = raw(c, leader, `/v1/kv/${uniq('k')}`, {
        method: 'PUT',
        json: { value: 1 },
        headers: { 'request-timeout-ms': '2500' },
      });
      const steppedDown = await until(async () => {
        const v = await c.clusterView(leader);
        return v !== null && v.members.find((m) => m.id === leader)?.role !== 'leader';
      }, 60_000);
      t.ok(
        steppedDown,
        `check-quorum: the leader stepped down after ${Math.round(performance.now() - pausedAt)} ms`,
      );
      const nr = await raw(c, leader, '/readyz');
      t.equal(nr.status, 503, '/readyz is 503 without a leader');
      t.equal(
        nr.headers['tenure-leader'],
        undefined,
        'no Tenure-Leader header when no leader is known',
      );
      const w = await write;
      t.ok(w.status === 503 || w.status === 504, `write without a majority: ${w.status}`);
      t.ok(
        w.elapsedMs <= 2500 + LOCAL_SLACK_MS,
        `write ended by its deadline (${Math.round(w.elapsedMs)} ms)`,
      );
      // Stay leaderless past the ttl.
      const leftMs = ttlMs + 500 - (performance.now() - pausedAt);
      if (leftMs > 0) await sleep(leftMs);
      staleDuring = await raw(c, leader, `/v1/leases/${L}?consistency=stale`);
    } finally {
      for (const id of followers) c.resume(id);
    }
    await c.waitForLeader();
    const g = await raw(c, followers[0]!, `/v1/leases/${L}`);
    t.equal(
      g.status,
      200,
      `lease still held after ${Math.round(performance.now() - pausedAt)} ms leaderless (ttl ${ttlMs}): frozen, not expired`,
    );
    t.equal(g.body?.fencingToken, a.body.fencingToken);
    t.equal(
      staleDuring?.status,
      200,
      `a stale read during the leaderless period shows the frozen lease (got ${staleDuring?.status} ${staleDuring?.text})`,
    );
  });

  t.test(
    'SIGKILL a node and restart it: acknowledged writes survive and it catches up',
    async (t) => {
      const leader = await c.waitForLeader();
      const victim = c.nodes.map((n) => n.id).find((id) => id !== leader)!;
      const k = uniq('durable');
      const p = await raw(c, victim, `/v1/kv/${k}`, { method: 'PUT', json: { value: 'before' } });
      t.equal(p.status, 200);
      await c.kill(victim);
      const during = await raw(c, leader, `/v1/kv/${k}`, {
        method: 'PUT',
        json: { value: 'during' },
      });
      t.equal(during.status, 200, 'two nodes keep serving');
      await c.restart(victim);
      const caught = await until(async () => {
        const r = await raw(c, victim, `/v1/kv/${k}?consistency=stale`);
        return r.status === 200 && r.body?.value === 'during';
      }, 120_000);
      t.ok(caught, 'the restarted node recovered and caught up');
      const lin = await raw(c, victim, `/v1/kv/${k}`);
      t.same(lin.body, { key: k, value: 'during', revision: during.body.revision });
      // Kill the leader: the acknowledged write is still there.
      await c.kill(leader);
      const newLeader = await c.waitForLeader();
      t.same(
        (await raw(c, newLeader, `/v1/kv/${k}`)).body?.value,
        'during',
        'survives the leader SIGKILL',
      );
      await c.restart(leader);
    },
  );
});

// Proves the QA deadline and time fixes: a follower forwards with its remaining budget minus the hop margin and stops waiting at its own deadline (+ waitMs/timeoutMs), answering 504/503 itself; stale reads on a leaderless node judge leases at the frozen log time, not an extrapolated one.
import t from 'tap';
import { FORWARD_HOP_MARGIN_MS } from '../src/gateway.js';
import { harness, send } from './fixtures/harness.js';

t.test('forwards never outlive the request deadline', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  h.raft.setRole('follower', 'n2');
  // A long deadline: the lower bounds below only say the budget was not cut to nothing, and the
  // time this process spends before forwarding (much on a loaded machine) comes off it.
  const hdr = { 'request-timeout-ms': '5000' };
  await send(h.app, 'PUT', '/v1/kv/k', { value: 1 }, hdr);
  await h.app.inject({ method: 'GET', url: '/v1/leases/L', headers: hdr });
  await h.app.inject({ method: 'GET', url: '/v1/leases/L/watch?timeoutMs=500', headers: hdr });
  await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 1000, waitMs: 300 }, hdr);
  const [put, read, watch, wait] = h.forwarder.calls;
  for (const [what, c, extraMs] of [
    ['write', put, 0],
    ['read', read, 0],
    ['watch', watch, 500],
    ['wait', wait, 300],
  ] as const) {
    t.ok(c !== undefined, `${what} forwarded`);
    t.ok(
      c!.req.requestTimeoutMs <= 5000 - FORWARD_HOP_MARGIN_MS && c!.req.requestTimeoutMs > 2500,
      `${what}: leader budget ${c!.req.requestTimeoutMs} ms keeps the hop margin`,
    );
    t.ok(
      c!.timeoutMs <= 5000 + extraMs && c!.timeoutMs > 2500 + extraMs,
      `${what}: waits for the leader at most until its deadline (${c!.timeoutMs} ms ≤ ${5000 + extraMs})`,
    );
  }
});

t.test(
  'an unanswering leader: the follower answers 504 / 503 itself at its deadline',
  async (t) => {
    const h = await harness();
    t.teardown(h.close);
    h.raft.setRole('follower', 'n2');
    // A forwarder that, like the real one, gives up after its timeout.
    h.forwarder.respond = (_req, timeoutMs) =>
      new Promise((_resolve, reject) =>
        setTimeout(() => reject(new Error(`forward timed out after ${timeoutMs} ms`)), timeoutMs),
      );
    const w = await send(h.app, 'PUT', '/v1/kv/k', { value: 1 }, { 'request-timeout-ms': '200' });
    t.equal(w.statusCode, 504);
    t.equal(w.json().error.code, 'timeout');
    const r = await h.app.inject({
      method: 'GET',
      url: '/v1/leases/L',
      headers: { 'request-timeout-ms': '200' },
    });
    t.equal(r.statusCode, 503);
    t.equal(r.json().error.code, 'no_leader');
    t.equal(r.headers['retry-after'], '1');
    // A deadline too short to leave the leader any budget after the hop margin: 504 at once.
    const tiny = await send(
      h.app,
      'PUT',
      '/v1/kv/k',
      { value: 1 },
      { 'request-timeout-ms': String(FORWARD_HOP_MARGIN_MS) },
    );
    t.equal(tiny.statusCode, 504);
    t.equal(h.forwarder.calls.length, 2, 'the tiny request was not forwarded');
  },
);

t.test('stale reads on a leaderless node see frozen leases', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  let nowMs = 1_000_000;
  h.raft.now = () => nowMs;
  const a = await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 1000 });
  t.equal(a.statusCode, 200);
  h.raft.setRole('follower', null);
  nowMs += 5000; // local time runs on, the cluster is leaderless: the lease is frozen
  const stale = await h.app.inject({ method: 'GET', url: '/v1/leases/L?consistency=stale' });
  t.equal(stale.statusCode, 200, 'the frozen lease is still there');
  t.equal(stale.json().remainingMs, 1000, 'with its remaining time frozen');
  t.equal(stale.headers['tenure-stale'], 'true');
  const list = await h.app.inject({ method: 'GET', url: '/v1/leases?consistency=stale' });
  t.equal(list.json().leases.length, 1);
  // With a leader known, the (never ahead of the leader) estimate is used.
  h.raft.setRole('follower', 'n2');
  const led = await h.app.inject({ method: 'GET', url: '/v1/leases/L?consistency=stale' });
  t.equal(led.statusCode, 404, 'a leader is known and its time says the lease is due');
});

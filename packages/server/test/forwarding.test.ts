// Proves a follower forwards writes and linearizable reads to the leader once — at the address the
// membership gives, which wins over --peers for a member that moved — answers stale reads locally,
// and says 503 no_leader rather than forwarding twice.
import t from 'tap';
import { FORWARD_HOP_MARGIN_MS } from '../src/gateway.js';
import { harness, send } from './fixtures/harness.js';

t.test('a follower forwards writes with body, key and deadline to the leader', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  h.raft.setRole('follower', 'n2');
  const res = await send(
    h.app,
    'POST',
    '/v1/leases/L/acquire',
    { holder: 'A', ttlMs: 1000 },
    { 'idempotency-key': 'abc', 'request-timeout-ms': '3000' },
  );
  t.equal(res.statusCode, 200);
  t.same(res.json(), { forwarded: true });
  t.equal(res.headers['tenure-leader'], 'n2');
  t.equal(h.forwarder.calls.length, 1);
  const call = h.forwarder.calls[0]!;
  t.equal(call.httpAddress, '127.0.0.1:7002');
  t.equal(call.req.method, 'POST');
  t.equal(call.req.url, '/v1/leases/L/acquire');
  t.same(JSON.parse(call.req.body!), { holder: 'A', ttlMs: 1000 });
  t.equal(call.req.idempotencyKey, 'abc');
  // Upper bounds are the rule; the lower ones only say the budget was not cut to nothing (the time
  // this process spent before forwarding comes off it, and a loaded machine may spend a lot).
  t.ok(
    call.req.requestTimeoutMs > 1000 && call.req.requestTimeoutMs <= 3000 - FORWARD_HOP_MARGIN_MS,
    `leader budget ${call.req.requestTimeoutMs} leaves the hop margin`,
  );
  t.ok(
    call.timeoutMs > 1000 && call.timeoutMs <= 3000,
    `the forward waits at most until our own deadline (${call.timeoutMs} ms)`,
  );
  t.equal(h.raft.proposals, 0, 'nothing proposed locally');
});

t.test('linearizable reads are forwarded; stale reads are local', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 60000 });
  h.raft.setRole('follower', 'n3');
  const lin = await h.app.inject({ method: 'GET', url: '/v1/leases/L' });
  t.same(lin.json(), { forwarded: true });
  t.equal(h.forwarder.calls[0]?.httpAddress, '127.0.0.1:7003');
  const stale = await h.app.inject({ method: 'GET', url: '/v1/leases/L?consistency=stale' });
  t.equal(stale.statusCode, 200);
  t.equal(stale.headers['tenure-stale'], 'true');
  t.equal(stale.json().holder, 'A');
  t.equal(h.forwarder.calls.length, 1);
});

t.test('a leader that moved under its old id is reached at its new address', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  // n2 was removed and added again at a new address; --peers still says 127.0.0.1:7002.
  h.raft.movedMembers.set('n2', { raftAddress: '10.9.9.2:7102', httpAddress: '10.9.9.2:7002' });
  h.raft.setRole('follower', 'n2');
  const res = await send(h.app, 'PUT', '/v1/kv/k', { value: 1 });
  t.same(res.json(), { forwarded: true });
  t.equal(h.forwarder.calls[0]?.httpAddress, '10.9.9.2:7002');
});

t.test('the leader error answer passes through unchanged', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  h.raft.setRole('follower', 'n2');
  h.forwarder.respond = () => ({
    statusCode: 409,
    headers: { 'content-type': 'application/json' },
    body: '{"error":{"code":"held","message":"m","holder":"B"}}',
  });
  const res = await send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 1000 });
  t.equal(res.statusCode, 409);
  t.same(res.json(), { error: { code: 'held', message: 'm', holder: 'B' } });
});

t.test(
  'a forwarded request reaching a non-leader gets 503 no_leader with Retry-After',
  async (t) => {
    const h = await harness();
    t.teardown(h.close);
    h.raft.setRole('follower', 'n2');
    const res = await send(
      h.app,
      'POST',
      '/v1/leases/L/acquire',
      { holder: 'A', ttlMs: 1000 },
      { 'tenure-forwarded': 'n3' },
    );
    t.equal(res.statusCode, 503);
    t.equal(res.json().error.code, 'no_leader');
    t.equal(res.headers['retry-after'], '1');
    t.equal(h.forwarder.calls.length, 0);
  },
);

t.test('without a known leader a write ends with 503 no_leader by its deadline', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  h.raft.setRole('follower', null);
  const res = await send(
    h.app,
    'POST',
    '/v1/leases/L/acquire',
    { holder: 'A', ttlMs: 1000 },
    { 'request-timeout-ms': '100' },
  );
  t.equal(res.statusCode, 503);
  t.equal(res.json().error.code, 'no_leader');
  t.notOk(res.headers['tenure-leader']);
});

t.test('a leader elected while waiting is used', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  h.raft.setRole('follower', null);
  const p = send(h.app, 'POST', '/v1/leases/L/acquire', { holder: 'A', ttlMs: 1000 });
  setTimeout(() => h.raft.setRole('leader'), 30);
  const res = await p;
  t.equal(res.statusCode, 200);
  t.equal(res.json().holder, 'A');
});

t.test(
  'a client-sent Tenure-Forwarded (auth off) is 400 unless it names another node',
  async (t) => {
    const h = await harness();
    t.teardown(h.close);
    h.raft.setRole('follower', 'n2');
    for (const value of ['true', 'n1', '']) {
      const res = await send(
        h.app,
        'POST',
        '/v1/leases/L/acquire',
        { holder: 'A', ttlMs: 1000 },
        { 'tenure-forwarded': value },
      );
      t.equal(res.statusCode, 400, `Tenure-Forwarded: ${JSON.stringify(value)}`);
      t.match(res.json().error, { code: 'invalid_argument', field: 'header Tenure-Forwarded' });
    }
    t.equal(h.forwarder.calls.length, 0);
  },
);

t.test('a Request-Timeout-Ms above the maximum counts as the maximum', async (t) => {
  const h = await harness(['--request-timeout-ms-max', '3000', '--request-timeout-ms', '1000']);
  t.teardown(h.close);
  h.raft.setRole('follower', 'n2');
  const res = await send(
    h.app,
    'POST',
    '/v1/leases/L/acquire',
    { holder: 'A', ttlMs: 1000 },
    { 'request-timeout-ms': '999999999999' },
  );
  t.equal(res.statusCode, 200, 'accepted, not refused');
  const call = h.forwarder.calls[0]!;
  t.ok(
    call.req.requestTimeoutMs <= 3000 - FORWARD_HOP_MARGIN_MS && call.timeoutMs <= 3000,
    `the deadline is the maximum (leader budget ${call.req.requestTimeoutMs} ms)`,
  );
});

// Proves the client's HTTP layer: leader discovery via Tenure-Leader + /v1/cluster, retries that keep one
// Idempotency-Key per logical call, Retry-After, deadlines/abort, and honest outcomeUnknown reporting.
import t, { type Test } from 'tap';
import { TenureClient, TenureError } from '../src/index.js';
import { Transport } from '../src/transport.js';
import { DEFAULT_RETRY_POLICY } from '../src/backoff.js';
import { errorBody, FakeServer, recordingSleep, type FakeRequest } from './fixtures/fake-server.js';

const grant = (req: FakeRequest, token = 7): { status: number; body: unknown } => {
  const body = req.body as { holder: string; ttlMs: number };
  return {
    status: 200,
    body: {
      name: req.path.split('/')[3],
      holder: body.holder,
      fencingToken: token,
      ttlMs: body.ttlMs,
    },
  };
};

async function cluster3(t: Test): Promise<FakeServer[]> {
  const servers = await Promise.all([FakeServer.start(), FakeServer.start(), FakeServer.start()]);
  t.teardown(() => Promise.all(servers.map((s) => s.close())));
  const members = () =>
    servers.map((s, i) => ({
      id: `n${i + 1}`,
      role: i === 1 ? 'leader' : 'follower',
      httpAddress: s.hostPort,
      raftAddress: '127.0.0.1:1',
    }));
  servers.forEach((s, i) => {
    s.leaderId = 'n2';
    s.handler = (req) => {
      if (req.path === '/v1/cluster')
        return {
          body: {
            id: `n${i + 1}`,
            leader: 'n2',
            term: 3,
            commitIndex: 10,
            appliedIndex: 10,
            members: members(),
          },
        };
      return { status: 200, body: { key: 'k', value: i, revision: 1 } };
    };
  });
  return servers;
}

t.test('follows Tenure-Leader to the leader after a 503 and then prefers it', async (t) => {
  const [n1, n2, n3] = await cluster3(t);
  n1!.handler = (req) =>
    req.path === '/v1/cluster'
      ? { body: { id: 'n1', leader: 'n2', term: 3, commitIndex: 1, appliedIndex: 1, members: [] } }
      : { status: 503, body: errorBody('no_leader'), headers: { 'retry-after': '0' } };
  const { sleep, delaysMs } = recordingSleep();
  const client = new TenureClient({ endpoints: [n1!.url, n2!.url, n3!.url], sleep });
  const first = await client.kv.get('k');
  t.equal(first?.value, 1, 'answered by n2');
  t.equal(client.leaderId, 'n2');
  t.same(
    delaysMs.filter((d) => d > 0),
    [],
    'followed the hint without backing off',
  );
  const before = n1!.to('/v1/kv/k').length;
  const second = await client.kv.get('k');
  t.equal(second?.value, 1);
  t.equal(n1!.to('/v1/kv/k').length, before, 'second call went straight to the leader');
});

t.test('learns node ids through members httpAddress and sends to the leader', async (t) => {
  const [n1, n2, n3] = await cluster3(t);
  const client = new TenureClient({ endpoints: [n1!.url, n3!.url, n2!.url] });
  await client.cluster();
  t.equal(client.leaderId, 'n2');
  const view = await client.kv.get('k');
  t.equal(view?.value, 1, 'read went to n2');
});

t.test('retries 504 with the same Idempotency-Key; a new call gets a new key', async (t) => {
  const server = await FakeServer.start();
  t.teardown(() => server.close());
  let calls = 0;
  server.handler = (req) =>
    ++calls <= 2 ? { status: 504, body: errorBody('timeout') } : grant(req);
  const { sleep } = recordingSleep();
  const client = new TenureClient({ endpoints: [server.url], sleep });
  const lease = await client.acquire('L', { ttlMs: 3000, autoRenew: false });
  t.equal(lease.fencingToken, 7);
  const keys = server.to('/v1/leases/L/acquire').map((r) => r.headers['idempotency-key']);
  t.equal(keys.length, 3);
  t.ok(typeof keys[0] === 'string' && keys[0].length > 0);
  t.same(new Set(keys).size, 1, 'one key across retries');
  t.same(
    new Set(server.to('/v1/leases/L/acquire').map((r) => JSON.stringify(r.body))).size,
    1,
    'identical body across retries',
  );
  await client.acquire('M', { ttlMs: 3000, autoRenew: false });
  t.not(
    server.to('/v1/leases/M/acquire')[0]!.headers['idempotency-key'],
    keys[0],
    'next logical call, next key',
  );
  t.equal(server.to('/v1/leases/L/release').length, 0);
});

t.test(
  'a final answer after a 504 settles the outcome (the keyed retry is replayed by the server)',
  async (t) => {
    const server = await FakeServer.start();
    t.teardown(() => server.close());
    let calls = 0;
    server.handler = () =>
      ++calls === 1
        ? { status: 504, body: errorBody('timeout') }
        : { status: 409, body: errorBody('held', 'held', { holder: 'x' }) };
    const { sleep } = recordingSleep();
    const client = new TenureClient({ endpoints: [server.url], sleep });
    const error = (await client
      .acquire('L', { ttlMs: 3000 })
      .catch((e: unknown) => e)) as TenureError;
    t.equal(error.code, 'held');
    t.equal(error.outcomeUnknown, false);
  },
);

t.test('every mutation carries an Idempotency-Key, reads do not', async (t) => {
  const server = await FakeServer.start((req) => {
    if (req.path.endsWith('/acquire')) return grant(req);
    if (req.method === 'PUT') return { body: { key: 'k', revision: 3 } };
    if (req.method === 'DELETE') return { body: { key: 'k', deleted: true } };
    return { body: { key: 'k', value: 1, revision: 3 } };
  });
  t.teardown(() => server.close());
  const client = new TenureClient({ endpoints: [server.url] });
  await client.kv.put('k', { a: 1 }, { fence: { lease: 'L', fencingToken: 4 }, ifRevision: 0 });
  await client.kv.delete('k');
  await client.kv.get('k');
  const [put, del, get] = server.requests;
  t.match(put!.headers['idempotency-key'], /^[0-9a-f-]{36}$/);
  t.same(put!.body, { value: { a: 1 }, fence: { lease: 'L', fencingToken: 4 }, ifRevision: 0 });
  t.equal(put!.headers['content-type'], 'application/json');
  t.match(del!.headers['idempotency-key'], /^[0-9a-f-]{36}$/);
  t.same(del!.body, {}, 'DELETE sends a JSON body');
  t.equal(get!.headers['idempotency-key'], undefined);
  t.ok(Number(get!.headers['request-timeout-ms']) > 0, 'Request-Timeout-Ms on every request');
});

t.test('honours Retry-After on 503 no_leader', async (t) => {
  const server = await FakeServer.start();
  t.teardown(() => server.close());
  let calls = 0;
  server.handler = (req) =>
    ++calls === 1
      ? { status: 503, body: errorBody('no_leader'), headers: { 'retry-after': '2' } }
      : grant(req);
  const { sleep, delaysMs } = recordingSleep();
  const client = new TenureClient({ endpoints: [server.url], sleep, requestTimeoutMs: 10_000 });
  await client.acquire('L', { ttlMs: 3000, autoRenew: false });
  t.equal(delaysMs.length, 1);
  t.ok(delaysMs[0]! >= 2000, `waited ${delaysMs[0]} ms ≥ Retry-After`);
});

t.test(
  'a Retry-After beyond the deadline ends the call at once, outcome unknown for a mutation',
  async (t) => {
    const server = await FakeServer.start(() => ({
      status: 503,
      body: errorBody('no_leader'),
      headers: { 'retry-after': '30' },
    }));
    t.teardown(() => server.close());
    const { sleep, delaysMs } = recordingSleep();
    const client = new TenureClient({ endpoints: [server.url], sleep });
    const error = await client
      .acquire('L', { ttlMs: 3000, timeoutMs: 1000 })
      .catch((e: unknown) => e);
    t.ok(error instanceof TenureError);
    t.equal((error as TenureError).code, 'no_leader');
    t.equal((error as TenureError).status, 503);
    t.equal((error as TenureError).outcomeUnknown, true);
    t.same(delaysMs, []);
  },
);

t.test('409 is final: no retry, details kept, outcome known', async (t) => {
  const server = await FakeServer.start(() => ({
    status: 409,
    body: errorBody('held', 'held by b', { holder: 'b' }),
  }));
  t.teardown(() => server.close());
  const client = new TenureClient({ endpoints: [server.url] });
  const error = (await client
    .acquire('L', { ttlMs: 3000 })
    .catch((e: unknown) => e)) as TenureError;
  t.equal(error.code, 'held');
  t.equal(error.status, 409);
  t.same(error.details, { holder: 'b' });
  t.equal(error.outcomeUnknown, false);
  t.equal(server.requests.length, 1);
});

t.test('retries exhausted on 504: mutation outcome unknown, read outcome known', async (t) => {
  const server = await FakeServer.start((req) =>
    req.method === 'GET' && req.path.startsWith('/v1/leases/L') && req.path !== '/v1/leases/L'
      ? { status: 404, body: errorBody('not_found') }
      : { status: 504, body: errorBody('timeout') },
  );
  t.teardown(() => server.close());
  const { sleep } = recordingSleep();
  const client = new TenureClient({ endpoints: [server.url], sleep, retry: { attempts: 3 } });
  const write = (await client.kv.put('k', 1).catch((e: unknown) => e)) as TenureError;
  t.equal(write.code, 'timeout');
  t.equal(write.outcomeUnknown, true);
  t.equal(server.to('/v1/kv/k', 'PUT').length, 3);
  const read = (await client.kv.get('k').catch((e: unknown) => e)) as TenureError;
  t.equal(read.code, 'timeout');
  t.equal(read.outcomeUnknown, false);
});

t.test('a mutation without a key is not resent after it may have arrived', async (t) => {
  const server = await FakeServer.start(() => ({ status: 504, body: errorBody('timeout') }));
  t.teardown(() => server.close());
  const { sleep } = recordingSleep();
  const transport = new Transport(
    {
      endpoints: [server.url],
      requestTimeoutMs: 2000,
      retry: { attempts: 5, baseDelayMs: 1, maxDelayMs: 1 },
      discoverMembers: false,
    },
    { fetch, now: () => performance.now(), sleep, random: () => 0.5, logger: {} },
  );
  const error = (await transport
    .request({ method: 'POST', path: '/v1/x', body: {}, mutating: true, idempotencyKey: null })
    .catch((e: unknown) => e)) as TenureError;
  t.equal(error.outcomeUnknown, true);
  t.equal(server.requests.length, 1, 'sent once');
  t.equal(server.requests[0]!.headers['idempotency-key'], undefined);
});

t.test(
  'connection dropped after send: retried with the same key elsewhere; refused endpoint skipped',
  async (t) => {
    const dropper = await FakeServer.start(() => 'destroy');
    const good = await FakeServer.start((req) => grant(req, 9));
    const refused = await FakeServer.start();
    const refusedUrl = refused.url;
    await refused.close();
    t.teardown(() => Promise.all([dropper.close(), good.close()]));
    const { sleep } = recordingSleep();
    const client = new TenureClient({ endpoints: [refusedUrl, dropper.url, good.url], sleep });
    const lease = await client.acquire('L', { ttlMs: 3000, autoRenew: false });
    t.equal(lease.fencingToken, 9);
    const key = good.requests[0]!.headers['idempotency-key'];
    t.equal(dropper.requests[0]!.headers['idempotency-key'], key, 'same key on both nodes');
  },
);

t.test(
  'all endpoints down: unavailable; a refused connection never counts as maybe-committed',
  async (t) => {
    const s = await FakeServer.start();
    const url = s.url;
    await s.close();
    const { sleep } = recordingSleep();
    const client = new TenureClient({ endpoints: [url], sleep, retry: { attempts: 3 } });
    const error = (await client.kv.put('k', 1).catch((e: unknown) => e)) as TenureError;
    t.equal(error.code, 'unavailable');
    t.equal(error.outcomeUnknown, false);
  },
);

t.test(
  'per-call deadline: Request-Timeout-Ms sent and the call ends by its deadline',
  async (t) => {
    const server = await FakeServer.start(() => 'hang');
    t.teardown(() => server.close());
    const { sleep } = recordingSleep();
    const client = new TenureClient({ endpoints: [server.url], sleep, retry: { attempts: 1 } });
    const error = (await client.kv
      .put('k', 1, { timeoutMs: 200 })
      .catch((e: unknown) => e)) as TenureError;
    t.equal(error.code, 'timeout');
    t.equal(error.outcomeUnknown, true);
    const header = Number(server.requests[0]!.headers['request-timeout-ms']);
    t.ok(header >= 100 && header <= 200, `Request-Timeout-Ms ${header}`);
  },
);

t.test('AbortSignal aborts a call in flight', async (t) => {
  const server = await FakeServer.start(() => 'hang');
  t.teardown(() => server.close());
  const { sleep } = recordingSleep();
  const client = new TenureClient({ endpoints: [server.url], sleep, retry: { attempts: 2 } });
  const controller = new AbortController();
  const pending = client
    .acquire('L', { ttlMs: 3000, waitMs: 30_000, signal: controller.signal })
    .catch((e: unknown) => e);
  await server.waitForRequests('/v1/leases/L/acquire', 1);
  controller.abort();
  const error = (await pending) as TenureError;
  t.equal(error.code, 'aborted');
  t.equal(error.outcomeUnknown, true, 'the acquire may have been granted');
  const read = await client.kv.get('k', { signal: AbortSignal.abort() }).catch((e: unknown) => e);
  t.equal((read as TenureError).code, 'aborted');
  t.equal((read as TenureError).outcomeUnknown, false);
});

t.test('waitMs travels in the body and extends the client deadline', async (t) => {
  const server = await FakeServer.start((req) => grant(req));
  t.teardown(() => server.close());
  const client = new TenureClient({ endpoints: [server.url] });
  await client.acquire('L', {
    ttlMs: 3000,
    waitMs: 5000,
    lockDelayMs: 100,
    maxHoldMs: 60_000,
    holder: 'me',
    autoRenew: false,
  });
  t.same(server.requests[0]!.body, {
    holder: 'me',
    ttlMs: 3000,
    waitMs: 5000,
    lockDelayMs: 100,
    maxHoldMs: 60_000,
  });
});

/**
 * A Transport on a fake monotonic clock whose sleep advances that clock (no real waiting): retries are
 * paced exactly as in production but take no wall time.
 */
function fakeTimeTransport(
  endpoints: string[],
  retry = DEFAULT_RETRY_POLICY,
): { transport: Transport; clock: { nowMs: number }; delaysMs: number[] } {
  const clock = { nowMs: 0 };
  const delaysMs: number[] = [];
  const transport = new Transport(
    { endpoints, requestTimeoutMs: 5000, retry, discoverMembers: false },
    {
      fetch,
      now: () => clock.nowMs,
      sleep: async (ms, signal) => {
        delaysMs.push(ms);
        if (signal?.aborted) throw signal.reason;
        clock.nowMs += ms;
      },
      random: () => 0.5,
      logger: {},
    },
  );
  return { transport, clock, delaysMs };
}

t.test(
  'retries continue until the call deadline across a long 503 period (not after 8 attempts)',
  async (t) => {
    const server = await FakeServer.start();
    t.teardown(() => server.close());
    const { transport, clock, delaysMs } = fakeTimeTransport([server.url]);
    // A failover: no leader for the first 6 s of the call; its deadline is 5 s + a 10 s wait (+ slack).
    server.handler = (req) =>
      clock.nowMs < 6000 ? { status: 503, body: errorBody('no_leader') } : grant(req);
    const answer = await transport.request<{ fencingToken: number }>({
      method: 'POST',
      path: '/v1/leases/L/acquire',
      body: { holder: 'h', ttlMs: 3000, waitMs: 10_000 },
      mutating: true,
      extraWaitMs: 10_000,
    });
    t.equal(answer.body.fencingToken, 7);
    const attempts = server.to('/v1/leases/L/acquire');
    t.ok(attempts.length > 8, `retried past the old 8-attempt limit (${attempts.length} attempts)`);
    t.equal(
      new Set(attempts.map((r) => r.headers['idempotency-key'])).size,
      1,
      'one Idempotency-Key throughout',
    );
    t.ok(
      delaysMs.every((d) => d > 0 && d <= DEFAULT_RETRY_POLICY.maxDelayMs),
      `every retry backed off within maxDelayMs (${delaysMs.join(', ')})`,
    );
    t.ok(
      delaysMs.slice(5).every((d) => d >= DEFAULT_RETRY_POLICY.maxDelayMs / 2),
      'backoff reached its cap: at most ~2 requests/s per call (BC-16)',
    );
  },
);

t.test(
  'a 503 that outlasts the deadline ends the call by its deadline, outcome unknown',
  async (t) => {
    const server = await FakeServer.start(() => ({ status: 503, body: errorBody('no_leader') }));
    t.teardown(() => server.close());
    const { transport, clock } = fakeTimeTransport([server.url]);
    const error = (await transport
      .request({
        method: 'PUT',
        path: '/v1/kv/k',
        body: { value: 1 },
        mutating: true,
        timeoutMs: 8000,
      })
      .catch((e: unknown) => e)) as TenureError;
    t.equal(error.code, 'no_leader');
    t.equal(error.outcomeUnknown, true);
    const deadlineMs = 8000 + 500; // budget + answer slack (min(500, budget/10))
    t.ok(clock.nowMs <= deadlineMs, `ended by the deadline (${clock.nowMs} ms)`);
    t.ok(
      clock.nowMs >= deadlineMs - DEFAULT_RETRY_POLICY.maxDelayMs,
      `kept retrying until near it (${clock.nowMs} ms)`,
    );
    t.ok(server.requests.length > 8, `${server.requests.length} attempts`);
  },
);

t.test('Retry-After is honoured on every retry of a long 503 period', async (t) => {
  const server = await FakeServer.start(() => ({
    status: 503,
    body: errorBody('no_leader'),
    headers: { 'retry-after': '2' },
  }));
  t.teardown(() => server.close());
  const { transport, delaysMs } = fakeTimeTransport([server.url]);
  await transport
    .request({ method: 'GET', path: '/v1/kv/k', mutating: false, timeoutMs: 9000 })
    .catch(() => undefined);
  t.ok(delaysMs.length >= 3, `${delaysMs.length} retries`);
  t.ok(
    delaysMs.every((d) => d >= 2000),
    `each delay ≥ Retry-After (${delaysMs.join(', ')})`,
  );
});

t.test('the attempts cap still bounds a call when set low', async (t) => {
  const server = await FakeServer.start(() => ({ status: 503, body: errorBody('no_leader') }));
  t.teardown(() => server.close());
  const { transport } = fakeTimeTransport([server.url], { ...DEFAULT_RETRY_POLICY, attempts: 4 });
  await transport
    .request({ method: 'GET', path: '/v1/kv/k', mutating: false, timeoutMs: 60_000 })
    .catch(() => undefined);
  t.equal(server.requests.length, 4);
});

t.test(
  'two nodes naming each other as leader: a hint is followed at once only once in a row',
  async (t) => {
    const servers = await Promise.all([FakeServer.start(), FakeServer.start()]);
    t.teardown(() => Promise.all(servers.map((s) => s.close())));
    const sentAtMs: number[] = [];
    let nowMs = (): number => 0;
    servers.forEach((s, i) => {
      const other = `n${2 - i}`;
      s.leaderId = other; // stale hints during a failover: each points at the other
      s.handler = (req) => {
        if (req.path !== '/v1/cluster') {
          sentAtMs.push(nowMs());
          return { status: 503, body: errorBody('no_leader') };
        }
        const members = servers.map((x, j) => ({
          id: `n${j + 1}`,
          role: 'follower',
          httpAddress: x.hostPort,
          raftAddress: '127.0.0.1:1',
        }));
        return {
          body: {
            id: `n${i + 1}`,
            leader: other,
            term: 1,
            commitIndex: 0,
            appliedIndex: 0,
            members,
          },
        };
      };
    });
    const { transport, clock } = fakeTimeTransport(servers.map((s) => s.url));
    nowMs = () => clock.nowMs;
    await transport
      .request({ method: 'GET', path: '/v1/kv/k', mutating: false, timeoutMs: 5000 })
      .catch(() => undefined);
    t.ok(sentAtMs.length >= 4, `${sentAtMs.length} requests`);
    const gapsMs = sentAtMs.slice(1).map((at, i) => at - sentAtMs[i]!);
    t.ok(gapsMs.includes(0), 'a hint to the other node is followed at once');
    t.notOk(
      gapsMs.some((gap, i) => gap === 0 && gapsMs[i + 1] === 0),
      `never two immediate hops in a row (gaps ${gapsMs.join(', ')})`,
    );
    t.ok(
      sentAtMs.length <= 2 * (gapsMs.filter((g) => g > 0).length + 1),
      'at most 2× the backed-off requests (BC-16)',
    );
  },
);

// Proves campaign/Leadership and the long-poll iterators: campaign resolves when elected (by its own
// long-poll or by a candidacy renewal at ttl/3), leadership is lost on a renew that no longer elects us,
// proclaim/resign carry the right fields, an aborted campaign resigns, and observe/watchLease iterate changes.
import t, { type Test } from 'tap';
import { TenureClient, TenureError, type ElectionView } from '../src/index.js';
import {
  errorBody,
  FakeClock,
  FakeServer,
  recordingSleep,
  type FakeReply,
  type FakeRequest,
} from './fixtures/fake-server.js';

const G = '/v1/elections/g';

function answer(req: FakeRequest, elected: boolean, token = 11): FakeReply {
  const candidate = (req.body as { candidate: string }).candidate;
  return {
    body: {
      group: 'g',
      candidate,
      elected,
      ...(elected ? { fencingToken: token } : {}),
      leader: elected
        ? { candidate, value: null, fencingToken: token }
        : { candidate: 'other', value: 1, fencingToken: 10 },
    },
  };
}

async function setup(
  t: Test,
  handler: (req: FakeRequest) => FakeReply | Promise<FakeReply>,
): Promise<{ server: FakeServer; clock: FakeClock; client: TenureClient }> {
  const server = await FakeServer.start((req) => handler(req));
  t.teardown(() => server.close());
  const clock = new FakeClock();
  const { sleep } = recordingSleep();
  const client = new TenureClient({ endpoints: [server.url], clock, sleep, safetyMarginMs: 100 });
  return { server, clock, client };
}

t.test('campaign resolves when its long-poll reports elected', async (t) => {
  let campaigns = 0;
  const { server, client } = await setup(t, (req) =>
    req.path === `${G}/campaign`
      ? answer(req, ++campaigns >= 2)
      : { body: { group: 'g', resigned: true } },
  );
  const leadership = await client.campaign('g', {
    ttlMs: 3000,
    value: { addr: 'a' },
    candidate: 'me',
  });
  t.equal(leadership.fencingToken, 11);
  t.equal(leadership.candidate, 'me');
  t.ok(leadership.isHeld());
  const first = server.to(`${G}/campaign`)[0]!;
  t.same(first.body, { candidate: 'me', ttlMs: 3000, value: { addr: 'a' }, waitMs: 1000 });
  t.ok(first.headers['idempotency-key']);
  t.equal(leadership.deadlineMs, 3000 * 0.99 - 100);
  await leadership.resign();
});

t.test(
  'while waiting, the candidacy is renewed at ttl/3 and a renew that elects us resolves the campaign',
  async (t) => {
    const { server, clock, client } = await setup(t, (req) => {
      if (req.path === `${G}/campaign`) return 'hang';
      if (req.path === `${G}/renew`) return answer(req, true, 12);
      return { body: { group: 'g', resigned: true } };
    });
    const pending = client.campaign('g', { ttlMs: 3000, candidate: 'me' });
    await server.waitForRequests(`${G}/campaign`, 1);
    clock.advance(1000);
    const leadership = await pending;
    t.equal(leadership.fencingToken, 12);
    t.same(server.to(`${G}/renew`)[0]!.body, { candidate: 'me' });
    t.equal(
      leadership.deadlineMs,
      1000 + 3000 * 0.99 - 100,
      'deadline from the electing renewal send time',
    );
    await leadership.resign();
  },
);

t.test('leadership renews at ttl/3 and is lost when a renew no longer elects us', async (t) => {
  let renews = 0;
  const { clock, client } = await setup(t, (req) => {
    if (req.path === `${G}/campaign`) return answer(req, true);
    if (req.path === `${G}/renew`) return answer(req, ++renews < 2);
    return { status: 404, body: errorBody('not_found') };
  });
  const leadership = await client.campaign('g', { ttlMs: 3000 });
  const renewed = new Promise((resolve) => leadership.once('renewed', resolve));
  clock.advance(1000);
  await renewed;
  const lost = new Promise<TenureError>((resolve) => leadership.once('lost', resolve));
  clock.advance(1000);
  const error = await lost;
  t.equal(error.code, 'not_holder');
  t.ok(leadership.signal.aborted);
});

t.test('leadership is lost at its safe deadline when renewals fail (BC-22)', async (t) => {
  const { clock, client } = await setup(t, (req) =>
    req.path === `${G}/campaign`
      ? answer(req, true)
      : req.path === `${G}/renew`
        ? 'hang'
        : { body: {} },
  );
  const leadership = await client.campaign('g', { ttlMs: 3000 });
  clock.advance(2869);
  t.ok(leadership.isHeld());
  clock.advance(1);
  t.ok(leadership.signal.aborted);
  t.equal((leadership.signal.reason as TenureError).code, 'lease_lost');
});

t.test(
  'proclaim sends candidate, token and value; 409 ends the leadership; resign is idempotent',
  async (t) => {
    let proclaims = 0;
    const { server, client } = await setup(t, (req) => {
      if (req.path === `${G}/campaign`) return answer(req, true);
      if (req.path === `${G}/proclaim`)
        return ++proclaims === 1
          ? { body: { group: 'g', leader: {} } }
          : { status: 409, body: errorBody('not_holder') };
      return { body: { group: 'g', resigned: true } };
    });
    const leadership = await client.campaign('g', { ttlMs: 3000, candidate: 'me' });
    await leadership.proclaim({ v: 2 });
    t.same(server.to(`${G}/proclaim`)[0]!.body, {
      candidate: 'me',
      fencingToken: 11,
      value: { v: 2 },
    });
    t.same(leadership.value, { v: 2 });
    await t.rejects(leadership.proclaim(3), { code: 'not_holder' });
    t.ok(leadership.signal.aborted);
    t.equal(await leadership.resign(), false, 'already lost');
    t.equal(leadership.resign(), leadership.resign());
  },
);

t.test('resign after holding sends the candidate once and aborts the signal', async (t) => {
  const { server, client } = await setup(t, (req) =>
    req.path === `${G}/campaign` ? answer(req, true) : { body: { group: 'g', resigned: true } },
  );
  const leadership = await client.campaign('g', { ttlMs: 3000, candidate: 'me' });
  t.equal(await leadership.resign(), true);
  await leadership.resign();
  t.equal(server.to(`${G}/resign`).length, 1);
  t.same(server.to(`${G}/resign`)[0]!.body, { candidate: 'me' });
  t.equal((leadership.signal.reason as TenureError).code, 'released');
});

t.test('an aborted campaign rejects with aborted and resigns its candidacy', async (t) => {
  const { server, client } = await setup(t, (req) =>
    req.path === `${G}/campaign` ? 'hang' : { body: { group: 'g', resigned: true } },
  );
  const controller = new AbortController();
  const pending = client.campaign('g', { ttlMs: 3000, candidate: 'me', signal: controller.signal });
  await server.waitForRequests(`${G}/campaign`, 1);
  controller.abort();
  await t.rejects(pending, { code: 'aborted' });
  await server.waitForRequests(`${G}/resign`, 1);
  t.same(server.to(`${G}/resign`)[0]!.body, { candidate: 'me' });
});

t.test('a 400 on campaign rejects at once', async (t) => {
  const { client } = await setup(t, () => ({
    status: 400,
    body: errorBody('invalid_argument', 'ttlMs out of range'),
  }));
  await t.rejects(client.campaign('g', { ttlMs: 3000 }), { code: 'invalid_argument' });
});

t.test('observe yields the current view, then each change, and stops on break', async (t) => {
  const views: ElectionView[] = [1, 2, 3].map((revision) => ({
    group: 'g',
    leader: { candidate: `c${revision}`, value: revision, fencingToken: revision },
    candidates: [],
    revision,
  }));
  let polls = 0;
  const { server, client } = await setup(t, (req) => {
    if (req.path === G) return { body: views[0] };
    if (req.path === `${G}/observe`) {
      polls++;
      if (polls === 1) return { body: { ...views[0], changed: false } };
      if (polls === 2) return { body: { ...views[1], changed: true } };
      if (polls === 3) return { body: { ...views[2], changed: true } };
      return 'hang';
    }
    return { status: 404, body: errorBody('not_found') };
  });
  const seen: number[] = [];
  for await (const view of client.observe('g', { pollTimeoutMs: 5000 })) {
    seen.push(view.revision);
    if (seen.length === 3) break;
  }
  t.same(seen, [1, 2, 3]);
  const afters = server
    .to(`${G}/observe`)
    .map((r) => [r.query.get('afterRevision'), r.query.get('timeoutMs')]);
  t.same(afters, [
    ['1', '5000'],
    ['1', '5000'],
    ['2', '5000'],
  ]);
});

t.test('observe ends when its signal aborts during a long-poll', async (t) => {
  const { server, client } = await setup(t, (req) =>
    req.path === G ? { body: { group: 'g', leader: null, candidates: [], revision: 0 } } : 'hang',
  );
  const controller = new AbortController();
  const iterator = client.observe('g', { signal: controller.signal });
  t.equal((await iterator.next()).value?.revision, 0);
  const next = iterator.next();
  await server.waitForRequests(`${G}/observe`, 1);
  controller.abort();
  t.equal((await next).done, true);
});

t.test('watchLease starts free (404), then reports a grant', async (t) => {
  let polls = 0;
  const { server, client } = await setup(t, (req) => {
    if (req.path === '/v1/leases/L') return { status: 404, body: errorBody('not_found') };
    if (req.path === '/v1/leases/L/watch')
      return ++polls === 1
        ? { body: { name: 'L', holder: 'a', fencingToken: 4, changed: true } }
        : 'hang';
    return { status: 404, body: errorBody('not_found') };
  });
  const iterator = client.watchLease('L');
  t.same((await iterator.next()).value, {
    name: 'L',
    holder: null,
    fencingToken: null,
    changed: false,
  });
  t.match((await iterator.next()).value, { holder: 'a', fencingToken: 4 });
  t.equal(server.to('/v1/leases/L/watch')[0]!.query.get('afterToken'), '0');
  await iterator.return!();
});

t.test('long-polls survive a transient 503 with backoff', async (t) => {
  let polls = 0;
  const { client } = await setup(t, (req) => {
    if (req.path === G) return { body: { group: 'g', leader: null, candidates: [], revision: 0 } };
    polls++;
    if (polls === 1) return { status: 503, body: errorBody('no_leader') };
    return {
      body: {
        group: 'g',
        leader: null,
        candidates: [{ candidate: 'x', value: null }],
        revision: 1,
        changed: true,
      },
    };
  });
  const iterator = client.observe('g', { initial: false });
  t.equal((await iterator.next()).value?.revision, 1);
  await iterator.return!();
});

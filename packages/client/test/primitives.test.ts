// Proves the Session, Permit, shared and session-bound Lease handles on a fake clock and server: keepalive at ttl/3, a session's end (close, or 404 on keepalive) ending every grant bound to it, semaphore renew/release routes, the ttlMs-or-session rule naming the field, history and revoke requests.
import t, { type Test } from 'tap';
import { TenureClient, TenureError } from '../src/index.js';
import {
  errorBody,
  FakeClock,
  FakeServer,
  recordingSleep,
  type FakeReply,
  type FakeRequest,
} from './fixtures/fake-server.js';

interface Setup {
  server: FakeServer;
  clock: FakeClock;
  client: TenureClient;
  /** Answer of /keepalive (default: the session's ttl). */
  keepalive: (req: FakeRequest) => FakeReply;
}

const SESSION_TTL_MS = 3000;

async function setup(t: Test): Promise<Setup> {
  const server = await FakeServer.start();
  t.teardown(() => server.close());
  const clock = new FakeClock();
  const client = new TenureClient({
    endpoints: [server.url],
    clock,
    sleep: recordingSleep().sleep,
    safetyMarginMs: 100,
    retry: { attempts: 1 },
  });
  const s: Setup = {
    server,
    clock,
    client,
    keepalive: () => ({ body: { sessionId: 's7', ttlMs: SESSION_TTL_MS } }),
  };
  let token = 10;
  server.handler = (req) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const grant = { holder: body['holder'], fencingToken: ++token };
    const life =
      body['session'] === undefined
        ? { ttlMs: body['ttlMs'] }
        : { ttlMs: null, session: body['session'] };
    if (req.path === '/v1/sessions' && req.method === 'POST')
      return { body: { sessionId: 's7', ttlMs: body['ttlMs'] } };
    if (req.path === '/v1/sessions/s7/keepalive') return s.keepalive(req);
    if (req.path === '/v1/sessions/s7') return { body: { sessionId: 's7', ended: true } };
    if (req.path === '/v1/leases/L/acquire')
      return {
        body: { name: 'L', ...grant, ...life, ...(body['mode'] ? { mode: body['mode'] } : {}) },
      };
    if (req.path === '/v1/semaphores/S/acquire')
      return { body: { name: 'S', ...grant, limit: body['limit'], ...life } };
    if (req.path === '/v1/semaphores/S/renew')
      return { body: { name: 'S', ...body, limit: 3, ttlMs: 3000 } };
    if (req.path.endsWith('/release')) return { body: { name: 'x', released: true } };
    if (req.path === '/v1/semaphores/S/history')
      return {
        body: {
          name: 'S',
          grants: [
            { holder: 'h', fencingToken: 3, grantedAtMs: 1, endedAtMs: 2, endReason: 'revoked' },
          ],
        },
      };
    if (req.path === '/v1/leases/L/revoke') return { body: { name: 'L', revoked: [4, 5] } };
    if (req.path === '/v1/elections/G/campaign' || req.path === '/v1/elections/G/renew') {
      const leader = { candidate: body['candidate'], value: null, fencingToken: 77 };
      return {
        body: { group: 'G', candidate: body['candidate'], elected: true, fencingToken: 77, leader },
      };
    }
    if (req.path === '/v1/elections/G/resign') return { body: { group: 'G', resigned: true } };
    return { status: 404, body: errorBody('not_found') };
  };
  return s;
}

t.test('a session keeps itself alive at ttl/3 and its close ends its grants', async (t) => {
  const { server, clock, client } = await setup(t);
  const session = await client.session({ ttlMs: SESSION_TTL_MS, name: 'w1' });
  t.same(server.to('/v1/sessions')[0]!.body, { ttlMs: SESSION_TTL_MS, name: 'w1' });
  t.equal(session.sessionId, 's7');
  t.equal(session.ttlMs, SESSION_TTL_MS);
  const lease = await client.acquire('L', { session, mode: 'shared' });
  t.same(server.to('/v1/leases/L/acquire')[0]!.body, {
    holder: lease.holder,
    session: 's7',
    mode: 'shared',
  });
  t.equal(lease.session, 's7');
  t.equal(lease.mode, 'shared');
  t.equal(lease.ttlMs, SESSION_TTL_MS, "a session-bound lease lives by its session's ttl");
  const permit = await client.semaphore('S', { limit: 3, session, autoRenew: false });
  t.equal(permit.limit, 3);
  t.equal(permit.session, 's7');
  clock.advance(SESSION_TTL_MS / 3);
  await server.waitForRequests('/v1/sessions/s7/keepalive', 1);
  t.equal(server.to('/v1/sessions/s7/keepalive')[0]!.body, undefined, 'keepalive has no body');
  session.checkInvariants();
  const lost = new Promise<TenureError>((resolve) => lease.once('lost', resolve));
  t.equal(await session.close(), true);
  t.ok(session.signal.aborted);
  t.equal(server.to('/v1/sessions/s7').filter((r) => r.method === 'DELETE').length, 1);
  t.equal((await lost).code, 'lease_lost', 'the bound lease is lost with its session');
  t.ok(permit.signal.aborted, 'the bound permit too');
  t.notOk(permit.isHeld());
  t.equal(await session.close(), true, 'close is idempotent');
  lease.checkInvariants();
  permit.checkInvariants();
});

t.test('a keepalive answered 404 loses the session and its grants', async (t) => {
  const s = await setup(t);
  const session = await s.client.session({ ttlMs: SESSION_TTL_MS });
  const permit = await s.client.semaphore('S', { limit: 3, session });
  s.keepalive = () => ({ status: 404, body: errorBody('not_found') });
  const lost = new Promise<TenureError>((resolve) => session.once('lost', resolve));
  await t.rejects(session.keepalive(), { code: 'not_found' });
  t.equal((await lost).code, 'not_found');
  t.equal(session.endReason, 'lost');
  t.ok(permit.signal.aborted);
  t.equal((permit.signal.reason as TenureError).code, 'lease_lost');
});

t.test('a session that passes its safe deadline ends its grants without a keepalive', async (t) => {
  const s = await setup(t);
  s.keepalive = () => 'hang';
  const session = await s.client.session({ ttlMs: SESSION_TTL_MS });
  const lease = await s.client.acquire('L', { session, autoRenew: false });
  s.clock.advance(SESSION_TTL_MS);
  t.ok(session.signal.aborted, 'the session expired locally');
  t.ok(lease.signal.aborted, 'and its lease with it');
});

t.test('semaphore permits renew and release through the semaphore routes', async (t) => {
  const { server, clock, client } = await setup(t);
  const permit = await client.semaphore('S', { limit: 3, ttlMs: 3000, waitMs: 10 });
  t.same(server.to('/v1/semaphores/S/acquire')[0]!.body, {
    holder: permit.holder,
    limit: 3,
    ttlMs: 3000,
    waitMs: 10,
  });
  t.match(permit.toJSON(), { name: 'S', limit: 3, ttlMs: 3000 });
  clock.advance(1000);
  await server.waitForRequests('/v1/semaphores/S/renew', 1);
  t.same(server.to('/v1/semaphores/S/renew')[0]!.body, {
    holder: permit.holder,
    fencingToken: permit.fencingToken,
  });
  t.equal(await permit.release(), true);
  t.same(server.to('/v1/semaphores/S/release')[0]!.body, {
    holder: permit.holder,
    fencingToken: permit.fencingToken,
  });
});

t.test('ttlMs or session, exactly one; history and revoke requests', async (t) => {
  const { server, client } = await setup(t);
  const session = await client.session({ ttlMs: SESSION_TTL_MS, autoRenew: false });
  const both = { ttlMs: 1000, session } as unknown as { ttlMs: number };
  await t.rejects(client.acquire('L', both), {
    code: 'invalid_argument',
    details: { field: 'session' },
  });
  await t.rejects(client.semaphore('S', { limit: 1 } as unknown as { limit: 1; ttlMs: 1 }), {
    code: 'invalid_argument',
    details: { field: 'ttlMs' },
  });
  t.equal(server.to('/v1/leases/L/acquire').length, 0, 'nothing was sent');
  const grants = await client.history('S', { kind: 'semaphore', limit: 5 });
  t.match(grants, [{ holder: 'h', endReason: 'revoked' }]);
  t.equal(server.to('/v1/semaphores/S/history')[0]!.query.get('limit'), '5');
  t.same(await client.revoke('L', { reason: 'stuck' }), [4, 5]);
  t.same(server.to('/v1/leases/L/revoke')[0]!.body, { reason: 'stuck' });
  await session.close();
});

t.test('a session-bound campaign sends the session and its leadership ends with it', async (t) => {
  const { server, client } = await setup(t);
  const session = await client.session({ ttlMs: SESSION_TTL_MS, autoRenew: false });
  const leadership = await client.campaign('G', { session, candidate: 'c1' });
  const sent = server.to('/v1/elections/G/campaign')[0]!.body as Record<string, unknown>;
  t.equal(sent['session'], 's7');
  t.notOk('ttlMs' in sent, 'no ttl of its own');
  t.equal(leadership.fencingToken, 77);
  t.equal(leadership.ttlMs, SESSION_TTL_MS, "it lives by its session's ttl");
  await session.close();
  t.ok(leadership.signal.aborted, 'the leadership ended with its session');
  t.equal((leadership.signal.reason as TenureError).code, 'lease_lost');
  await t.rejects(client.campaign('G', { candidate: 'c2' } as unknown as { ttlMs: number }), {
    code: 'invalid_argument',
  });
});

t.test('a handle carries what the server answered, not what was asked', async (t) => {
  const s = await setup(t);
  const base = s.server.handler;
  s.server.handler = (req) => {
    if (req.path === '/v1/leases/M/acquire')
      return {
        body: {
          name: 'M',
          holder: 'h',
          fencingToken: 5,
          ttlMs: null,
          session: 's7',
          mode: 'shared',
        },
      };
    if (req.path === '/v1/sessions/s7' && req.method === 'GET')
      return { body: { sessionId: 's7', name: null, ttlMs: 4000, remainingMs: 4000, grants: [] } };
    return base(req, s.server);
  };
  const lease = await s.client.acquire('M', { holder: 'h', ttlMs: 5000, autoRenew: false });
  t.equal(lease.mode, 'shared');
  t.equal(lease.session, 's7');
  t.equal(lease.ttlMs, 4000, "a session-bound answer lives by its session's ttl");
  t.same(lease.toJSON(), {
    name: 'M',
    holder: 'h',
    fencingToken: 5,
    ttlMs: 4000,
    mode: 'shared',
    session: 's7',
  });
});

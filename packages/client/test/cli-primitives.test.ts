// Proves the `tenure session`, `tenure sem` and `tenure lease history|revoke|acquire --shared --session` commands in-process against a fake server: the requests they send, readable and --json output, and exit codes (0 ok, 1 conflict, 2 usage, 4 not found).
import t, { type Test } from 'tap';
import { main, type CliIo } from '../src/cli/cli.js';
import { TenureClient } from '../src/index.js';
import { errorBody, FakeServer, recordingSleep, type FakeHandler } from './fixtures/fake-server.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(server: FakeServer, argv: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const { sleep } = recordingSleep();
  const io: CliIo = {
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
    env: { TENURE_ENDPOINTS: server.url },
    interrupt: new AbortController().signal,
    createClient: (options) => new TenureClient({ ...options, sleep, retry: { attempts: 2 } }),
  };
  const code = await main(argv, io);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

async function serve(t: Test, handler: FakeHandler): Promise<FakeServer> {
  const server = await FakeServer.start(handler);
  t.teardown(() => server.close());
  return server;
}

const SESSION_VIEW = {
  sessionId: 's9',
  name: 'w',
  ttlMs: 30_000,
  remainingMs: 29_000,
  leases: [{ name: 'L', fencingToken: 3 }],
  semaphores: [],
  candidacies: [{ group: 'g' }],
};

const handler: FakeHandler = (req) => {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const key = `${req.method} ${req.path}`;
  switch (key) {
    case 'POST /v1/sessions':
      return { body: { sessionId: 's9', ttlMs: body['ttlMs'] } };
    case 'POST /v1/sessions/s9/keepalive':
      return { body: { sessionId: 's9', ttlMs: 30_000 } };
    case 'GET /v1/sessions/s9':
      return { body: SESSION_VIEW };
    case 'DELETE /v1/sessions/s9':
      return { body: { sessionId: 's9', ended: true } };
    case 'POST /v1/semaphores/S/acquire':
      return {
        body: {
          name: 'S',
          holder: body['holder'],
          fencingToken: 7,
          limit: body['limit'],
          ttlMs: 10_000,
        },
      };
    case 'POST /v1/semaphores/S/renew':
      return {
        body: { name: 'S', holder: 'h1', fencingToken: 7, limit: 3, ttlMs: null, session: 's9' },
      };
    case 'POST /v1/semaphores/S/release':
      return { body: { name: 'S', released: true } };
    case 'GET /v1/semaphores/S':
      return {
        body: {
          name: 'S',
          limit: 3,
          waiters: 1,
          holders: [{ holder: 'h1', fencingToken: 7, remainingMs: 900 }],
        },
      };
    case 'POST /v1/semaphores/full/acquire':
      return { status: 409, body: errorBody('held', 'no free permit', { holder: null, limit: 1 }) };
    case 'POST /v1/leases/L/acquire':
      return {
        body: {
          name: 'L',
          holder: body['holder'],
          fencingToken: 4,
          ttlMs: null,
          session: body['session'],
          mode: body['mode'],
        },
      };
    case 'GET /v1/leases/L/history':
      return {
        body: {
          name: 'L',
          grants: [
            { holder: 'h2', fencingToken: 5, grantedAtMs: 100, endedAtMs: null, endReason: null },
            { holder: 'h1', fencingToken: 4, grantedAtMs: 10, endedAtMs: 90, endReason: 'revoked' },
          ],
        },
      };
    case 'POST /v1/leases/L/revoke':
      return { body: { name: 'L', revoked: [5] } };
    default:
      return { status: 404, body: errorBody('not_found') };
  }
};

t.test('session create, keepalive, get, end', async (t) => {
  const server = await serve(t, handler);
  const created = await run(server, ['--json', 'session', 'create', '--ttl', '30s', '--name', 'w']);
  t.equal(created.code, 0);
  t.match(JSON.parse(created.stdout), { event: 'created', sessionId: 's9', ttlMs: 30_000 });
  t.same(server.to('/v1/sessions')[0]!.body, { ttlMs: 30_000, name: 'w' });
  const text = await run(server, ['session', 'create']);
  t.match(text.stdout, /created session s9 ttl=30s/);
  t.match(text.stderr, /tenure session keepalive s9/);
  const ka = await run(server, ['session', 'keepalive', 's9']);
  t.equal(ka.code, 0);
  t.match(ka.stdout, /kept s9 alive/);
  const got = await run(server, ['session', 'get', 's9']);
  t.match(got.stdout, /s9 name=w ttl=30s/);
  t.match(got.stdout, /lease L fencingToken=3/);
  t.match(got.stdout, /candidacy g/);
  const end = await run(server, ['--json', 'session', 'end', 's9']);
  t.same(JSON.parse(end.stdout), { sessionId: 's9', ended: true });
  const missing = await run(server, ['session', 'get', 'nope']);
  t.equal(missing.code, 4, 'an ended session exits 4');
});

t.test('sem acquire, get, release; held exits 1; --limit is required', async (t) => {
  const server = await serve(t, handler);
  const acq = await run(server, [
    'sem',
    'acquire',
    'S',
    '--limit',
    '3',
    '--ttl',
    '10s',
    '--holder',
    'h1',
  ]);
  t.equal(acq.code, 0);
  t.same(server.to('/v1/semaphores/S/acquire')[0]!.body, { holder: 'h1', limit: 3, ttlMs: 10_000 });
  t.match(acq.stdout, /acquired S fencingToken=7 holder=h1 limit=3 ttl=10s/);
  const get = await run(server, ['sem', 'get', 'S']);
  t.match(get.stdout, /S limit=3 holders=1 waiters=1/);
  t.match(get.stdout, /holder=h1 fencingToken=7/);
  const renew = await run(server, ['sem', 'renew', 'S', '--holder', 'h1', '--token', '7']);
  t.equal(renew.code, 0);
  t.same(server.to('/v1/semaphores/S/renew')[0]!.body, { holder: 'h1', fencingToken: 7 });
  t.match(renew.stdout, /renewed S fencingToken=7 ttl=session s9/);
  const rel = await run(server, ['sem', 'release', 'S', '--holder', 'h1', '--token', '7']);
  t.equal(rel.code, 0);
  t.same(server.to('/v1/semaphores/S/release')[0]!.body, { holder: 'h1', fencingToken: 7 });
  const full = await run(server, ['--json', 'sem', 'acquire', 'full', '--limit', '1']);
  t.equal(full.code, 1);
  t.match(JSON.parse(full.stderr), { error: { code: 'held', limit: 1 } });
  const usage = await run(server, ['sem', 'acquire', 'S']);
  t.equal(usage.code, 2, 'without --limit');
  const none = await run(server, ['sem', 'get', 'other']);
  t.equal(none.code, 4);
});

t.test('lease acquire --shared --session, history, revoke', async (t) => {
  const server = await serve(t, handler);
  const acq = await run(server, [
    'lease',
    'acquire',
    'L',
    '--shared',
    '--session',
    's9',
    '--holder',
    'me',
  ]);
  t.equal(acq.code, 0, acq.stderr);
  t.same(server.to('/v1/leases/L/acquire')[0]!.body, {
    holder: 'me',
    session: 's9',
    mode: 'shared',
  });
  t.match(acq.stdout, /holder=me session=s9 mode=shared/, 'the session, not a ttl');
  t.notMatch(acq.stdout, /ttl=/);
  t.match(acq.stderr, /lives as long as session s9/);
  const asJson = await run(server, ['--json', 'lease', 'acquire', 'L', '--session', 's9']);
  t.match(JSON.parse(asJson.stdout), { event: 'acquired', ttlMs: null, session: 's9' });
  const hist = await run(server, ['lease', 'history', 'L', '--limit', '2']);
  t.equal(server.to('/v1/leases/L/history')[0]!.query.get('limit'), '2');
  t.match(hist.stdout, /L holder=h2 fencingToken=5 granted=100 live/);
  t.match(hist.stdout, /L holder=h1 fencingToken=4 granted=10 ended=90 reason=revoked/);
  const json = await run(server, ['--json', 'lease', 'history', 'L']);
  t.equal(JSON.parse(json.stdout).grants.length, 2);
  const rev = await run(server, ['lease', 'revoke', 'L', '--token', '5', '--reason', 'stuck']);
  t.equal(rev.code, 0);
  t.same(server.to('/v1/leases/L/revoke')[0]!.body, { fencingToken: 5, reason: 'stuck' });
  t.match(rev.stdout, /revoked L fencingToken=5/);
});

// Proves the client and CLI side of auth: the token (option, --auth-token, TENURE_TOKEN) goes out as a Bearer header on every request, `tenure auth token|role` commands send the documented routes and bodies, a created secret is printed once, and a malformed --rule is a usage error naming the flag.
import t from 'tap';
import { main, type CliIo } from '../src/cli/cli.js';
import { parseRule } from '../src/cli/commands/auth.js';
import { TenureClient } from '../src/index.js';
import { FakeServer, recordingSleep, type FakeHandler } from './fixtures/fake-server.js';

function io(env: Record<string, string>): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const { sleep } = recordingSleep();
  return {
    out,
    err,
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
    env,
    interrupt: new AbortController().signal,
    createClient: (options) => new TenureClient({ ...options, sleep, retry: { attempts: 1 } }),
  };
}

const handler: FakeHandler = (req) => {
  if (req.method === 'POST' && req.path === '/v1/auth/tokens') {
    const b = req.body as { name: string; roles: string[]; quota?: object };
    return { body: { name: b.name, roles: b.roles, quota: b.quota ?? null, secret: 'tnr.w.abc' } };
  }
  if (req.path === '/v1/auth/tokens')
    return { body: { tokens: [{ name: 'root', roles: ['admin'], quota: null }] } };
  if (req.method === 'PUT')
    return { body: { name: 'jobs', rules: (req.body as { rules: unknown[] }).rules } };
  if (req.method === 'DELETE') return { body: { name: 'w', revoked: true } };
  return { body: { roles: [] } };
};

t.test('the token is sent as a Bearer header; auth commands call the auth routes', async (t) => {
  const server = await FakeServer.start(handler);
  t.teardown(() => server.close());
  const env = { TENURE_ENDPOINTS: server.url, TENURE_TOKEN: 'env-secret' };
  const a = io(env);
  t.equal(
    await main(['auth', 'token', 'create', 'w', '--role', 'jobs', '--leases-max', '5'], a),
    0,
  );
  t.equal(a.out.join('').trim(), 'tnr.w.abc', 'the secret, printed once');
  const create = server.requests.at(-1)!;
  t.equal(create.headers.authorization, 'Bearer env-secret');
  t.same(create.body, { name: 'w', roles: ['jobs'], quota: { leasesMax: 5 } });

  const b = io(env);
  t.equal(await main(['--auth-token', 'flag-secret', 'auth', 'token', 'list'], b), 0);
  t.equal(server.requests.at(-1)!.headers.authorization, 'Bearer flag-secret', 'the flag wins');
  t.match(b.out.join(''), /root\troles=admin/);

  const c = io(env);
  t.equal(
    await main(['auth', 'role', 'put', 'jobs', '--rule', 'lease,semaphore:jobs.:write'], c),
    0,
  );
  t.same(server.requests.at(-1)!.body, {
    rules: [{ kinds: ['lease', 'semaphore'], prefix: 'jobs.', actions: ['write'] }],
  });
  t.equal(await main(['auth', 'token', 'revoke', 'w'], io(env)), 0);
  t.equal(server.requests.at(-1)!.path, '/v1/auth/tokens/w');
  t.equal(server.requests.at(-1)!.method, 'DELETE');

  const bad = io(env);
  t.equal(await main(['auth', 'role', 'put', 'x', '--rule', 'lease:jobs:delete'], bad), 2);
  t.match(bad.err.join(''), /--rule/);
});

t.test('parseRule keeps a prefix that contains colons', async (t) => {
  t.same(parseRule('kv:a:b:read'), { kinds: ['kv'], prefix: 'a:b', actions: ['read'] });
  t.same(parseRule('lease::read,write'), {
    kinds: ['lease'],
    prefix: '',
    actions: ['read', 'write'],
  });
  t.throws(() => parseRule('lease'), /KINDS:PREFIX:ACTIONS/);
});

t.test('a client without a token sends no Authorization header', async (t) => {
  const server = await FakeServer.start(handler);
  t.teardown(() => server.close());
  const client = new TenureClient({ endpoints: [server.url] });
  await client.auth.listRoles();
  t.equal(server.requests.at(-1)!.headers.authorization, undefined);
});

t.test(
  'a 401 says how to give the CLI a token; role put --help shows a valid prefix',
  async (t) => {
    const server = await FakeServer.start(() => ({
      status: 401,
      body: { error: { code: 'unauthorized', message: 'missing Authorization: Bearer <token>' } },
    }));
    t.teardown(() => server.close());
    const a = io({ TENURE_ENDPOINTS: server.url });
    t.not(await main(['auth', 'token', 'list'], a), 0);
    t.match(a.err.join(''), /unauthorized: .*--auth-token <token> or TENURE_TOKEN/);
    const help = io({});
    await main(['auth', 'role', 'put', '--help'], help);
    const text = help.out.join('') + help.err.join('');
    t.match(text, /lease,semaphore:jobs\.:write/);
    t.notMatch(text, /jobs\//, 'no name with a slash');
  },
);

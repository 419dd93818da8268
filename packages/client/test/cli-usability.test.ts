// Proves the CLI and client usability contract added for operators: --help and --version answer
// without a cluster, an error answer (409 with a body, 409 without one) is reported as one clean
// line and exit code — never a JSON parse error —, `cluster status` follows the leader so it shows
// replication progress, `elect` says whom it waits behind, and TenureClient names `endpoints` when
// they are missing or malformed.
import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { main, type CliIo } from '../src/cli/cli.js';
import { TenureClient, TenureError } from '../src/index.js';
import { errorBody, FakeServer, recordingSleep, type FakeHandler } from './fixtures/fake-server.js';

const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(endpoints: string, argv: string[], interrupt?: AbortSignal): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const { sleep } = recordingSleep();
  const io: CliIo = {
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
    env: { TENURE_ENDPOINTS: endpoints },
    interrupt: interrupt ?? new AbortController().signal,
    createClient: (options) => new TenureClient({ ...options, sleep, retry: { attempts: 3 } }),
  };
  const code = await main(argv, io);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

async function serve(t: Test, handler: FakeHandler): Promise<FakeServer> {
  const server = await FakeServer.start(handler);
  t.teardown(() => server.close());
  return server;
}

t.test(
  '--version prints the package version and --help the command groups, both exit 0',
  async (t) => {
    const version = await run('http://127.0.0.1:1', ['--version']);
    t.equal(version.code, 0);
    t.equal(version.stdout.trim(), VERSION);
    const help = await run('http://127.0.0.1:1', ['--help']);
    t.equal(help.code, 0);
    for (const group of [
      'lease',
      'elect',
      'observe',
      'kv',
      'fence',
      'cluster',
      '--version',
      '--endpoints',
    ])
      t.match(help.stdout, group, `help lists ${group}`);
    const leaseHelp = await run('http://127.0.0.1:1', ['lease', '--help']);
    t.equal(leaseHelp.code, 0);
    t.match(leaseHelp.stdout, /acquire/);
  },
);

t.test('a 409 answer to release is one clean error line, with or without a body', async (t) => {
  let withBody = true;
  const server = await serve(t, () =>
    withBody
      ? { status: 409, body: errorBody('lease_expired', 'lease L expired', { fencingToken: 7 }) }
      : { status: 409 },
  );
  const argv = ['lease', 'release', 'L', '--holder', 'h', '--token', '7'];
  const expired = await run(server.url, argv);
  t.equal(expired.code, 1, 'lease_expired is a conflict');
  t.equal(expired.stdout, '');
  t.equal(expired.stderr, 'error: lease_expired: lease L expired\n');

  const json = await run(server.url, ['--json', ...argv]);
  t.equal(json.code, 1);
  t.match(JSON.parse(json.stderr) as unknown, {
    error: { code: 'lease_expired', status: 409, fencingToken: 7 },
  });

  withBody = false;
  const bare = await run(server.url, argv);
  t.equal(bare.code, 5, 'a 409 outside the catalog is "other"');
  t.match(bare.stderr, /^error: internal: unexpected HTTP 409 answer\n$/);
  t.notMatch(bare.stderr, /JSON/);
});

t.test('cluster status asks the leader when a follower answered first', async (t) => {
  const member = (id: string, server: FakeServer, role: string) => ({
    id,
    role,
    httpAddress: server.hostPort,
    raftAddress: '127.0.0.1:1',
  });
  let follower: FakeServer | null = null;
  let leader: FakeServer | null = null;
  const view = (id: string) => ({
    id,
    leader: 'n2',
    term: 3,
    commitIndex: 10,
    appliedIndex: 10,
    members: [
      { ...member('n1', follower!, 'follower'), ...(id === 'n2' ? { matchIndex: 9 } : {}) },
      member('n2', leader!, 'leader'),
    ],
  });
  follower = await serve(t, () => ({ body: view('n1') }));
  leader = await serve(t, () => ({ body: view('n2') }));
  const result = await run(`${follower.url},${leader.url}`, ['cluster', 'status']);
  t.equal(result.code, 0, result.stderr);
  t.match(result.stdout, /^answered by n2: leader=n2 term=3/);
  t.match(result.stdout, /n1 +follower .*matchIndex=9/);
  t.equal(follower.to('/v1/cluster').length, 1);
  t.equal(leader.to('/v1/cluster').length, 1);

  // Without the leader's endpoint the follower's answer is shown, with a note saying why.
  const alone = await run(follower.url, ['cluster', 'status']);
  t.equal(alone.code, 0);
  t.match(alone.stdout, /^answered by n1/);
  t.match(alone.stderr, /not the leader/);
});

t.test('elect says whom it waits behind, once per leader', async (t) => {
  let campaigns = 0;
  const server = await serve(t, (req) => {
    const candidate = (req.body as { candidate?: string } | undefined)?.candidate;
    if (req.path.endsWith('/campaign')) {
      campaigns++;
      const elected = campaigns >= 3;
      const other = { candidate: 'other', value: null, fencingToken: 4 };
      return {
        body: {
          group: 'g',
          candidate,
          elected,
          ...(elected ? { fencingToken: 5 } : {}),
          leader: elected ? { candidate, value: null, fencingToken: 5 } : other,
        },
      };
    }
    if (req.path.endsWith('/resign')) return { body: { group: 'g', resigned: true } };
    if (req.path.endsWith('/observe')) return 'hang';
    return { body: { group: 'g', leader: null, candidates: [], revision: 1 } };
  });
  const interrupt = new AbortController();
  const pending = run(server.url, ['elect', 'g', '--ttl', '30s'], interrupt.signal);
  await server.waitForRequests('/v1/elections/g/campaign', 3);
  await server.waitForRequests('/v1/elections/g', 1);
  interrupt.abort();
  const result = await pending;
  t.equal(result.code, 0, result.stderr);
  const waiting = result.stderr.split('\n').filter((l) => l.startsWith('waiting: '));
  t.same(waiting.length, 1, 'two answers naming the same leader print one line');
  t.match(waiting[0], /other leads g \(fencingToken=4\)/);
  t.match(result.stdout, /elected leader of g fencingToken=5/);
});

t.test(
  'fence check: exit 0 for the current token, 1 for a stale one, 2 without a resource',
  async (t) => {
    const server = await serve(t, (req) => {
      const token = (req.body as { fencingToken: number }).fencingToken;
      return { body: { valid: token === 8, current: 8 } };
    });
    const valid = await run(server.url, ['fence', 'check', '--lease', 'L', '--token', '8']);
    t.equal(valid.code, 0, valid.stderr);
    t.match(valid.stdout, /token 8 of lease L is current/);
    t.same(server.requests[0]!.body, { lease: 'L', fencingToken: 8 });
    const stale = await run(server.url, ['fence', 'check', '--election', 'g', '--token', '7']);
    t.equal(stale.code, 1);
    t.match(stale.stderr, /stale_token: token 7 of election g is stale \(current: 8\)/);
    const usage = await run(server.url, ['fence', 'check', '--token', '7']);
    t.equal(usage.code, 2);
    t.match(usage.stderr, /exactly one of --lease NAME, --election GROUP and --semaphore NAME/);
  },
);

t.test('new TenureClient names endpoints when they are missing or malformed', async (t) => {
  for (const options of [
    {},
    { endpoints: [] },
    { endpoints: 'http://a:1' },
    { endpoints: ['ftp://x'] },
  ]) {
    let thrown: unknown = null;
    try {
      new TenureClient(options as unknown as { endpoints: string[] });
    } catch (error) {
      thrown = error;
    }
    t.ok(thrown instanceof TenureError, `${JSON.stringify(options)} throws a TenureError`);
    t.match(thrown, {
      code: 'invalid_argument',
      details: { field: 'endpoints' },
      message: /^endpoints: /,
    });
  }
  t.doesNotThrow(() => new TenureClient({ endpoints: ['127.0.0.1:7001', 'https://h:1'] }));
});

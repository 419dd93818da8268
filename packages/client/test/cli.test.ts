// Proves the `tenure` CLI in-process: argument parsing into the right HTTP requests, readable and --json
// output, the exit-code contract (0 ok, 1 conflict, 2 usage/400, 3 unavailable, 4 not found, 5 other),
// and the Ctrl-C paths of `lease acquire --hold` and `elect`; plus the usability fixes: flag-named
// duration and fence errors, who holds a `held` lease, and ready-to-paste renew/release lines.
import t, { type Test } from 'tap';
import {
  durationArg,
  main,
  parseEndpoints,
  parseValueArg,
  shellQuote,
  withFlagName,
  type CliIo,
} from '../src/cli/cli.js';
import { exitCodeFor } from '../src/cli/exit-codes.js';
import { TenureClient, TenureError } from '../src/index.js';
import {
  errorBody,
  FakeClock,
  FakeServer,
  recordingSleep,
  type FakeHandler,
} from './fixtures/fake-server.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function io(
  env: Record<string, string>,
  interrupt: AbortSignal = new AbortController().signal,
  clock?: FakeClock,
): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const { sleep } = recordingSleep();
  return {
    out,
    err,
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
    env,
    interrupt,
    createClient: (options) =>
      new TenureClient({
        ...options,
        sleep,
        retry: { attempts: 3 },
        ...(clock === undefined ? {} : { clock }),
      }),
  };
}

async function serve(t: Test, handler: FakeHandler): Promise<FakeServer> {
  const server = await FakeServer.start(handler);
  t.teardown(() => server.close());
  return server;
}

async function run(
  server: FakeServer | null,
  argv: string[],
  interrupt?: AbortSignal,
): Promise<Run> {
  const sink = io(server === null ? {} : { TENURE_ENDPOINTS: server.url }, interrupt);
  const code = await main(argv, sink);
  return { code, stdout: sink.out.join(''), stderr: sink.err.join('') };
}

const leaseGrant: FakeHandler = (req) => {
  const body = req.body as { holder: string; ttlMs: number };
  return { body: { name: 'L', holder: body.holder, fencingToken: 42, ttlMs: body.ttlMs } };
};

t.test('lease acquire: durations parsed into the body, grant printed, exit 0', async (t) => {
  const server = await serve(t, leaseGrant);
  const result = await run(server, [
    'lease',
    'acquire',
    'L',
    '--ttl',
    '5s',
    '--wait',
    '1.5s',
    '--lock-delay',
    '200ms',
    '--holder',
    'me',
  ]);
  t.equal(result.code, 0);
  t.same(server.requests[0]!.body, { holder: 'me', ttlMs: 5000, waitMs: 1500, lockDelayMs: 200 });
  t.match(result.stdout, /acquired L fencingToken=42 holder=me ttl=5s/);
  const json = await run(server, ['--json', 'lease', 'acquire', 'L']);
  t.match(JSON.parse(json.stdout), {
    event: 'acquired',
    name: 'L',
    fencingToken: 42,
    ttlMs: 10_000,
  });
});

t.test('--endpoints flag overrides TENURE_ENDPOINTS', async (t) => {
  const server = await serve(t, leaseGrant);
  const sink = io({ TENURE_ENDPOINTS: 'http://127.0.0.1:1' });
  const code = await main(['--endpoints', server.hostPort, 'lease', 'acquire', 'L'], sink);
  t.equal(code, 0);
  t.equal(server.requests.length, 1);
  t.same(parseEndpoints('a:1, http://b:2 ,'), ['http://a:1', 'http://b:2']);
});

t.test('exit 1 on 409 held, with the error on stderr', async (t) => {
  const server = await serve(t, () => ({
    status: 409,
    body: errorBody('held', 'lease L is held', { holder: 'x' }),
  }));
  const result = await run(server, ['lease', 'acquire', 'L']);
  t.equal(result.code, 1);
  t.match(result.stderr, /held: lease L is held/);
  const json = await run(server, ['--json', 'lease', 'acquire', 'L']);
  t.match(JSON.parse(json.stderr), { error: { code: 'held', holder: 'x' } });
});

t.test('exit 4 when a lease or key is absent', async (t) => {
  const server = await serve(t, () => ({ status: 404, body: errorBody('not_found') }));
  t.equal((await run(server, ['lease', 'get', 'L'])).code, 4);
  t.equal((await run(server, ['kv', 'get', 'k'])).code, 4);
});

t.test('exit 3 when the cluster is unavailable', async (t) => {
  const server = await serve(t, () => ({ status: 503, body: errorBody('no_leader') }));
  t.equal((await run(server, ['lease', 'get', 'L'])).code, 3);
  t.equal((await run(server, ['--timeout', '300ms', 'kv', 'put', 'k', '1'])).code, 3);
  const down = await FakeServer.start();
  const url = down.url;
  await down.close();
  const sink = io({ TENURE_ENDPOINTS: url });
  t.equal(await main(['cluster', 'status'], sink), 3);
});

t.test('exit 2 on bad usage and on 400 answers', async (t) => {
  const server = await serve(t, () => ({
    status: 400,
    body: errorBody('invalid_argument', 'ttlMs must be ≥ 100'),
  }));
  t.equal(
    (await run(server, ['lease', 'acquire', 'L', '--ttl', '10parsecs'])).code,
    2,
    'bad duration',
  );
  t.equal((await run(server, ['lease', 'frobnicate'])).code, 2, 'unknown subcommand');
  t.equal((await run(server, ['lease', 'renew', 'L', '--holder', 'h'])).code, 2, 'missing --token');
  t.equal(
    (await run(server, ['lease', 'renew', 'L', '--holder', 'h', '--token', 'x'])).code,
    2,
    'non-integer token',
  );
  t.equal(
    (await run(server, ['kv', 'put', 'k', '1', '--token', '3'])).code,
    2,
    '--token without a fence resource',
  );
  const rejected = await run(server, ['lease', 'acquire', 'L', '--ttl', '1ms']);
  t.equal(rejected.code, 2, 'server 400');
  t.match(rejected.stderr, /--ttl: ttlMs must be ≥ 100/, 'the server error names the flag');
  t.equal(server.requests.length, 1, 'usage errors sent nothing');
  t.equal((await run(server, ['--help'])).code, 0);
});

t.test('exit 5 on other failures', async (t) => {
  const server = await serve(t, () => ({ status: 500, body: { oops: true } }));
  t.equal((await run(server, ['lease', 'ls'])).code, 5);
  t.equal(exitCodeFor(new TenureError('x', { code: 'idempotency_key_reused', status: 422 })), 5);
  t.equal(exitCodeFor(new TenureError('x', { code: 'stale_token', status: 409 })), 1);
  t.equal(exitCodeFor(new TenureError('x', { code: 'in_use', status: 409 })), 1);
  for (const code of ['limit_mismatch', 'grant_mismatch'] as const)
    t.equal(exitCodeFor(new TenureError('x', { code, status: 409 })), 1, `${code} is a conflict`);
  t.equal(
    exitCodeFor(new TenureError('x', { code: 'held', status: 409, outcomeUnknown: true })),
    3,
  );
});

t.test('lease renew / release / get / ls build the right requests', async (t) => {
  const server = await serve(t, (req) => {
    if (req.path.endsWith('/renew'))
      return { body: { name: 'L', holder: 'h', fencingToken: 3, ttlMs: 3000 } };
    if (req.path.endsWith('/release')) return { body: { name: 'L', released: true } };
    if (req.path === '/v1/leases')
      return {
        body: {
          leases: [{ name: 'L', holder: 'h', fencingToken: 3, ttlMs: 3000, remainingMs: 1200 }],
        },
      };
    return { body: { name: 'L', holder: 'h', fencingToken: 3, ttlMs: 3000, remainingMs: 1200 } };
  });
  t.equal((await run(server, ['lease', 'renew', 'L', '--holder', 'h', '--token', '3'])).code, 0);
  t.same(server.requests[0]!.body, { holder: 'h', fencingToken: 3 });
  t.match(
    (await run(server, ['lease', 'release', 'L', '--holder', 'h', '--token', '3'])).stdout,
    /released L/,
  );
  t.same(server.requests[1]!.body, { holder: 'h', fencingToken: 3 });
  t.match(
    (await run(server, ['lease', 'get', 'L', '--stale'])).stdout,
    /L holder=h fencingToken=3 ttl=3s remaining=1.2s/,
  );
  t.equal(server.requests[2]!.query.get('consistency'), 'stale');
  const ls = await run(server, ['--json', 'lease', 'ls', '--prefix', 'L', '--limit', '5']);
  t.equal(JSON.parse(ls.stdout).leases.length, 1);
  t.equal(server.requests[3]!.query.get('prefix'), 'L');
  t.equal(server.requests[3]!.query.get('limit'), '5');
});

t.test('kv put/get/del with fence and ifRevision flags', async (t) => {
  const server = await serve(t, (req) => {
    if (req.method === 'PUT') return { body: { key: 'k', revision: 9 } };
    if (req.method === 'DELETE') return { body: { key: 'k', deleted: true } };
    return { body: { key: 'k', value: { a: 1 }, revision: 9 } };
  });
  t.match(
    (
      await run(server, [
        'kv',
        'put',
        'k',
        '{"a":1}',
        '--fence-lease',
        'L',
        '--token',
        '4',
        '--if-revision',
        '0',
      ])
    ).stdout,
    /k revision=9/,
  );
  t.same(server.requests[0]!.body, {
    value: { a: 1 },
    fence: { lease: 'L', fencingToken: 4 },
    ifRevision: 0,
  });
  t.equal((await run(server, ['kv', 'put', 'k', 'plain text'])).code, 0);
  t.same(server.requests[1]!.body, { value: 'plain text' });
  t.match((await run(server, ['kv', 'get', 'k'])).stdout, /\{"a":1\}\t\(revision 9\)/);
  t.equal((await run(server, ['kv', 'del', 'k', '--fence-election', 'g', '--token', '2'])).code, 0);
  t.same(server.requests[3]!.body, { fence: { election: 'g', fencingToken: 2 } });
  t.same(parseValueArg('42'), 42);
  t.same(parseValueArg('x y'), 'x y');
});

t.test('cluster status prints leader and members', async (t) => {
  const server = await serve(t, () => ({
    body: {
      id: 'n1',
      leader: 'n2',
      term: 4,
      commitIndex: 17,
      appliedIndex: 17,
      members: [
        {
          id: 'n1',
          role: 'follower',
          httpAddress: '127.0.0.1:7001',
          raftAddress: '127.0.0.1:8001',
        },
      ],
    },
  }));
  const result = await run(server, ['cluster', 'status']);
  t.equal(result.code, 0);
  t.match(result.stdout, /answered by n1: leader=n2 term=4 commitIndex=17/);
  t.match(result.stdout, /n1\s+follower\s+http=127.0.0.1:7001/);
});

t.test("cluster status shows the leader's view: reachable and lag of each member", async (t) => {
  const member = (id: string, role: string, extra: object): object => ({
    id,
    role,
    httpAddress: `127.0.0.1:700${id.slice(1)}`,
    raftAddress: `127.0.0.1:800${id.slice(1)}`,
    ...extra,
  });
  const server = await serve(t, () => ({
    body: {
      id: 'n1',
      leader: 'n1',
      term: 4,
      commitIndex: 17,
      appliedIndex: 17,
      members: [
        member('n1', 'leader', { reachable: true, lagEntries: 0 }),
        member('n2', 'follower', {
          matchIndex: 17,
          lastContactMs: 40,
          reachable: true,
          lagEntries: 0,
        }),
        member('n3', 'follower', {
          matchIndex: 5,
          lastContactMs: 9000,
          reachable: false,
          lagEntries: 12,
        }),
      ],
    },
  }));
  const text = await run(server, ['cluster', 'status']);
  t.equal(text.code, 0);
  t.match(text.stdout, /n1\s+leader\s+http=\S+ raft=\S+ reachable=yes lag=0\n/);
  t.match(text.stdout, /n2\s+follower .* reachable=yes lag=0 matchIndex=17 lastContact=40ms/);
  t.match(text.stdout, /n3\s+follower .* reachable=no lag=12 matchIndex=5 lastContact=9s/);
  const json = await run(server, ['--json', 'cluster', 'status']);
  const members = (JSON.parse(json.stdout) as { members: Record<string, unknown>[] }).members;
  t.same(
    members.map((m) => [m['reachable'], m['lagEntries']]),
    [
      [true, 0],
      [true, 0],
      [false, 12],
    ],
  );
});

t.test('cluster members|add|promote|remove send the membership requests', async (t) => {
  const members = {
    members: [
      { id: 'n1', role: 'leader', httpAddress: 'h1:1', raftAddress: 'r1:1', matchIndex: 9 },
      { id: 'n4', role: 'learner', httpAddress: 'h4:1', raftAddress: 'r4:1' },
    ],
    configIndex: 12,
  };
  const server = await serve(t, (req) =>
    req.path.endsWith('/promote') && req.path.includes('n9')
      ? { status: 409, body: errorBody('not_caught_up', 'n9 lags') }
      : { body: members },
  );
  const list = await run(server, ['cluster', 'members']);
  t.equal(list.code, 0);
  t.match(list.stdout, /configIndex 12[\s\S]*n4\s+learner\s+http=h4:1 raft=r4:1/);
  t.equal(
    (await run(server, ['cluster', 'add', 'n4', '--raft', 'r4:1', '--http', 'h4:1'])).code,
    0,
  );
  t.equal((await run(server, ['cluster', 'promote', 'n4'])).code, 0);
  t.equal((await run(server, ['cluster', 'remove', 'n4'])).code, 0);
  t.equal((await run(server, ['cluster', 'promote', 'n9'])).code, 1, 'a conflict exits 1');
  const sent = server.requests.map((r) => `${r.method} ${r.path}`);
  t.same(sent.slice(0, 4), [
    'GET /v1/cluster/members',
    'POST /v1/cluster/members',
    'POST /v1/cluster/members/n4/promote',
    'DELETE /v1/cluster/members/n4',
  ]);
  t.same(server.requests[1]?.body, { id: 'n4', raftAddress: 'r4:1', httpAddress: 'h4:1' });
});

t.test('lease acquire --hold keeps the lease until Ctrl-C, then releases it', async (t) => {
  const server = await serve(t, (req) =>
    req.path.endsWith('/release') ? { body: { name: 'L', released: true } } : leaseGrant(req),
  );
  const interrupt = new AbortController();
  const pending = run(
    server,
    ['lease', 'acquire', 'L', '--ttl', '30s', '--hold'],
    interrupt.signal,
  );
  await server.waitForRequests('/v1/leases/L/acquire', 1);
  interrupt.abort();
  const result = await pending;
  t.equal(result.code, 0);
  t.match(result.stdout, /released L/);
  t.same(server.to('/v1/leases/L/release')[0]!.body, {
    holder: (server.requests[0]!.body as { holder: string }).holder,
    fencingToken: 42,
  });
});

t.test('lease acquire --hold exits 1 when the lease is lost', async (t) => {
  const server = await serve(t, (req) =>
    req.path.endsWith('/renew') ? { status: 409, body: errorBody('not_holder') } : leaseGrant(req),
  );
  // A fake clock: on the real one a loaded machine can stall past the 267 ms safe deadline first.
  const clock = new FakeClock();
  const sink = io({ TENURE_ENDPOINTS: server.url }, undefined, clock);
  let exited = false;
  const pending = main(['lease', 'acquire', 'L', '--ttl', '300ms', '--hold'], sink).finally(() => {
    exited = true;
  });
  while (!exited && !sink.out.join('').includes('acquired'))
    await new Promise((resolve) => setImmediate(resolve));
  clock.advance(100); // ttl/3: the renewal goes out and is answered 409 not_holder
  t.equal(await pending, 1);
  t.match(sink.err.join(''), /lost: not_holder/);
});

t.test('elect campaigns, holds until Ctrl-C and resigns', async (t) => {
  const server = await serve(t, (req) => {
    const candidate = (req.body as { candidate?: string } | undefined)?.candidate;
    if (req.path.endsWith('/campaign'))
      return {
        body: {
          group: 'g',
          candidate,
          elected: true,
          fencingToken: 6,
          leader: { candidate, value: 'v1', fencingToken: 6 },
        },
      };
    if (req.path.endsWith('/resign')) return { body: { group: 'g', resigned: true } };
    if (req.path.endsWith('/observe')) return 'hang';
    return { body: { group: 'g', leader: null, candidates: [], revision: 1 } };
  });
  const interrupt = new AbortController();
  const pending = run(
    server,
    ['--json', 'elect', 'g', '--value', 'v1', '--ttl', '30s'],
    interrupt.signal,
  );
  await server.waitForRequests('/v1/elections/g/campaign', 1);
  await server.waitForRequests('/v1/elections/g', 1);
  interrupt.abort();
  const result = await pending;
  t.equal(result.code, 0);
  const lines = result.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string });
  t.same(
    lines.map((l) => l.event),
    ['elected', 'resigned'],
  );
  t.match(lines[0], { fencingToken: 6, value: 'v1' });
  t.match(server.to('/v1/elections/g/campaign')[0]!.body, { value: 'v1', ttlMs: 30_000 });
  t.equal(server.to('/v1/elections/g/resign').length, 1);
});

t.test('observe prints views until Ctrl-C', async (t) => {
  const server = await serve(t, (req) =>
    req.path.endsWith('/observe')
      ? 'hang'
      : {
          body: {
            group: 'g',
            leader: { candidate: 'c', value: 1, fencingToken: 2 },
            candidates: [{ candidate: 'c', value: 1 }],
            revision: 3,
          },
        },
  );
  const interrupt = new AbortController();
  const pending = run(server, ['observe', 'g'], interrupt.signal);
  await server.waitForRequests('/v1/elections/g/observe', 1);
  interrupt.abort();
  const result = await pending;
  t.equal(result.code, 0);
  t.match(result.stdout, /g leader=c value=1 fencingToken=2 candidates=1 revision=3/);
});

t.test('lease watch prints the grant and its changes until Ctrl-C', async (t) => {
  let polls = 0;
  const server = await serve(t, (req) => {
    if (req.path === '/v1/leases/L')
      return { body: { name: 'L', holder: 'a', fencingToken: 1, ttlMs: 3000, remainingMs: 1000 } };
    return ++polls === 1
      ? { body: { name: 'L', holder: null, fencingToken: null, changed: true } }
      : 'hang';
  });
  const interrupt = new AbortController();
  const pending = run(server, ['lease', 'watch', 'L'], interrupt.signal);
  await server.waitForRequests('/v1/leases/L/watch', 2);
  interrupt.abort();
  const result = await pending;
  t.equal(result.code, 0);
  t.equal(result.stdout, 'L holder=a fencingToken=1\nL free\n');
  t.equal(server.to('/v1/leases/L/watch')[1]!.query.get('afterToken'), '0');
});

/** Splits a shell command line into words (single quotes and `'\''` only, as shellQuote writes). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/(?:'[^']*'|\\'|[^\s'\\])+/g))
    words.push(
      m[0].replace(
        /'([^']*)'|\\(')/g,
        (_all, quoted: string | undefined, q: string | undefined) => quoted ?? q ?? '',
      ),
    );
  return words;
}

t.test('kv fence flags: a missing --token or resource is named the right way round', async (t) => {
  const server = await serve(t, () => ({ body: { key: 'k', revision: 1 } }));
  const lease = await run(server, ['kv', 'put', 'k', 'v', '--fence-lease', 'L']);
  t.equal(lease.code, 2);
  t.match(lease.stderr, /--fence-lease needs --token N/);
  const election = await run(server, ['kv', 'del', 'k', '--fence-election', 'g']);
  t.equal(election.code, 2);
  t.match(election.stderr, /--fence-election needs --token N/);
  const token = await run(server, ['kv', 'put', 'k', 'v', '--token', '3']);
  t.equal(token.code, 2);
  t.match(token.stderr, /--token needs --fence-lease NAME or --fence-election GROUP/);
  const both = await run(server, [
    'kv',
    'put',
    'k',
    'v',
    '--fence-lease',
    'L',
    '--fence-election',
    'g',
  ]);
  t.match(both.stderr, /only one of --fence-lease and --fence-election/);
  t.equal(server.requests.length, 0, 'nothing was sent');
});

t.test('held in text mode says who holds the lease, or how long lock-delay lasts', async (t) => {
  const server = await serve(t, (req) =>
    req.method === 'GET'
      ? { body: { name: 'L', holder: 'other', fencingToken: 7, ttlMs: 3000, remainingMs: 1200 } }
      : {
          status: 409,
          body: errorBody('held', 'lease L is held by another holder', { holder: 'other' }),
        },
  );
  const text = await run(server, ['lease', 'acquire', 'L']);
  t.equal(text.code, 1);
  t.match(text.stderr, /held: lease L is held by other \(token 7, expires in 1\.2s\)/);
  t.equal(
    server.to('/v1/leases/L')[0]!.query.get('consistency'),
    'stale',
    'a stale read, not a round',
  );
  const json = await run(server, ['--json', 'lease', 'acquire', 'L']);
  t.equal(json.code, 1);
  t.match(JSON.parse(json.stderr), { error: { code: 'held', holder: 'other' } });
  t.equal(server.to('/v1/leases/L').length, 1, '--json adds no read');

  const moved = await serve(t, (req) =>
    req.method === 'GET'
      ? { body: { name: 'L', holder: 'newer', fencingToken: 8, ttlMs: 3000, remainingMs: 2000 } }
      : { status: 409, body: errorBody('held', 'lease L is held', { holder: 'other' }) },
  );
  const stale = await run(moved, ['lease', 'acquire', 'L']);
  t.match(
    stale.stderr,
    /held: lease L is held by other\n/,
    'no token of a different grant is shown',
  );

  const delayed = await serve(t, () => ({
    status: 409,
    body: errorBody('held', 'lease L is in lock-delay', {
      holder: null,
      lockDelayRemainingMs: 1500,
    }),
  }));
  const delay = await run(delayed, ['lease', 'acquire', 'L']);
  t.equal(delay.code, 1);
  t.match(delay.stderr, /held: lease L is in lock-delay for 1\.5s/);
  t.equal(delayed.requests.length, 1, 'no read during lock-delay');
});

t.test('duration flags need a unit; bare 0 is fine', async (t) => {
  const server = await serve(t, leaseGrant);
  for (const [flag, argv] of [
    ['--ttl', ['lease', 'acquire', 'L', '--ttl', '5']],
    ['--wait', ['lease', 'acquire', 'L', '--wait', '500']],
    ['--timeout', ['--timeout', '3000', 'lease', 'acquire', 'L']],
    ['--ttl', ['elect', 'g', '--ttl', '10']],
  ] as const) {
    const result = await run(server, [...argv]);
    t.equal(result.code, 2, argv.join(' '));
    t.match(result.stderr, new RegExp(`${flag}: "\\d+" needs a unit, e.g. \\d+s or \\d+ms`));
  }
  t.equal(server.requests.length, 0, 'nothing was sent');
  t.equal(
    (await run(server, ['lease', 'acquire', 'L', '--lock-delay', '0', '--wait', '0ms'])).code,
    0,
  );
  t.same(server.requests[0]!.body, {
    holder: (server.requests[0]!.body as { holder: string }).holder,
    ttlMs: 10_000,
    waitMs: 0,
    lockDelayMs: 0,
  });
  t.equal(durationArg('--ttl')('1.5s'), 1500);
  t.throws(() => durationArg('--ttl')('7'), /--ttl: "7" needs a unit/);
});

t.test('server invalid_argument errors name the flag that set the field', async (t) => {
  let answer = errorBody(
    'invalid_argument',
    'body.ttlMs must be an integer between 100 and 3600000',
    {
      field: 'body.ttlMs',
    },
  );
  const server = await serve(t, () => ({ status: 400, body: answer }));
  const text = await run(server, ['lease', 'acquire', 'L', '--ttl', '50ms']);
  t.equal(text.code, 2);
  t.match(text.stderr, /invalid_argument: --ttl: ttlMs must be an integer between 100 and 3600000/);
  const json = await run(server, ['--json', 'lease', 'acquire', 'L', '--ttl', '50ms']);
  t.match(JSON.parse(json.stderr), {
    error: { code: 'invalid_argument', field: 'body.ttlMs', flag: '--ttl' },
  });

  answer = errorBody('invalid_argument', 'fence.fencingToken: must be a non-negative integer', {
    field: 'fence.fencingToken',
  });
  t.match(
    (await run(server, ['kv', 'put', 'k', 'v', '--fence-lease', 'L', '--token', '1'])).stderr,
    /--token: fence\.fencingToken must be a non-negative integer/,
  );
  answer = errorBody('invalid_argument', 'body.value must be a JSON value', {
    field: 'body.value',
  });
  t.match((await run(server, ['kv', 'put', 'k', 'v'])).stderr, /VALUE: value must be a JSON value/);
  answer = errorBody('invalid_argument', 'params.name must be 1-200 characters', {
    field: 'params.name',
  });
  t.match((await run(server, ['lease', 'get', 'L'])).stderr, /NAME: name must be 1-200 characters/);

  const elect = withFlagName(
    new TenureError('body.value is too deep', {
      code: 'invalid_argument',
      status: 400,
      details: { field: 'body.value' },
    }),
    '--value',
  );
  t.match(elect, {
    message: '--value: value is too deep',
    code: 'invalid_argument',
    details: { flag: '--value' },
  });
  const unknown = new TenureError('body.frob is not allowed', {
    code: 'invalid_argument',
    status: 400,
    details: { field: 'body.frob' },
  });
  t.equal(withFlagName(unknown), unknown, 'a field no flag sets is left alone');
  const held = new TenureError('ttlMs', { code: 'held', status: 409 });
  t.equal(withFlagName(held), held, 'other codes are left alone');
});

t.test('one-shot acquire prints renew/release lines that work when pasted', async (t) => {
  const server = await serve(t, (req) => {
    if (req.path.endsWith('/release')) return { body: { name: 'L', released: true } };
    if (req.path.endsWith('/renew'))
      return { body: { name: 'L', holder: 'x', fencingToken: 42, ttlMs: 10_000 } };
    return leaseGrant(req);
  });
  const acquired = await run(server, ['lease', 'acquire', 'L']);
  t.equal(acquired.code, 0);
  const holder = (server.requests[0]!.body as { holder: string }).holder;
  t.match(
    acquired.stderr,
    /expires in 10s unless renewed \(choose a shorter holder id with --holder ID\)/,
  );
  const release = /release with: (.*)\n/.exec(acquired.stderr)?.[1];
  const renew = /renew with: +(.*)\n/.exec(acquired.stderr)?.[1];
  t.ok(release !== undefined && renew !== undefined, 'both lines printed');
  const releaseArgv = shellWords(release!);
  t.same(releaseArgv, ['tenure', 'lease', 'release', 'L', '--holder', holder, '--token', '42']);
  t.equal((await run(server, releaseArgv.slice(1))).code, 0);
  t.same(server.to('/v1/leases/L/release')[0]!.body, { holder, fencingToken: 42 });
  t.equal((await run(server, shellWords(renew!).slice(1))).code, 0);
  t.same(server.to('/v1/leases/L/renew')[0]!.body, { holder, fencingToken: 42 });

  // A chosen holder (even one a shell would mangle) and --endpoints are carried into the lines.
  const sink = io({});
  t.equal(
    await main(
      ['--endpoints', server.hostPort, 'lease', 'acquire', 'L', '--holder', "it's me"],
      sink,
    ),
    0,
  );
  const err = sink.err.join('');
  t.notMatch(err, /choose a shorter holder id/);
  const line = /release with: (.*)\n/.exec(err)?.[1] ?? '';
  t.same(shellWords(line), [
    'tenure',
    '--endpoints',
    server.hostPort,
    'lease',
    'release',
    'L',
    '--holder',
    "it's me",
    '--token',
    '42',
  ]);
  t.equal(shellQuote('host:1:ab-c#1'), "'host:1:ab-c#1'");
  t.equal(shellQuote('short-id'), 'short-id');

  const json = await run(server, ['--json', 'lease', 'acquire', 'L']);
  t.equal(json.stderr, '', '--json prints no hints');
  t.equal(json.stdout.trim().split('\n').length, 1);
});

// Proves the listings (docs/api.md, Listings) in the client and the CLI: `list` sends prefix/after/limit and returns one page with its cursor, `listAll` and `--all` follow nextCursor through every page (never looping on a cursor that does not advance), and `tenure lease|election|kv list` print text or --json with the answer's own field.
import t, { type Test } from 'tap';
import { main, type CliIo } from '../src/cli/cli.js';
import { TenureClient } from '../src/index.js';
import { walkPages } from '../src/listing.js';
import { FakeServer, recordingSleep, type FakeRequest } from './fixtures/fake-server.js';

const LEASES = ['a1', 'a2', 'a3', 'b1', 'b2'].map((name, i) => ({
  name,
  holder: `h${i}`,
  fencingToken: 10 + i,
  ttlMs: 5000,
  remainingMs: 4000,
}));
const KEYS = ['k1', 'k2', 'k3'].map((key, i) => ({ key, revision: 20 + i }));
const GROUPS = [{ group: 'g1', leader: null, candidates: [], revision: 3 }];

/** A page of `items` (sorted by `nameOf`) for the listing query of `req`, as the server pages. */
function page<T>(req: FakeRequest, items: T[], nameOf: (item: T) => string): [T[], string | null] {
  const prefix = req.query.get('prefix') ?? '';
  const after = req.query.get('after');
  const limit = Number(req.query.get('limit') ?? '100');
  const matching = items.filter(
    (i) => nameOf(i).startsWith(prefix) && (after === null || nameOf(i) > after),
  );
  const shown = matching.slice(0, limit);
  return [shown, matching.length > limit ? nameOf(shown[shown.length - 1]!) : null];
}

async function serve(t: Test): Promise<FakeServer> {
  const server = await FakeServer.start((req) => {
    if (req.path === '/v1/leases') {
      const [leases, nextCursor] = page(req, LEASES, (l) => l.name);
      return { body: { leases, nextCursor } };
    }
    if (req.path === '/v1/kv') {
      const [keys, nextCursor] = page(req, KEYS, (k) => k.key);
      return { body: { keys, nextCursor } };
    }
    const [elections, nextCursor] = page(req, GROUPS, (g) => g.group);
    return { body: { elections, nextCursor } };
  });
  t.teardown(() => server.close());
  return server;
}

async function run(
  server: FakeServer,
  argv: string[],
): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
    env: { TENURE_ENDPOINTS: server.url },
    interrupt: new AbortController().signal,
    createClient: (options) =>
      new TenureClient({ ...options, sleep: recordingSleep().sleep, retry: { attempts: 2 } }),
  };
  const code = await main(argv, io);
  return { code, out: out.join(''), err: err.join('') };
}

t.test('client.list sends the query and returns one page; listAll walks every page', async (t) => {
  const server = await serve(t);
  const client = new TenureClient({ endpoints: [server.url] });
  t.teardown(() => client.close());
  const first = await client.list('leases', { prefix: 'a', after: 'a1', limit: 1 });
  t.same(first, { items: [LEASES[1]], nextCursor: 'a2' });
  t.equal(server.requests[0]!.path, '/v1/leases');
  t.same(Object.fromEntries(server.requests[0]!.query), { prefix: 'a', after: 'a1', limit: '1' });
  const names: string[] = [];
  for await (const lease of client.listAll('leases', { limit: 2 })) names.push(lease.name);
  t.same(names, ['a1', 'a2', 'a3', 'b1', 'b2'], 'every lease once, in order');
  t.same(
    server.requests.slice(1).map((r) => r.query.get('after')),
    [null, 'a2', 'b1'],
    'each page asked after the previous cursor',
  );
  const keys = await client.list('kv');
  t.same(keys, { items: KEYS, nextCursor: null });
  t.same(
    (await client.listLeases({ prefix: 'b' })).map((l) => l.name),
    ['b1', 'b2'],
  );
});

t.test('walkPages refuses a cursor that does not move forward', async (t) => {
  const stuck = walkPages('a', () => Promise.resolve({ items: [1], nextCursor: 'a' }));
  await t.rejects(
    (async () => {
      for await (const _ of stuck);
    })(),
    RangeError,
  );
});

t.test('tenure lease list prints one page and the cursor of the next', async (t) => {
  const server = await serve(t);
  const r = await run(server, ['lease', 'list', '--prefix', 'a', '--limit', '2']);
  t.equal(r.code, 0, r.err);
  t.match(r.out, /^a1 holder=h0 fencingToken=10 ttl=5s remaining=4s\na2 holder=h1/);
  t.notMatch(r.out, /a3/);
  t.match(r.err, /more after a2: pass --after a2, or --all/);
  const next = await run(server, ['lease', 'ls', '--prefix', 'a', '--limit', '2', '--after', 'a2']);
  t.match(next.out, /^a3 holder=h2 fencingToken=12/);
  t.equal(next.err, '', 'last page: no cursor hint');
  const none = await run(server, ['lease', 'list', '--prefix', 'zz']);
  t.equal(none.out, 'no leases\n');
});

t.test('--all follows nextCursor; --json keeps the answer field', async (t) => {
  const server = await serve(t);
  const all = await run(server, ['--json', 'lease', 'list', '--all', '--limit', '2']);
  t.equal(all.code, 0, all.err);
  t.same(JSON.parse(all.out), { leases: LEASES, nextCursor: null });
  t.equal(server.requests.length, 3, 'three pages of two');
  const kv = await run(server, ['--json', 'kv', 'list', '--limit', '2']);
  t.same(JSON.parse(kv.out), { keys: KEYS.slice(0, 2), nextCursor: 'k2' });
  const kvText = await run(server, ['kv', 'list', '--all', '--limit', '1']);
  t.equal(kvText.out, 'k1\t(revision 20)\nk2\t(revision 21)\nk3\t(revision 22)\n');
  t.equal(kvText.err, '');
  const groups = await run(server, ['election', 'list']);
  t.match(groups.out, /^g1 leader=none candidates=0 revision=3\n$/);
  t.equal(server.requests.at(-1)!.path, '/v1/elections');
});

t.test('a bad --limit is a usage error naming the flag', async (t) => {
  const server = await serve(t);
  const r = await run(server, ['kv', 'list', '--limit', 'ten']);
  t.equal(r.code, 2);
  t.match(r.err, /--limit: expected a non-negative integer/);
  t.equal(server.requests.length, 0);
});

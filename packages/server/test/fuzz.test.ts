// Proves, by seeded property-based testing (fast-check), that whatever method, path, headers and
// body arrive, the app never answers 5xx, never fails an assertion or throws out of a handler,
// and answers every 4xx in the error shape {"error": {"code", "message"}} (docs/api.md, Errors);
// with auth off and on (any Authorization, forged Tenure-Forwarded headers; docs/security.md).
import t from 'tap';
import fc from 'fast-check';
import { ERROR_HTTP_STATUS } from '@tenure/coord-state';
import { createRootToken, harness, type Harness } from './fixtures/harness.js';

/** Fixed seed and a bounded number of runs: the same inputs every run, fast in the suite. */
const SEED = Number(process.env.FUZZ_SEED ?? 20261201);
const RUNS = Number(process.env.FUZZ_RUNS ?? 250);
const ROOT = 'fuzz-root-secret-0123456789';

const CODES = new Set(Object.keys(ERROR_HTTP_STATUS));

const segment = fc.oneof(
  fc.constantFrom('a', 'L1', 'g', 'k.x', 'n1', '%2F', '%', '..', '', 'x'.repeat(300), '%E0%A4%A'),
  fc.webSegment(),
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
);
const prefix = fc.constantFrom(
  '/v1/leases',
  '/v1/elections',
  '/v1/kv',
  '/v1/fence/check',
  '/v1/cluster',
  '/v1/cluster/transfer-leadership',
  '/v1/cluster/state',
  '/healthz',
  '/readyz',
  '/metrics',
  '/docs',
  '/v1',
  '',
);
const action = fc.constantFrom(
  '',
  '/acquire',
  '/renew',
  '/release',
  '/watch',
  '/campaign',
  '/resign',
  '/proclaim',
  '/observe',
);
const query = fc.oneof(
  fc.constant(''),
  fc
    .array(
      fc.tuple(
        fc.constantFrom('prefix', 'limit', 'after', 'consistency', 'timeoutMs', 'afterToken', 'x'),
        fc.oneof(
          fc.constantFrom('1', '0', '-1', '1e3', 'stale', 'a', '99999999999999999999'),
          fc.string({ maxLength: 8 }),
        ),
      ),
      { maxLength: 3 },
    )
    .map((pairs) => '?' + pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')),
);
const url = fc
  .tuple(prefix, fc.option(segment, { nil: undefined }), action, query)
  .map(([p, s, a, q]) => {
    const u = `${p}${s === undefined ? '' : `/${s}`}${a}${q}`;
    return u.startsWith('/') ? u : `/${u}`; // an HTTP request line always has a path
  });

const headerValue = fc.oneof(
  fc.constantFrom('0', '1', '1000', '1e3', '-5', 'abc', '', 'x'.repeat(200)),
  fc.string({ maxLength: 20 }).filter((v) => /^[\x20-\x7e]*$/.test(v)),
);
/**
 * Deadlines are invalid or generous: a valid deadline of a few ms may honestly end in 504 timeout
 * on a loaded machine, which is the contract (docs/api.md, Deadlines), not a failure.
 */
const timeoutHeader = fc.oneof(
  fc.constantFrom('0', '1000', '60000', '1e3', '-5', 'abc', '', '999999999999'),
  fc.string({ maxLength: 10 }).filter((v) => /^[\x20-\x7e]*$/.test(v) && !/^\s*[0-9]+\s*$/.test(v)),
);
const headers = fc.record(
  {
    'content-type': fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ),
    'content-encoding': fc.constantFrom('gzip', 'identity', 'br'),
    'idempotency-key': headerValue,
    'request-timeout-ms': timeoutHeader,
    accept: fc.constantFrom('application/json', '*/*', 'text/html'),
  },
  { requiredKeys: [] },
);

const plausibleBody = fc.record(
  {
    holder: fc.oneof(fc.string({ maxLength: 10 }), fc.integer()),
    candidate: fc.string({ maxLength: 10 }),
    ttlMs: fc.oneof(fc.integer(), fc.double(), fc.constant(1000)),
    waitMs: fc.constantFrom(0, 10, -1),
    fencingToken: fc.oneof(fc.integer(), fc.constant(2 ** 60)),
    value: fc.jsonValue({ maxDepth: 3 }),
    lease: fc.string({ maxLength: 5 }),
    ifRevision: fc.integer(),
    to: fc.string({ maxLength: 3 }),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  fc.constant(undefined),
  plausibleBody.map((b) => JSON.stringify(b)),
  fc.json({ maxDepth: 3 }),
  fc.string({ maxLength: 50 }),
  fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)),
  fc.constantFrom(
    '{"a":',
    '[[[[[[[[[[',
    '{"holder":"h","ttlMs":1e400}',
    '{"value":12345678901234567890}',
  ),
);
const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS');

const authHeaders = fc.record(
  {
    authorization: fc.oneof(
      fc.constant(`Bearer ${ROOT}`),
      fc.constantFrom('Bearer', 'Bearer ', 'Basic abc', 'bearer x y', `Bearer ${'z'.repeat(600)}`),
      fc.constantFrom(
        'Bearer tnr.root.00',
        'Bearer tnr..x',
        'Bearer tnr.nobody.abcdef',
        'Bearer wrong',
      ),
      fc.string({ maxLength: 30 }).filter((v) => /^[\x20-\x7e]*$/.test(v)),
    ),
    'tenure-forwarded': fc.constantFrom('n2', '', 'x'),
    'tenure-forwarded-proof': fc.constantFrom('1.abc', `${Date.now()}.${'A'.repeat(43)}`, ''),
  },
  { requiredKeys: [] },
);

/** Makes the root token of an auth-on harness. */
async function withRoot(h: Harness): Promise<void> {
  await createRootToken(h, ROOT);
}

async function fuzz(t: Tap.Test, auth: boolean, runs: number): Promise<void> {
  const fatal: unknown[] = [];
  const h = await harness(auth ? ['--auth'] : [], { onFatal: (err) => fatal.push(err) });
  t.teardown(h.close);
  if (auth) await withRoot(h);
  const extra = auth ? authHeaders : fc.constant({});
  let checked = 0;
  await fc.assert(
    fc.asyncProperty(method, url, headers, extra, body, async (m, u, hs, ah, b) => {
      const r = await h.app.inject({
        method: m as 'GET',
        url: u,
        headers: { ...hs, ...ah },
        ...(b === undefined ? {} : { payload: b }),
      });
      if (r.statusCode >= 500) throw new Error(`${m} ${u} answered ${r.statusCode}: ${r.body}`);
      if (r.statusCode >= 400 && m !== 'HEAD') {
        const e = (r.json() as { error?: { code?: unknown; message?: unknown } }).error;
        if (typeof e?.code !== 'string' || !CODES.has(e.code) || typeof e.message !== 'string')
          throw new Error(`${m} ${u} answered ${r.statusCode} outside the error shape: ${r.body}`);
        if (ERROR_HTTP_STATUS[e.code as keyof typeof ERROR_HTTP_STATUS] !== r.statusCode)
          throw new Error(`${m} ${u}: status ${r.statusCode} does not match code ${e.code}`);
      }
      checked++;
    }),
    { seed: SEED, numRuns: runs, endOnFailure: true },
  );
  t.equal(checked, runs, 'every generated request was checked');
  t.same(fatal, [], 'no assertion failed');
}

t.test('no request makes the app answer 5xx or break the error shape', async (t) => {
  await fuzz(t, false, RUNS);
});

// Fewer runs: a wrong bearer costs one scrypt check (the refused ones are then remembered).
t.test('with auth on too, whatever the Authorization and forwarding headers', async (t) => {
  await fuzz(t, true, Math.ceil(RUNS / 2));
});

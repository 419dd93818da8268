// Proves the shared-lock checker fails when an exclusive grant is certainly live together with
// another grant of the name, on a shared token and on a late fenced write — and passes when shared
// grants overlap each other or an overlap rests only on unknown outcomes.
import t from 'tap';
import { checkSharedLocks } from './shared-lock.js';
import { HistoryBuilder, fail, ok, unknown } from './testing.js';

const DRIFT = 0.01;
const TTL = 3000;

function grant(
  h: HistoryBuilder,
  holder: string,
  mode: 'shared' | 'exclusive',
  token: number,
  at: number,
): void {
  h.add(
    holder,
    'rw.acquire',
    { name: 'R', holder, ttlMs: TTL, mode },
    at,
    at + 20,
    ok({
      name: 'R',
      holder,
      fencingToken: token,
      ttlMs: TTL,
      ...(mode === 'shared' ? { mode } : {}),
    }),
  );
}

t.test('shared grants may overlap each other', async (t) => {
  const h = new HistoryBuilder();
  grant(h, 'a', 'shared', 1, 0);
  grant(h, 'b', 'shared', 2, 100);
  const r = checkSharedLocks(h.ops, DRIFT);
  t.ok(r.ok, JSON.stringify(r.violations));
  t.equal(r.stats['sharedOverlapsSeen'], 1);
});

t.test('an exclusive grant overlapping a shared one fails', async (t) => {
  const h = new HistoryBuilder();
  grant(h, 'a', 'shared', 1, 0);
  grant(h, 'b', 'exclusive', 2, 100);
  const r = checkSharedLocks(h.ops, DRIFT);
  t.notOk(r.ok);
  t.equal(r.violations[0]?.property, 'exclusive-overlap');
});

t.test(
  'an exclusive grant after a release of unknown outcome, or after a lapse, passes',
  async (t) => {
    const h = new HistoryBuilder();
    grant(h, 'a', 'shared', 1, 0);
    h.add('a', 'rw.release', { name: 'R', holder: 'a', fencingToken: 1 }, 50, null, unknown());
    grant(h, 'b', 'exclusive', 2, 100);
    grant(h, 'c', 'shared', 3, TTL + 200);
    t.ok(checkSharedLocks(h.ops, DRIFT).ok);
  },
);

t.test('a renewed grant stays certainly live: an exclusive grant then fails', async (t) => {
  const h = new HistoryBuilder();
  grant(h, 'a', 'exclusive', 1, 0);
  h.add(
    'a',
    'rw.renew',
    { name: 'R', holder: 'a', fencingToken: 1 },
    2500,
    2520,
    ok({ name: 'R', holder: 'a', fencingToken: 1, ttlMs: TTL }),
  );
  grant(h, 'b', 'shared', 2, TTL + 200);
  t.equal(checkSharedLocks(h.ops, DRIFT).violations[0]?.property, 'exclusive-overlap');
});

t.test('shared tokens and late fenced writes fail', async (t) => {
  const h = new HistoryBuilder();
  grant(h, 'a', 'exclusive', 1, 0);
  h.add('a', 'rw.renew', { name: 'R', holder: 'a', fencingToken: 1 }, 100, 110, fail('not_holder'));
  h.add(
    'a',
    'prim.write',
    { key: 'R-data', value: 1, fence: { lease: 'R', fencingToken: 1 } },
    200,
    210,
    ok({ key: 'R-data', revision: 7 }),
  );
  t.equal(checkSharedLocks(h.ops, DRIFT).violations[0]?.property, 'lock-fence-after-end');
  grant(h, 'b', 'shared', 1, 5000);
  const props = checkSharedLocks(h.ops, DRIFT).violations.map((v) => v.property);
  t.ok(props.includes('lock-token-shared'));
});

t.test('an exclusive acquire answered with the holder’s shared grant fails', async (t) => {
  const h = new HistoryBuilder();
  grant(h, 'r3', 'shared', 1, 0);
  grant(h, 'r4', 'shared', 2, 50);
  h.add(
    'r3',
    'rw.acquire',
    { name: 'R', holder: 'r3', ttlMs: TTL, mode: 'exclusive' },
    100,
    120,
    ok({ name: 'R', holder: 'r3', fencingToken: 1, ttlMs: TTL, mode: 'shared' }),
  );
  const r = checkSharedLocks(h.ops, DRIFT);
  t.notOk(r.ok);
  t.same(
    r.violations.map((v) => v.property),
    ['lock-grant-mismatch'],
  );
  const refused = new HistoryBuilder();
  grant(refused, 'r3', 'shared', 1, 0);
  refused.add(
    'r3',
    'rw.acquire',
    { name: 'R', holder: 'r3', ttlMs: TTL, mode: 'exclusive' },
    100,
    120,
    fail('grant_mismatch'),
  );
  t.ok(checkSharedLocks(refused.ops, DRIFT).ok, 'the 409 grant_mismatch passes');
});

// Proves the semaphore checker fails on N+1 permits certainly live at once, on a token that does
// not grow, on a shared token and on a fenced write accepted after its permit ended — and passes
// on correct histories, including ones where only unknown outcomes could make it look wrong.
import t from 'tap';
import { checkSemaphores } from './semaphore.js';
import { HistoryBuilder, fail, ok, unknown } from './testing.js';

const DRIFT = 0.01;
const TTL = 3000;

/** An ok acquire of `sem` (limit 2) by `holder` sent at `at`, acked 20 ms later, with `token`. */
function acquire(h: HistoryBuilder, holder: string, token: number, at: number, name = 'S'): void {
  h.add(
    holder,
    'sem.acquire',
    { name, holder, limit: 2, ttlMs: TTL },
    at,
    at + 20,
    ok({ name, holder, fencingToken: token, limit: 2, ttlMs: TTL }),
  );
}

t.test('three permits of a limit-2 semaphore certainly live together fail', async (t) => {
  const h = new HistoryBuilder();
  acquire(h, 'a', 10, 0);
  acquire(h, 'b', 11, 100);
  acquire(h, 'c', 12, 200);
  const r = checkSemaphores(h.ops, DRIFT);
  t.notOk(r.ok);
  t.equal(r.violations[0]?.property, 'semaphore-over-limit');
});

t.test(
  'a third permit after one was released, or after one could have lapsed, passes',
  async (t) => {
    const h = new HistoryBuilder();
    acquire(h, 'a', 10, 0);
    acquire(h, 'b', 11, 100);
    h.add('a', 'sem.release', { name: 'S', holder: 'a', fencingToken: 10 }, 300, null, unknown());
    acquire(h, 'c', 12, 400); // a's release may have been applied first
    acquire(h, 'd', 13, TTL + 500); // b's permit may have lapsed by then
    const r = checkSemaphores(h.ops, DRIFT);
    t.ok(r.ok, JSON.stringify(r.violations));
  },
);

t.test('an acquire of unknown outcome never counts as a live permit', async (t) => {
  const h = new HistoryBuilder();
  acquire(h, 'a', 10, 0);
  acquire(h, 'b', 11, 100);
  h.add('c', 'sem.acquire', { name: 'S', holder: 'c', limit: 2, ttlMs: TTL }, 200, 2200, unknown());
  t.ok(checkSemaphores(h.ops, DRIFT).ok);
});

t.test('a GET listing more holders than the limit fails', async (t) => {
  const h = new HistoryBuilder();
  const holders = [1, 2, 3].map((i) => ({ holder: `h${i}`, fencingToken: i, remainingMs: 100 }));
  h.add('r', 'sem.get', { name: 'S' }, 0, 5, ok({ name: 'S', limit: 2, holders, waiters: 0 }));
  t.equal(checkSemaphores(h.ops, DRIFT).violations[0]?.property, 'semaphore-over-limit');
});

t.test('a permit granted after another was seen with a lower token fails', async (t) => {
  const h = new HistoryBuilder();
  acquire(h, 'a', 20, 0);
  h.add(
    'a',
    'sem.release',
    { name: 'S', holder: 'a', fencingToken: 20 },
    50,
    60,
    ok({ name: 'S', released: true }),
  );
  acquire(h, 'b', 15, 100); // sent after token 20 was seen: must be above 20
  const r = checkSemaphores(h.ops, DRIFT);
  t.notOk(r.ok);
  t.equal(r.violations[0]?.property, 'semaphore-token-order');
});

t.test('overlapping acquires may get tokens in either order', async (t) => {
  const h = new HistoryBuilder();
  h.add(
    'a',
    'sem.acquire',
    { name: 'S', holder: 'a', limit: 2, ttlMs: TTL },
    0,
    500,
    ok({ name: 'S', holder: 'a', fencingToken: 20, limit: 2, ttlMs: TTL }),
  );
  acquire(h, 'b', 15, 100);
  t.ok(checkSemaphores(h.ops, DRIFT).ok);
});

t.test('one token held by two holders fails', async (t) => {
  const h = new HistoryBuilder();
  acquire(h, 'a', 20, 0);
  h.add(
    'a',
    'sem.release',
    { name: 'S', holder: 'a', fencingToken: 20 },
    50,
    60,
    ok({ name: 'S', released: true }),
  );
  acquire(h, 'b', 20, 30);
  t.ok(
    checkSemaphores(h.ops, DRIFT).violations.some((v) => v.property === 'semaphore-token-shared'),
  );
});

t.test('a write fenced by a released permit and accepted fails; refused passes', async (t) => {
  const h = new HistoryBuilder();
  acquire(h, 'a', 20, 0);
  h.add(
    'a',
    'sem.release',
    { name: 'S', holder: 'a', fencingToken: 20 },
    50,
    60,
    ok({ name: 'S', released: true }),
  );
  const args = { key: 'S-data', value: 1, fence: { semaphore: 'S', fencingToken: 20 } };
  h.add('a', 'prim.write', args, 100, 110, fail('stale_token'));
  t.ok(checkSemaphores(h.ops, DRIFT).ok);
  h.add('a', 'prim.write', args, 120, 130, ok({ key: 'S-data', revision: 99 }));
  t.equal(checkSemaphores(h.ops, DRIFT).violations[0]?.property, 'permit-fence-after-end');
});

t.test('session-bound permits live as long as their session is certainly live', async (t) => {
  const h = new HistoryBuilder();
  h.add('s', 'session.create', { ttlMs: TTL }, 0, 10, ok({ sessionId: 's1', ttlMs: TTL }));
  const bound = (holder: string, token: number, at: number): void => {
    h.add(
      's',
      'sem.acquire',
      { name: 'S', holder, limit: 2, session: 's1' },
      at,
      at + 10,
      ok({ name: 'S', holder, fencingToken: token, limit: 2, ttlMs: null, session: 's1' }),
    );
  };
  bound('x', 1, 20);
  bound('y', 2, 40);
  h.add(
    's',
    'session.keepalive',
    { sessionId: 's1' },
    2000,
    2010,
    ok({ sessionId: 's1', ttlMs: TTL }),
  );
  acquire(h, 'z', 3, 4000); // the session is certainly live until 2000 + 2970: three permits at 4020
  t.equal(checkSemaphores(h.ops, DRIFT).violations[0]?.property, 'semaphore-over-limit');
  const h2 = new HistoryBuilder();
  h2.ops.push(...h.ops.filter((o) => o.kind !== 'session.keepalive'));
  t.ok(checkSemaphores(h2.ops, DRIFT).ok, 'without the keepalive the session may have expired');
});

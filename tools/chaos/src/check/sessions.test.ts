// Proves the sessions checker fails when a grant bound to a session is still live after the session
// certainly ended (a renew or fenced write accepted, a keepalive accepted), when a watch shows a
// session's grants ending in different revisions or a grant bound to it after its end — and passes
// on a correct history, including an end of unknown outcome.
import t from 'tap';
import { checkSessions } from './sessions.js';
import { HistoryBuilder, fail, ok, unknown } from './testing.js';
import type { JsonObject } from '../types.js';

const DRIFT = 0.01;

function sessionWithPermit(h: HistoryBuilder): void {
  h.add('s', 'session.create', { ttlMs: 3000 }, 0, 10, ok({ sessionId: 's1', ttlMs: 3000 }));
  h.add(
    's',
    'sem.acquire',
    { name: 'S', holder: 'x', limit: 2, session: 's1' },
    20,
    30,
    ok({ name: 'S', holder: 'x', fencingToken: 5, limit: 2, ttlMs: null, session: 's1' }),
  );
}
const renew = { name: 'S', holder: 'x', fencingToken: 5 };

t.test('a renew refused and a fenced write refused after the end pass', async (t) => {
  const h = new HistoryBuilder();
  sessionWithPermit(h);
  h.add('s', 'session.end', { sessionId: 's1' }, 100, 110, ok({ sessionId: 's1', ended: true }));
  h.add('s', 'sem.renew', renew, 120, 130, fail('not_holder'));
  h.add(
    's',
    'prim.write',
    { key: 'S-data', value: 1, fence: { semaphore: 'S', fencingToken: 5 } },
    140,
    150,
    fail('stale_token'),
  );
  h.add('s', 'session.keepalive', { sessionId: 's1' }, 160, 170, fail('not_found', 404));
  const r = checkSessions(h.ops, DRIFT);
  t.ok(r.ok, JSON.stringify(r.violations));
});

t.test('a renew of a bound grant accepted after the session ended fails', async (t) => {
  const h = new HistoryBuilder();
  sessionWithPermit(h);
  h.add('s', 'session.end', { sessionId: 's1' }, 100, 110, ok({ sessionId: 's1', ended: true }));
  h.add('s', 'sem.renew', renew, 120, 130, ok({ ...renew, limit: 2, ttlMs: null, session: 's1' }));
  t.equal(checkSessions(h.ops, DRIFT).violations[0]?.property, 'session-grant-outlived');
});

t.test(
  'a fenced write accepted after a 404 keepalive fails; after an unknown end it passes',
  async (t) => {
    const h = new HistoryBuilder();
    sessionWithPermit(h);
    h.add('s', 'session.end', { sessionId: 's1' }, 100, 2100, unknown());
    const w = { key: 'S-data', value: 1, fence: { semaphore: 'S', fencingToken: 5 } };
    h.add('s', 'prim.write', w, 2200, 2210, ok({ key: 'S-data', revision: 9 }));
    t.ok(checkSessions(h.ops, DRIFT).ok, 'the unknown DELETE proves nothing');
    h.add('s', 'session.keepalive', { sessionId: 's1' }, 2300, 2310, fail('not_found', 404));
    h.add('s', 'prim.write', w, 2400, 2410, ok({ key: 'S-data', revision: 10 }));
    t.equal(checkSessions(h.ops, DRIFT).violations[0]?.property, 'session-grant-outlived');
  },
);

t.test('a keepalive accepted after the session ended fails', async (t) => {
  const h = new HistoryBuilder();
  sessionWithPermit(h);
  h.add('s', 'session.get', { sessionId: 's1' }, 100, 110, fail('not_found', 404));
  h.add(
    's',
    'session.keepalive',
    { sessionId: 's1' },
    200,
    210,
    ok({ sessionId: 's1', ttlMs: 3000 }),
  );
  t.equal(checkSessions(h.ops, DRIFT).violations[0]?.property, 'session-revived');
});

function watched(events: JsonObject[]): HistoryBuilder {
  const h = new HistoryBuilder();
  h.add(
    'w',
    'watch.open',
    { watcher: 'w', stream: 1, fromRevision: 1, prefix: '' },
    0,
    0,
    ok(null),
  );
  events.forEach((e, i) =>
    h.add('w', 'watch.event', { watcher: 'w', stream: 1, seq: i + 1 }, i + 1, i + 1, ok(e)),
  );
  return h;
}
const granted = (revision: number, name: string, token: number): JsonObject => ({
  revision,
  kind: 'lease',
  name,
  type: 'granted',
  holder: `h${token}`,
  fencingToken: token,
  session: 's1',
});
const ended = (revision: number, name: string, token: number): JsonObject => ({
  revision,
  kind: 'lease',
  name,
  type: 'session_ended',
  holder: `h${token}`,
  fencingToken: token,
  endReason: 'session_ended',
});

t.test('a session whose grants all end in one revision passes', async (t) => {
  const h = watched([granted(2, 'a', 2), granted(3, 'b', 3), ended(9, 'a', 2), ended(9, 'b', 3)]);
  t.ok(checkSessions(h.ops, DRIFT).ok);
});

t.test('grants of one session ending in two revisions fail', async (t) => {
  const h = watched([granted(2, 'a', 2), granted(3, 'b', 3), ended(9, 'a', 2), ended(10, 'b', 3)]);
  t.equal(checkSessions(h.ops, DRIFT).violations[0]?.property, 'session-grants-split');
});

t.test('a grant bound to a session after its end fails', async (t) => {
  const h = watched([granted(2, 'a', 2), ended(9, 'a', 2), granted(12, 'b', 12)]);
  t.equal(checkSessions(h.ops, DRIFT).violations[0]?.property, 'session-grant-after-end');
});

t.test(
  'a grant bound to a session after an end seen only through a grant of it fails',
  async (t) => {
    const h = watched([{ ...ended(9, 'a', 2), session: 's1' }, granted(12, 'b', 12)]);
    t.equal(checkSessions(h.ops, DRIFT).violations[0]?.property, 'session-grant-after-end');
  },
);

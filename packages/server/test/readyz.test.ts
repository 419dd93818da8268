// Proves readiness (docs/architecture.md, Readiness): a node answers /readyz 200 once it is a member,
// knows a leader, and has applied the commit index it heard `--ready-lag-ms` ago (RaftStatus
// caughtUpIndex) — not the newest it heard, which a follower fsyncing the entries that brought a
// commit notice has not applied yet; an emptied or lagging node stays behind its target.
import t from 'tap';
import { harness, send } from './fixtures/harness.js';

t.test('a follower behind its target is not ready until it applies it', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  await send(h.app, 'PUT', '/v1/kv/a', { value: 1 });
  h.raft.setRole('follower', 'n2');
  h.raft.leaderCommitIndex = 40; // the leader committed far more than this node holds
  h.raft.caughtUpIndex = 40; // ... and said so a lag ago, or this node was emptied
  const lagging = await h.app.inject({ method: 'GET', url: '/readyz' });
  t.equal(lagging.statusCode, 503);
  t.equal(lagging.json().error.code, 'no_leader');
  t.match(lagging.json().error, { appliedIndex: 1, commitIndex: 40 });
  t.equal(lagging.headers['retry-after'], '1');

  h.raft.leaderCommitIndex = null; // caught up: applied everything the leader reported
  h.raft.caughtUpIndex = null;
  const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
  t.equal(ready.statusCode, 200);
  t.match(ready.json(), { status: 'ready', leader: 'n2', appliedIndex: 1, commitIndex: 1 });
});

t.test('a commit heard with entries still being fsynced leaves the follower ready', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  await send(h.app, 'PUT', '/v1/kv/a', { value: 1 });
  h.raft.setRole('follower', 'n2');
  // With the commit-notice delay the notice of index 2 rides on the append of index 3: heard, not
  // yet applied. The old rule (applied ≥ the newest commit heard) answered 503 here.
  h.raft.leaderCommitIndex = 2;
  h.raft.caughtUpIndex = 1; // what the leader announced a lag ago
  const r = await h.app.inject({ method: 'GET', url: '/readyz' });
  t.equal(r.statusCode, 200);
  t.match(r.json(), { status: 'ready', appliedIndex: 1 });
});

t.test('no leader, or outside the membership: not ready', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  h.raft.member = false; // a joining node not added yet
  const outside = await h.app.inject({ method: 'GET', url: '/readyz' });
  t.equal(outside.statusCode, 503);
  t.match(outside.json().error.message, /not a member/);
  h.raft.member = true;
  h.raft.setRole('follower', null);
  const leaderless = await h.app.inject({ method: 'GET', url: '/readyz' });
  t.equal(leaderless.statusCode, 503);
  t.match(leaderless.json().error.message, /no leader/);
  h.raft.setRole('follower', 'n2');
  h.raft.leaderHeardAgoMs = 8000; // paused 8 s (SIGSTOP): it still knows n2, which it has not heard
  const stale = await h.app.inject({ method: 'GET', url: '/readyz' });
  t.equal(stale.statusCode, 503, 'a leader not heard within an election timeout');
  t.match(stale.json().error.message, /leader n2 not heard from within the election timeout/);
  h.raft.leaderHeardAgoMs = 10;
  t.equal((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, 'heard: ready');
});

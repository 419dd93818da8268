// Proves readiness (docs/architecture.md, Readiness): a node answers /readyz 200 only once it has applied what its
// leader last told it was committed — an emptied or lagging node is not ready at its own commit index.
import t from 'tap';
import { harness, send } from './fixtures/harness.js';

t.test(
  'a follower behind what its leader committed is not ready until it applies it',
  async (t) => {
    const h = await harness();
    t.teardown(h.close);
    await send(h.app, 'PUT', '/v1/kv/a', { value: 1 });
    h.raft.setRole('follower', 'n2');
    h.raft.leaderCommitIndex = 40; // the leader committed far more than this node holds
    const lagging = await h.app.inject({ method: 'GET', url: '/readyz' });
    t.equal(lagging.statusCode, 503);
    t.equal(lagging.json().error.code, 'no_leader');
    t.match(lagging.json().error, { appliedIndex: 1, commitIndex: 40 });
    t.equal(lagging.headers['retry-after'], '1');

    h.raft.leaderCommitIndex = null; // caught up: applied everything the leader reported
    const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
    t.equal(ready.statusCode, 200);
    t.match(ready.json(), { status: 'ready', leader: 'n2', appliedIndex: 1, commitIndex: 1 });
  },
);

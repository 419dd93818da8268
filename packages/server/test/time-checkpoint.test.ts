// Proves the cluster-time checkpoint (docs/architecture.md "Durable cluster time"): while a grant is
// live the leader keeps the log's newest cluster time within the checkpoint interval of its own, with
// `time.advance` entries; with nothing live it proposes nothing.
import t from 'tap';
import { CLUSTER_TIME_CHECKPOINT_MS } from '../src/time-advancer.js';
import { harness, send } from './fixtures/harness.js';

/** Resolves once `cond()` holds; polls (the advancer runs on real timers), generous deadline. */
async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

t.test('a live grant keeps the log stamped within the checkpoint interval', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  let clusterMs = 1000;
  h.raft.now = () => clusterMs;
  const a = await send(h.app, 'POST', '/v1/leases/cp/acquire', { holder: 'A', ttlMs: 600_000 });
  t.equal(a.statusCode, 200);
  t.equal(h.coord.lastAppliedTimeMs(), 1000);
  const granted = h.raft.proposals;

  clusterMs = 1000 + CLUSTER_TIME_CHECKPOINT_MS + 100;
  await until(() => h.raft.proposals > granted, 'a checkpoint');
  t.equal(h.raft.proposals, granted + 1, 'one checkpoint entry');
  t.equal(h.coord.lastAppliedTimeMs(), clusterMs, 'stamped with the leader’s cluster time');
  t.equal(h.coord.getLease('cp', clusterMs)?.holder, 'A', 'the lease is untouched');

  clusterMs += 10 * CLUSTER_TIME_CHECKPOINT_MS;
  await until(() => h.coord.lastAppliedTimeMs() === clusterMs, 'the next checkpoint');

  const r = await send(h.app, 'POST', '/v1/leases/cp/release', {
    holder: 'A',
    fencingToken: a.json().fencingToken,
  });
  t.equal(r.statusCode, 200);
  t.equal(h.coord.nextDueMs(), null, 'nothing live');
  const released = h.raft.proposals;
  clusterMs += 100 * CLUSTER_TIME_CHECKPOINT_MS;
  // Absence of traffic can only be shown by letting time pass: a few checkpoint periods of real time.
  await new Promise((r) => setTimeout(r, 3 * CLUSTER_TIME_CHECKPOINT_MS));
  t.equal(h.raft.proposals, released, 'no checkpoint while nothing is live');
});

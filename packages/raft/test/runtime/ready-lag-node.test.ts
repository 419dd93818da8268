// Proves the readiness target of real nodes with the runtime's commit-notice delay
// (status().caughtUpIndex, docs/architecture.md, Readiness): a follower whose disk is busy with the
// entries that brought it a commit notice has not applied that commit yet — the old rule (applied ≥
// the newest commit heard, leaderCommitIndex) calls it behind, the lagged target does not; a
// follower stuck behind for longer than the lag, and an emptied one, are behind.
import t from 'tap';
import { RaftNode } from '../../src/raft-node.js';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';
import { ListMachine, until } from './fixtures/list-machine.js';
import { memoryNodeOptions } from './fixtures/memory-node.js';
import { StallingStorage } from './fixtures/stalling-storage.js';

const ids = ['n1', 'n2', 'n3'];
const encode = (s: string) => new TextEncoder().encode(s);

async function cluster(t: Tap.Test, readyLagMs: number, members = ids) {
  const network = new MemoryNetwork();
  const storages = new Map(ids.map((id) => [id, new StallingStorage()]));
  const nodes = new Map<string, RaftNode<number>>();
  const open = async (id: string) => {
    const node = await RaftNode.open(
      memoryNodeOptions(
        id,
        ids,
        { network, storage: storages.get(id)!, stateMachine: new ListMachine() },
        { readyLagMs },
      ),
    );
    nodes.set(id, node);
    return node;
  };
  for (const id of members) await open(id);
  t.teardown(async () => {
    for (const s of storages.values()) s.resume();
    for (const n of nodes.values()) await n.stop();
  });
  const leader = await until(
    () => [...nodes.values()].find((n) => n.status().role === 'leader'),
    'a leader',
  );
  return { nodes, storages, leader, open };
}

t.test(
  'a follower fsyncing the entries that brought a commit is caught up, and stays so',
  async (t) => {
    const { nodes, storages, leader } = await cluster(t, 600_000);
    await leader.propose(encode('a'));
    const follower = [...nodes.values()].find((n) => n !== leader)!;
    await until(() => follower.status().appliedIndex === leader.status().commitIndex, 'caught up');
    const applied = follower.status().appliedIndex;
    t.equal(leader.status().leaderHeardAgoMs, 0, 'a leader hears itself');
    t.not(follower.status().leaderHeardAgoMs, null, 'a follower heard its leader');

    storages.get(follower.id)!.stall();
    const b = await leader.propose(encode('b')); // commits with the leader and the other follower
    void leader.propose(encode('c')).catch(() => undefined); // may carry b's commit notice
    await until(() => follower.status().leaderCommitIndex >= b.index, 'the commit of b heard');
    const s = follower.status();
    t.equal(s.appliedIndex, applied, 'b is not applied while the disk is busy');
    t.ok(s.appliedIndex < s.leaderCommitIndex, 'the old rule calls it behind');
    t.ok(s.appliedIndex >= s.caughtUpIndex, `caught up with ${s.caughtUpIndex}, heard a lag ago`);

    storages.get(follower.id)!.resume();
    await until(() => follower.status().appliedIndex >= b.index, 'b applied');
    t.ok(follower.status().appliedIndex >= follower.status().caughtUpIndex);
  },
);

t.test('a follower stuck behind for longer than the lag is behind', async (t) => {
  const { nodes, storages, leader } = await cluster(t, 200);
  await leader.propose(encode('a'));
  const follower = [...nodes.values()].find((n) => n !== leader)!;
  await until(() => follower.status().appliedIndex === leader.status().commitIndex, 'caught up');
  storages.get(follower.id)!.stall();
  const b = await leader.propose(encode('b'));
  await until(() => follower.status().caughtUpIndex >= b.index, 'b heard a lag ago');
  t.ok(follower.status().appliedIndex < b.index, 'not applied: behind its target');
});

t.test('an emptied node is behind what it hears at once, whatever the lag', async (t) => {
  const { storages, leader, open } = await cluster(t, 600_000, ['n1', 'n2']);
  for (let k = 0; k < 5; k++) await leader.propose(encode(`w${k}`));
  const commit = leader.status().commitIndex;
  storages.get('n3')!.stall(); // it cannot take what the leader sends
  const empty = await open('n3');
  await until(() => empty.status().caughtUpIndex >= commit, 'the leader’s commit heard');
  t.equal(empty.status().appliedIndex, 0);
  t.ok(empty.status().leaderId !== null, 'it knows a leader');
});

// Proves the commit index a node shows is its durable one (docs/architecture.md): while a follower's
// disk write hangs it learns its leader committed more, but status().commitIndex stays at what its
// storage holds — a crash at that moment could not make the shown value go down.
import t from 'tap';
import { RaftNode } from '../../src/raft-node.js';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';
import { ListMachine, until } from './fixtures/list-machine.js';
import { memoryNodeOptions } from './fixtures/memory-node.js';
import { StallingStorage } from './fixtures/stalling-storage.js';

const ids = ['n1', 'n2', 'n3'];
const encode = (s: string) => new TextEncoder().encode(s);

t.test('a stalled follower never shows a commit index its disk does not hold', async (t) => {
  const network = new MemoryNetwork();
  const storages = new Map(ids.map((id) => [id, new StallingStorage()]));
  const nodes = new Map<string, RaftNode<number>>();
  for (const id of ids) {
    const node = await RaftNode.open(
      memoryNodeOptions(id, ids, {
        network,
        storage: storages.get(id)!,
        stateMachine: new ListMachine(),
      }),
    );
    nodes.set(id, node);
  }
  t.teardown(async () => {
    for (const s of storages.values()) s.resume();
    for (const n of nodes.values()) await n.stop();
  });
  const leader = await until(
    () => [...nodes.values()].find((n) => n.status().role === 'leader'),
    'a leader',
  );
  await leader.propose(encode('a'));
  const follower = [...nodes.values()].find((n) => n !== leader)!;
  const disk = storages.get(follower.id)!;
  await until(() => follower.status().appliedIndex === leader.status().commitIndex, 'caught up');
  const before = (await disk.readHardState()).commitIndex;

  disk.stall();
  const b = await leader.propose(encode('b')); // commits with the leader and the other follower
  await until(() => follower.status().leaderCommitIndex >= b.index, 'the leader’s commit heard');
  const shown = follower.status();
  const onDisk = (await disk.readHardState()).commitIndex;
  t.equal(onDisk, before, 'the stalled disk holds the old commit index');
  t.ok(shown.commitIndex <= onDisk, `shown ${shown.commitIndex} ≤ on disk ${onDisk}`);
  t.ok(shown.appliedIndex < b.index, 'nothing past the disk is applied');

  disk.resume();
  await until(() => follower.status().commitIndex >= b.index, 'the commit made durable');
  t.ok((await disk.readHardState()).commitIndex >= follower.status().commitIndex);
});

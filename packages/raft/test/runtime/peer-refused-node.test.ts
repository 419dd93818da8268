// Proves RaftNode hands the transport's "peer refused a connection" hint to its core
// (RaftCore.peerRefused): when the leader's process is gone, its followers forget it at once
// instead of after their election timeout (10 minutes here, so only the hint can do it).
import t from 'tap';
import { RaftNode } from '../../src/raft-node.js';
import { MemoryRaftStorage } from '../../src/storage/raft-storage.js';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';
import { ListMachine, until } from './fixtures/list-machine.js';
import { memoryNodeOptions } from './fixtures/memory-node.js';

const ids = ['n1', 'n2', 'n3'];
/** n1 campaigns after 150–300 ms; the others would wait 10 minutes without hearing a leader. */
const electionTimeoutMsOf = (id: string) => (id === 'n1' ? 150 : 600_000);

t.test("a leader's refusal makes its followers forget it at once", async (t) => {
  const network = new MemoryNetwork();
  const nodes = new Map<string, RaftNode<number>>();
  for (const id of ids) {
    const parts = { network, storage: new MemoryRaftStorage(), stateMachine: new ListMachine() };
    const options = memoryNodeOptions(id, ids, parts, {
      electionTimeoutMs: electionTimeoutMsOf(id),
    });
    nodes.set(id, await RaftNode.open(options));
  }
  t.teardown(async () => {
    for (const node of nodes.values()) await node.stop();
  });
  const followers = [nodes.get('n2')!, nodes.get('n3')!];
  await until(() => followers.every((f) => f.status().leaderId === 'n1'), 'n1 leads');
  await nodes.get('n1')!.stop();
  network.refuseFrom('n1');
  await until(() => followers.every((f) => f.status().leaderId === null), 'n1 forgotten');
  t.pass('both followers forgot the refused leader');
});

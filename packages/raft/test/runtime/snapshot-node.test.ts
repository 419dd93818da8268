// Proves RaftNode snapshots and compacts its log every snapshotEntries applied entries (Raft §7):
// a follower isolated while the others compact far past it catches up through InstallSnapshot with
// an identical state machine, and a node restarts from its snapshot plus the log after it (level
// storage on disk included) without replaying compacted entries.
import t from 'tap';
import { RaftNode } from '../../src/raft-node.js';
import type { RaftNodeOptions } from '../../src/raft-node-options.js';
import { MemoryRaftStorage } from '../../src/storage/raft-storage.js';
import { LevelRaftStorage } from '../../src/storage/level-storage.js';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';
import { ListMachine, until } from './fixtures/list-machine.js';

const ids = ['n1', 'n2', 'n3'];
const encode = (s: string) => new TextEncoder().encode(s);

interface Member {
  node: RaftNode<number>;
  sm: ListMachine;
  storage: MemoryRaftStorage;
}

function options(
  id: string,
  voters: readonly string[],
  network: MemoryNetwork,
  sm: ListMachine,
  extra: Partial<RaftNodeOptions<number>>,
): RaftNodeOptions<number> {
  return {
    id,
    clusterId: 'test',
    peers: voters.map((v) => ({ id: v, raftAddress: 'in-memory' })),
    stateMachine: sm,
    transport: network.transport(id),
    tickMs: 5,
    heartbeatMs: 25,
    electionTimeoutMs: 150,
    randomSeed: voters.indexOf(id) + 1,
    snapshotEntries: 20,
    snapshotKeepEntries: 5,
    entriesPerMessageMax: 8,
    ...extra,
  };
}

t.test(
  'an isolated follower catches up via InstallSnapshot after the others compact past it',
  async (t) => {
    const network = new MemoryNetwork();
    const members = new Map<string, Member>();
    for (const id of ids) {
      const storage = new MemoryRaftStorage();
      const sm = new ListMachine();
      members.set(id, {
        node: await RaftNode.open(options(id, ids, network, sm, { storage })),
        sm,
        storage,
      });
    }
    t.teardown(async () => {
      for (const m of members.values()) await m.node.stop();
    });
    const leader = await until(
      () => [...members.values()].find((m) => m.node.status().role === 'leader'),
      'a leader',
    );
    const lagging = [...members.values()].find((m) => m !== leader)!;
    await leader.node.propose(encode('first'));
    await until(() => lagging.sm.values.length === 1, 'lagging node applied the first entry');
    network.isolate(lagging.node.id);
    for (let i = 0; i < 150; i++) await leader.node.propose(encode(`v${i}`));
    const leaderSnapshot = leader.storage.newestSnapshot();
    t.ok(
      leaderSnapshot !== null && leaderSnapshot.meta.index >= 140,
      'the leader compacted far past the follower',
    );
    t.ok(
      (await leader.storage.readEntries()).length <= 20 + 5 + 8,
      'the leader log stays bounded by snapshotEntries + snapshotKeepEntries (+ one batch)',
    );
    network.heal();
    await until(() => lagging.sm.values.length === 151, 'the lagging node caught up');
    t.ok(lagging.sm.restores >= 1, 'caught up by restoring a snapshot, not by replaying the log');
    t.same(lagging.sm.values, leader.sm.values, 'state machines match');
    t.ok(lagging.storage.newestSnapshot() !== null, 'the installed snapshot was persisted');
    await leader.node.propose(encode('after'));
    await until(
      () => lagging.sm.values.at(-1) === 'after',
      'replication continues after the install',
    );
    for (const m of members.values()) m.node.checkInvariants();
  },
);

t.test('a node restarts from its level snapshot plus the log after it', async (t) => {
  const dataDir = t.testdir();
  const network = new MemoryNetwork();
  const open = async (sm: ListMachine) =>
    RaftNode.open(
      options('n1', ['n1'], network, sm, { dataDir, snapshotEntries: 10, snapshotKeepEntries: 3 }),
    );
  const sm1 = new ListMachine();
  const node1 = await open(sm1);
  await until(() => node1.status().role === 'leader', 'single node leads');
  for (let i = 0; i < 35; i++) await node1.propose(encode(`v${i}`));
  const taken = node1.status();
  t.ok(taken.snapshotIndex >= 30 && taken.snapshotBytes > 0, 'status shows the snapshot taken');
  await node1.stop();

  const inspect = await LevelRaftStorage.open({ dataDir, clusterId: 'test', nodeId: 'n1' });
  const initial = await inspect.recover();
  await inspect.close();
  t.ok(initial.snapshot !== null && initial.snapshot.index >= 30, 'a snapshot was taken');
  t.ok(initial.entries.length < 10, 'the log after it is short');

  const sm2 = new ListMachine();
  const node2 = await open(sm2);
  t.teardown(() => node2.stop());
  t.equal(sm2.restores, 1, 'restored from the snapshot');
  t.match(
    node2.status(),
    { snapshotIndex: initial.snapshot!.index, snapshotBytes: taken.snapshotBytes },
    'status shows the recovered snapshot from the start',
  );
  t.ok(sm2.applies < 10, 'replayed only the entries after the snapshot');
  t.same(sm2.values, sm1.values, 'same state as before the restart');
  await until(() => node2.status().role === 'leader', 'leads again');
  await node2.propose(encode('after-restart'));
  t.same(sm2.values.slice(-2), ['v34', 'after-restart']);
  node2.checkInvariants();
});

t.test('snapshot options are validated', async (t) => {
  const network = new MemoryNetwork();
  const base = options('n1', ['n1'], network, new ListMachine(), {
    storage: new MemoryRaftStorage(),
  });
  await t.rejects(RaftNode.open({ ...base, snapshotEntries: 0 }), { code: 'invalid_argument' });
  await t.rejects(RaftNode.open({ ...base, snapshotKeepEntries: -1 }), {
    code: 'invalid_argument',
  });
});

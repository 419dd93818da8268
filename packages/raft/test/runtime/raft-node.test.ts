// Proves RaftNode drives the core end to end in one process (in-memory transport and storage):
// it elects a leader, replicates and applies proposals in the same order everywhere, answers
// followers with NotLeaderError, serves read barriers, transfers leadership, times out without a
// quorum, replays its log on restart, and validates its options.
import t from 'tap';
import { RaftNode } from '../../src/raft-node.js';
import type { RaftNodeOptions } from '../../src/raft-node-options.js';
import { MemoryRaftStorage } from '../../src/storage/raft-storage.js';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';
import { ListMachine, until } from './fixtures/list-machine.js';
import {
  InvalidArgumentError,
  NotLeaderError,
  StoppedError,
  StorageIdentityError,
  TimeoutError,
} from '../../src/errors.js';
import { LevelRaftStorage } from '../../src/storage/level-storage.js';

const deadlineMs = 20_000;
const ids = ['n1', 'n2', 'n3'];
const peers = ids.map((id) => ({ id, raftAddress: 'in-memory' }));
const encode = (s: string) => new TextEncoder().encode(s);

interface Member {
  node: RaftNode<number>;
  sm: ListMachine;
  storage: MemoryRaftStorage;
}

function options(
  id: string,
  network: MemoryNetwork,
  storage: MemoryRaftStorage,
  sm: ListMachine,
): RaftNodeOptions<number> {
  return {
    id,
    clusterId: 'test',
    peers,
    stateMachine: sm,
    storage,
    transport: network.transport(id),
    tickMs: 5,
    heartbeatMs: 25,
    electionTimeoutMs: 150,
    randomSeed: ids.indexOf(id) + 1,
  };
}

async function cluster(t: Tap): Promise<{ members: Map<string, Member>; network: MemoryNetwork }> {
  const network = new MemoryNetwork();
  const members = new Map<string, Member>();
  for (const id of ids) {
    const storage = new MemoryRaftStorage();
    const sm = new ListMachine();
    members.set(id, { node: await RaftNode.open(options(id, network, storage, sm)), sm, storage });
  }
  t.teardown(async () => {
    for (const m of members.values()) await m.node.stop();
  });
  return { members, network };
}
type Tap = typeof t;

function leaderOf(members: Map<string, Member>): Member | undefined {
  const leaders = [...members.values()].filter((m) => m.node.status().role === 'leader');
  const highest = leaders.sort((a, b) => b.node.status().term - a.node.status().term)[0];
  return highest;
}

t.test('elects one leader, replicates and applies in the same order everywhere', async (t) => {
  const { members } = await cluster(t);
  const leader = await until(() => leaderOf(members), 'a leader');
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) => leader.node.propose(encode(`v${i}`))),
  );
  t.same(
    results.map((r) => r.result),
    Array.from({ length: 50 }, (_, i) => i + 1),
    'each proposal resolves with the state machine result',
  );
  t.ok(
    results.every((r, i) => i === 0 || r.index > results[i - 1]!.index),
    'indices increase',
  );
  await until(() => [...members.values()].every((m) => m.sm.values.length === 50), 'all applied');
  for (const m of members.values())
    t.same(m.sm.values, leader.sm.values, `${m.node.id} applied the same sequence`);
  for (const m of members.values()) m.node.checkInvariants();
  const status = leader.node.status();
  t.equal(status.leaderId, leader.node.id);
  t.ok(status.appliedIndex >= results[49]!.index);
  t.equal(status.members.length, 3);
  const follower = status.members.find((m) => m.id !== leader.node.id)!;
  t.equal(follower.role, 'follower');
  t.type(follower.matchIndex, 'number');
});

t.test(
  'followers refuse proposals and read barriers with NotLeaderError naming the leader',
  async (t) => {
    const { members } = await cluster(t);
    const leader = await until(() => leaderOf(members), 'a leader');
    const follower = [...members.values()].find((m) => m !== leader)!;
    await until(
      () => follower.node.status().leaderId === leader.node.id,
      'follower knows the leader',
    );
    await t.rejects(follower.node.propose(encode('x')), new NotLeaderError(leader.node.id));
    await t.rejects(follower.node.readBarrier(), {
      code: 'not_leader',
      leaderHint: leader.node.id,
    });
    const applied = await leader.node.propose(encode('y'));
    const readIndex = await leader.node.readBarrier();
    t.ok(readIndex >= applied.index, 'read index covers the acknowledged write');
    t.ok(
      leader.node.status().appliedIndex >= readIndex,
      'applied ≥ read index when the barrier resolves',
    );
  },
);

t.test('leadership transfer hands over to the chosen node', async (t) => {
  const { members } = await cluster(t);
  const leader = await until(() => leaderOf(members), 'a leader');
  await leader.node.propose(encode('before'));
  const target = ids.find((id) => id !== leader.node.id)!;
  const changes: (string | null)[] = [];
  leader.node.onLeaderChange((leaderId) => changes.push(leaderId));
  await leader.node.transferLeadership(target);
  await until(() => members.get(target)!.node.status().role === 'leader', 'target leads');
  t.ok(changes.includes(target), 'onLeaderChange reported the new leader');
  await t.rejects(leader.node.transferLeadership('nobody'), NotLeaderError);
  await t.rejects(members.get(target)!.node.transferLeadership('nobody'), InvalidArgumentError);
});

t.test('a leader cut off from the quorum times out proposals (outcome unknown)', async (t) => {
  const { members, network } = await cluster(t);
  const leader = await until(() => leaderOf(members), 'a leader');
  await leader.node.propose(encode('ok'));
  network.isolate(leader.node.id);
  await t.rejects(leader.node.propose(encode('lost?'), { timeoutMs: 100 }), TimeoutError);
  const controller = new AbortController();
  const aborted = leader.node.propose(encode('aborted'), { signal: controller.signal });
  controller.abort();
  await t.rejects(aborted, { code: 'timeout' });
  network.heal();
  const next = await until(() => leaderOf(members), 'a leader after heal');
  await next.node.propose(encode('after'));
});

t.test('stopping a leader with a proposal pending rejects it as an unknown outcome', async (t) => {
  const { members, network } = await cluster(t);
  const leader = await until(() => leaderOf(members), 'a leader');
  network.isolate(leader.node.id);
  const pending = leader.node.propose(encode('maybe'), { timeoutMs: 60_000 });
  await leader.node.stop();
  // The entry is in the stopped leader's log and could reach a majority through it: not refused.
  await t.rejects(pending, { code: 'timeout', message: /outcome unknown/ });
  await t.rejects(
    leader.node.propose(encode('after stop')),
    StoppedError,
    'nothing pending: stopped',
  );
});

t.test(
  'a deposed leader settles its proposal by what lands at its index: another term → NotLeaderError',
  async (t) => {
    const { members, network } = await cluster(t);
    const leader = await until(() => leaderOf(members), 'a leader');
    await leader.node.propose(encode('committed'));
    network.isolate(leader.node.id);
    const orphan = leader.node.propose(encode('orphan'), { timeoutMs: deadlineMs });
    const others = [...members.values()].filter((m) => m !== leader);
    const next = await until(
      () => others.find((m) => m.node.status().role === 'leader'),
      'a new leader',
    );
    await next.node.propose(encode('new-term'));
    network.heal();
    await t.rejects(orphan, { code: 'not_leader' }, 'not applied, definitively');
    await until(() => leader.sm.values.length === 2, 'old leader caught up');
    t.same(leader.sm.values, ['committed', 'new-term']);
  },
);

t.test('opening a data directory of another node fails with StorageIdentityError', async (t) => {
  const dataDir = t.testdir();
  const storage = await LevelRaftStorage.open({ dataDir, clusterId: 'test', nodeId: 'n2' });
  await storage.close();
  const {
    storage: _unused,
    transport: _t,
    ...rest
  } = options('n1', new MemoryNetwork(), new MemoryRaftStorage(), new ListMachine());
  await t.rejects(RaftNode.open({ ...rest, dataDir }), StorageIdentityError);
});

t.test('a restarted node replays its log into a fresh state machine and catches up', async (t) => {
  const { members, network } = await cluster(t);
  const leader = await until(() => leaderOf(members), 'a leader');
  for (let i = 0; i < 20; i++) await leader.node.propose(encode(`a${i}`));
  const victim = [...members.values()].find((m) => m !== leader)!;
  await until(() => victim.sm.values.length === 20, 'victim applied');
  await victim.node.stop();
  await victim.node.stop(); // idempotent
  await t.rejects(victim.node.propose(encode('z')), StoppedError);
  for (let i = 20; i < 30; i++) await leader.node.propose(encode(`a${i}`));
  victim.storage.reopen();
  const sm = new ListMachine();
  const node = await RaftNode.open(options(victim.node.id, network, victim.storage, sm));
  members.set(victim.node.id, { node, sm, storage: victim.storage });
  t.ok(sm.values.length >= 1, 'replayed committed entries on open');
  await until(() => sm.values.length === 30, 'caught up');
  t.same(sm.values, leader.sm.values);
});

t.test('options are validated at start, naming the field', async (t) => {
  const base = options('n1', new MemoryNetwork(), new MemoryRaftStorage(), new ListMachine());
  await t.rejects(RaftNode.open({ ...base, heartbeatMs: 200, electionTimeoutMs: 150 }), {
    code: 'invalid_argument',
    field: 'heartbeatMs',
  });
  await t.rejects(RaftNode.open({ ...base, id: 'n9' }), { field: 'peers' });
  await t.rejects(RaftNode.open({ ...base, tickMs: 0 }), { field: 'tickMs' });
});

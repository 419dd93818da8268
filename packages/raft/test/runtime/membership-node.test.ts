// Proves RaftNode's membership runtime (dissertation ch. 4; docs/operations.md) in one process: a
// joining node is added as a learner, catches up and is promoted; changes are refused one at a time
// with stable codes; the membership (with its address book) survives a restart and wins over a
// disagreeing peer list; the data of a removed member refuses to open; a leader asked to remove
// itself hands leadership over first; a member removed and added again at a new address is found
// there by every node's address book (memberAddress), a restart with the old peer list included; a
// wiped node rejoining under its id is not removed by the log of its earlier self.
import t from 'tap';
import { RaftNode } from '../../src/raft-node.js';
import type { RaftNodeOptions } from '../../src/raft-node-options.js';
import { MemoryRaftStorage } from '../../src/storage/raft-storage.js';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';
import { ListMachine, until } from './fixtures/list-machine.js';
import { MembershipChangeError, NotLeaderError, RemovedMemberError } from '../../src/errors.js';
import type { PeerInfo } from '../../src/api.js';
import { NOOP_LOGGER, type Logger, type LogFields } from '../../src/logger.js';

const encode = (s: string) => new TextEncoder().encode(s);
const addr = (id: string): PeerInfo => ({
  id,
  raftAddress: `${id}.raft:1`,
  httpAddress: `${id}.http:2`,
});
const three = ['n1', 'n2', 'n3'].map(addr);

interface Member {
  node: RaftNode<number>;
  sm: ListMachine;
  storage: MemoryRaftStorage;
}

async function open(
  network: MemoryNetwork,
  id: string,
  storage: MemoryRaftStorage,
  extra: Partial<RaftNodeOptions<number>> = {},
): Promise<Member> {
  const sm = new ListMachine();
  const node = await RaftNode.open<number>({
    id,
    clusterId: 'test',
    peers: three,
    stateMachine: sm,
    storage,
    transport: network.transport(id),
    tickMs: 5,
    heartbeatMs: 25,
    electionTimeoutMs: 150,
    randomSeed: Number(id.slice(1)),
    ...extra,
  });
  return { node, sm, storage };
}

async function cluster(t: typeof import('tap')) {
  const network = new MemoryNetwork();
  const members = new Map<string, Member>();
  for (const p of three) members.set(p.id, await open(network, p.id, new MemoryRaftStorage()));
  t.teardown(async () => {
    for (const m of members.values()) await m.node.stop();
  });
  return { network, members };
}

function leaderOf(members: Map<string, Member>): Member | undefined {
  return [...members.values()]
    .filter((m) => m.node.status().role === 'leader')
    .sort((a, b) => b.node.status().term - a.node.status().term)[0];
}

/** Retries a change while the new leader has not committed in its term yet (§4.1) or the learner has not answered yet. */
async function changeWhenReady(m: Member, run: (n: RaftNode<number>) => Promise<unknown>) {
  for (;;) {
    try {
      return await run(m.node);
    } catch (err) {
      const retry =
        err instanceof MembershipChangeError && /leader_not_ready|not_caught_up/.test(err.reason);
      if (!retry) throw err;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

t.test('a joining node becomes a learner, catches up, is promoted; restarts keep it', async (t) => {
  const { network, members } = await cluster(t);
  const leader = await until(() => leaderOf(members), 'a leader');
  for (let i = 0; i < 20; i++) await leader.node.propose(encode(`v${i}`));

  const n4 = await open(network, 'n4', new MemoryRaftStorage(), {
    join: true,
    peers: [addr('n4'), ...three],
  });
  members.set('n4', n4);
  t.same(n4.node.status().members, [], 'a joining node is outside every membership');
  const added = await changeWhenReady(leader, (n) =>
    n.changeMembership({ type: 'addLearner', id: 'n4', address: addr('n4') }),
  );
  t.match(added, { configCommitted: true });
  const learner = leader.node.status().members.find((m) => m.id === 'n4');
  t.match(learner, { role: 'learner', raftAddress: 'n4.raft:1', httpAddress: 'n4.http:2' });
  await until(() => n4.sm.values.length === 20, 'the learner caught up');
  await until(
    () => leader.node.status().members.find((m) => m.id === 'n4')?.hadData,
    'the leader records that n4 has data',
  );
  t.ok((await leader.storage.readPeersWithData()).includes('n4'), 'durably');
  await until(
    () => n4.node.status().members.find((m) => m.id === leader.node.id)?.hadData,
    'a follower records that the leader it follows has data (a wipe of a node that only ever led is caught)',
  );
  t.ok((await n4.storage.readPeersWithData()).includes(leader.node.id), 'durably, on the follower');

  await t.rejects(
    leader.node.changeMembership({ type: 'addLearner', id: 'n4', address: addr('n4') }),
    { code: 'membership_refused', reason: 'already_member' },
  );
  await leader.node.changeMembership({ type: 'promote', id: 'n4' });
  await until(
    () => n4.node.status().members.some((m) => m.id === 'n4' && m.role !== 'learner'),
    'n4 a voter',
  );
  t.same(
    leader.node.status().members.map((m) => m.id),
    ['n1', 'n2', 'n3', 'n4'],
    'four voters',
  );

  // The stored membership wins over the three-node peer list on restart.
  const follower = [...members.values()].find((m) => m !== leader && m !== n4)!;
  await follower.node.stop();
  follower.storage.reopen();
  const again = await open(network, follower.node.id, follower.storage);
  members.set(follower.node.id, again);
  t.same(
    again.node.status().members.map((m) => m.id),
    ['n1', 'n2', 'n3', 'n4'],
    'the recorded membership, not --peers',
  );
  t.equal(again.node.status().members.find((m) => m.id === 'n4')?.raftAddress, 'n4.raft:1');
  for (const m of members.values()) m.node.checkInvariants();
});

t.test('one change at a time; a leader removing itself hands over first', async (t) => {
  const { members } = await cluster(t);
  const leader = await until(() => leaderOf(members), 'a leader');
  await leader.node.propose(encode('x'));
  const first = changeWhenReady(leader, (n) =>
    n.changeMembership({ type: 'addLearner', id: 'n5', address: addr('n5') }),
  );
  await until(() => leader.node.status().configIndex > 0, 'the first change appended');
  await t.rejects(
    leader.node.changeMembership({ type: 'addLearner', id: 'n6', address: addr('n6') }),
    { reason: 'reconfiguration_in_progress' },
  );
  await first;
  await t.rejects(leader.node.changeMembership({ type: 'promote', id: 'n9' }), {
    reason: 'not_a_learner',
  });
  await t.rejects(
    leader.node.changeMembership({ type: 'remove', id: leader.node.id }),
    NotLeaderError,
    'the leader hands over, then the caller asks the new leader',
  );
  const next = await until(() => {
    const l = leaderOf(members);
    return l !== undefined && l !== leader ? l : undefined;
  }, 'another leader');
  await changeWhenReady(next, (n) => n.changeMembership({ type: 'remove', id: leader.node.id }));
  t.notOk(
    next.node.status().members.some((m) => m.id === leader.node.id),
    'the old leader is removed',
  );
});

t.test(
  'a member moved to a new address is found there by every node (memberAddress)',
  async (t) => {
    const { network, members } = await cluster(t);
    const leader = await until(() => leaderOf(members), 'a leader');
    await leader.node.propose(encode('x'));
    const [moving, other] = [...members.values()].filter((m) => m !== leader) as [Member, Member];
    const id = moving.node.id;
    t.same(other.node.memberAddress(id), {
      raftAddress: `${id}.raft:1`,
      httpAddress: `${id}.http:2`,
    });
    t.equal(other.node.memberAddress('n9'), undefined, 'an id never seen');

    await changeWhenReady(leader, (n) => n.changeMembership({ type: 'remove', id }));
    await moving.node.stop();
    members.delete(id);
    const moved = { raftAddress: `${id}.moved:1`, httpAddress: `${id}.moved:2` };
    await changeWhenReady(leader, (n) =>
      n.changeMembership({ type: 'addLearner', id, address: { id, ...moved } }),
    );
    t.same(leader.node.memberAddress(id), moved, 'the leader');
    await until(
      () => other.node.memberAddress(id)?.raftAddress === moved.raftAddress,
      'a follower',
    );
    t.same(other.node.memberAddress(id), moved);
    t.same(other.node.memberAddress(leader.node.id), {
      raftAddress: `${leader.node.id}.raft:1`,
      httpAddress: `${leader.node.id}.http:2`,
    });

    // Restarted with its old peer list (the moved member at its old address): the log's book wins.
    await other.node.stop();
    other.storage.reopen();
    const again = await open(network, other.node.id, other.storage);
    members.set(other.node.id, again);
    t.same(again.node.memberAddress(id), moved, 'after a restart with the old --peers');
  },
);

t.test('the data of a removed member refuses to open', async (t) => {
  const { network, members } = await cluster(t);
  const leader = await until(() => leaderOf(members), 'a leader');
  const victim = [...members.values()].find((m) => m !== leader)!;
  await changeWhenReady(leader, (n) => n.changeMembership({ type: 'remove', id: victim.node.id }));
  await victim.node.stop();
  // Hand the victim the log that removes it (as a snapshot-less copy of the leader's view would).
  const copy = new MemoryRaftStorage();
  const recovered = await leaderStorageCopy(leader.storage);
  await copy.persist({ hardState: recovered.hardState, entries: recovered.entries });
  await t.rejects(open(network, victim.node.id, copy), RemovedMemberError);
});

async function leaderStorageCopy(storage: MemoryRaftStorage) {
  const entries = await storage.readEntries();
  const hardState = await storage.readHardState();
  return { entries, hardState: { ...hardState, votedFor: null } };
}

t.test('a wiped node that rejoins under its id is not removed by its earlier self', async (t) => {
  const network = new MemoryNetwork();
  const members = new Map<string, Member>();
  // One entry per message: the rejoining node sees each membership of the log take effect in turn.
  const slow = { entriesPerMessageMax: 1, inflightMessagesMax: 1 };
  for (const p of three)
    members.set(p.id, await open(network, p.id, new MemoryRaftStorage(), slow));
  t.teardown(async () => {
    for (const m of members.values()) await m.node.stop();
  });
  const leader = await until(() => leaderOf(members), 'a leader');
  const join = { ...slow, join: true, peers: [addr('n4'), ...three] };
  // The first n4 joins, is promoted, then removed: the log holds its whole life.
  const first = await open(network, 'n4', new MemoryRaftStorage(), join);
  t.teardown(() => first.node.stop());
  await changeWhenReady(leader, (n) =>
    n.changeMembership({ type: 'addLearner', id: 'n4', address: addr('n4') }),
  );
  await changeWhenReady(leader, (n) => n.changeMembership({ type: 'promote', id: 'n4' }));
  first.node.admitted(leader.node.status().configIndex);
  // (A removed follower never receives the entry that removes it: the server asks the members.)
  await leader.node.changeMembership({ type: 'remove', id: 'n4' });
  await first.node.stop();
  for (let i = 0; i < 5; i++) await leader.node.propose(encode(`v${i}`));

  // A new n4 on an empty disk replays that log (its removal included) while it is added again.
  const again = await open(network, 'n4', new MemoryRaftStorage(), join);
  members.set('n4', again);
  let removed = false;
  again.node.onRemoved(() => (removed = true));
  const added = await leader.node.changeMembership({
    type: 'addLearner',
    id: 'n4',
    address: addr('n4'),
  });
  await until(
    () => again.node.status().members.find((m) => m.id === 'n4')?.role === 'learner',
    'the new n4 replicated the membership that added it',
  );
  await until(() => again.sm.values.length === 5, 'the new n4 caught up');
  t.equal(removed, false, 'the earlier removal does not remove the new node');
  again.node.admitted(added.configIndex);
  t.equal(removed, false, 'nor once it knows where it was admitted');
});

t.test('the last voter asked to remove itself: last_voter, not a transfer error', async (t) => {
  const network = new MemoryNetwork();
  const only = await open(network, 'n1', new MemoryRaftStorage(), { peers: [addr('n1')] });
  t.teardown(() => only.node.stop());
  await until(() => only.node.status().role === 'leader', 'n1 leads alone');
  const err = await only.node
    .changeMembership({ type: 'remove', id: 'n1' })
    .catch((e: unknown) => e);
  t.ok(err instanceof MembershipChangeError, 'a membership refusal');
  t.equal((err as MembershipChangeError).reason, 'last_voter');
  t.equal(only.node.status().role, 'leader', 'still leading');
});

t.test(
  'a node restarted at other addresses than the recorded bootstrap warns, naming both',
  async (t) => {
    const network = new MemoryNetwork();
    const storage = new MemoryRaftStorage();
    const first = await open(network, 'n1', storage, { peers: [addr('n1')] });
    await until(() => first.node.status().role === 'leader', 'n1 leads alone');
    await first.node.stop();
    const warnings: { fields: LogFields; message: string }[] = [];
    const logger: Logger = {
      ...NOOP_LOGGER,
      warn: (fields, message) => warnings.push({ fields, message }),
      child: () => logger,
    };
    const moved = { id: 'n1', raftAddress: 'moved.raft:1', httpAddress: 'moved.http:2' };
    const again = await open(network, 'n1', storage, { peers: [moved], logger });
    t.teardown(() => again.node.stop());
    const drift = warnings.find((w) => /addresses other than its entry/.test(w.message));
    t.ok(drift, 'warned');
    t.match(drift?.fields, {
      stored: { raftAddress: 'n1.raft:1', httpAddress: 'n1.http:2' },
      given: { raftAddress: 'moved.raft:1', httpAddress: 'moved.http:2' },
    });
  },
);

// Proves RaftNode.holdApplies holds the state machine at one applied index while the node goes on replicating and committing (a held follower keeps its leader, a held leader keeps committing), that proposals and reads wait for the release, that nothing is snapshotted while held, and that the last release applies what waited, in order, exactly once; and that driveSlices takes every step with a turn of the event loop between them. Also: a hold released while a Ready is being written leaves what waited to be applied before that Ready's entries.
import t from 'tap';
import { RaftNode } from '../../src/raft-node.js';
import { driveSlices, joinSlices } from '../../src/slice-driver.js';
import { MemoryRaftStorage, type PersistBatch } from '../../src/storage/raft-storage.js';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';
import { ListMachine, until } from './fixtures/list-machine.js';
import { memoryNodeOptions } from './fixtures/memory-node.js';
import { StallingStorage } from './fixtures/stalling-storage.js';

const ids = ['n1', 'n2', 'n3'];
const encode = (s: string): Uint8Array => new TextEncoder().encode(s);

interface Member {
  node: RaftNode<number>;
  sm: ListMachine;
  storage: MemoryRaftStorage;
}

async function cluster(t: Tap.Test): Promise<{ leader: Member; follower: Member }> {
  const network = new MemoryNetwork();
  const members: Member[] = [];
  for (const id of ids) {
    const storage = new MemoryRaftStorage();
    const sm = new ListMachine();
    const options = memoryNodeOptions(
      id,
      ids,
      { network, storage, stateMachine: sm },
      { electionTimeoutMs: 300, snapshotEntries: 20, snapshotKeepEntries: 5 },
    );
    members.push({ node: await RaftNode.open(options), sm, storage });
  }
  t.teardown(async () => {
    for (const m of members) await m.node.stop();
  });
  const leader = await until(
    () => members.find((m) => m.node.status().role === 'leader'),
    'a leader',
  );
  return { leader, follower: members.find((m) => m !== leader)! };
}

t.test('a held follower replicates and commits but applies only on release', async (t) => {
  const { leader, follower } = await cluster(t);
  await leader.node.propose(encode('first'));
  await until(() => follower.sm.values.length === 1, 'the follower applied the first entry');
  const term = leader.node.status().term;
  const applied = follower.node.status().appliedIndex;
  const release = follower.node.holdApplies();
  let last = 0;
  for (let i = 0; i < 30; i++) last = (await leader.node.propose(encode(`v${i}`))).index;
  await until(() => follower.node.status().commitIndex >= last, 'the held follower commits');
  t.same(follower.sm.values, ['first'], 'nothing applied while held');
  t.equal(follower.node.status().appliedIndex, applied, 'applied index stands still');
  t.equal(follower.storage.newestSnapshot(), null, 'no snapshot while held');
  t.equal(follower.node.status().leaderId, leader.node.id, 'the follower kept its leader');
  t.equal(leader.node.status().term, term, 'no election meanwhile');
  release();
  release(); // idempotent
  await until(() => follower.sm.values.length === 31, 'the follower applied what waited');
  t.same(follower.sm.values, leader.sm.values, 'in order, exactly once');
  await until(() => follower.storage.newestSnapshot() !== null, 'a snapshot after the release');
});

t.test('a held leader commits; proposals and reads wait for the last release', async (t) => {
  const { leader } = await cluster(t);
  await leader.node.propose(encode('first'));
  const first = leader.node.holdApplies();
  const second = leader.node.holdApplies();
  let settled = false;
  const proposal = leader.node.propose(encode('held')).then((a) => {
    settled = true;
    return a;
  });
  const read = leader.node.readBarrier();
  const index = leader.node.status().lastLogIndex;
  await until(() => leader.node.status().commitIndex >= index, 'the held leader commits');
  t.equal(settled, false, 'the proposal waits while held');
  t.same(leader.sm.values, ['first']);
  first();
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(settled, false, 'still held by the second hold');
  second();
  const applied = await proposal;
  t.equal(applied.result, 2, 'applied after the release');
  t.ok((await read) >= index - 1, 'the read barrier answered after the release');
  t.same(leader.sm.values, ['first', 'held']);
});

t.test('driveSlices takes every step with an event-loop turn between them', async (t) => {
  const steps = [[1, 2], [], [3], [4, 5, 6]].map((s) => Uint8Array.from(s));
  // A self-renewing immediate counts turns of the event loop.
  let turns = 0;
  let running = true;
  const turn = (): void => {
    turns++;
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  const turnsAtStep: number[] = [];
  function* slices(): Generator<Uint8Array, void, undefined> {
    for (const s of steps) {
      turnsAtStep.push(turns);
      yield s;
    }
  }
  const handed: number[] = [];
  const driven = await driveSlices(slices(), (b) => handed.push(b.byteLength));
  running = false;
  t.equal(driven.steps, 4);
  t.equal(driven.byteLength, 6);
  t.same([...joinSlices(driven)], [1, 2, 3, 4, 5, 6]);
  t.same(handed, [2, 1, 3], 'each non-empty slice handed on, in order');
  for (let i = 1; i < turnsAtStep.length; i++)
    t.ok(turnsAtStep[i]! > turnsAtStep[i - 1]!, `the loop turned before step ${i + 1}`);
  const aborted = new AbortController();
  aborted.abort(new Error('stop'));
  await t.rejects(driveSlices(slices(), undefined, aborted.signal), /stop/);
});

/** A ListMachine that also encodes its snapshot in 8-byte steps and records any apply between steps. */
class SlicedListMachine extends ListMachine {
  steps = 0;
  appliedBetweenSteps = 0;
  *snapshotSlices(): Generator<Uint8Array, void, undefined> {
    const bytes = this.snapshot();
    const appliesAtStart = this.applies;
    for (let at = 0; at < bytes.byteLength; at += 8) {
      this.steps++;
      yield bytes.subarray(at, at + 8);
      if (this.applies !== appliesAtStart) this.appliedBetweenSteps++;
    }
  }
}

t.test('periodic snapshots of a sliced state machine: held applies, then saved', async (t) => {
  const network = new MemoryNetwork();
  const members: { node: RaftNode<number>; sm: SlicedListMachine; storage: MemoryRaftStorage }[] =
    [];
  for (const id of ids) {
    const storage = new MemoryRaftStorage();
    const sm = new SlicedListMachine();
    const node = await RaftNode.open<number>(
      memoryNodeOptions(
        id,
        ids,
        { network, storage, stateMachine: sm },
        {
          electionTimeoutMs: 300,
          snapshotEntries: 20,
          snapshotKeepEntries: 5,
          entriesPerMessageMax: 8,
        },
      ),
    );
    members.push({ node, sm, storage });
  }
  t.teardown(async () => {
    for (const m of members) await m.node.stop();
  });
  const leader = await until(
    () => members.find((m) => m.node.status().role === 'leader'),
    'a leader',
  );
  const lagging = members.find((m) => m !== leader)!;
  await leader.node.propose(encode('first'));
  await until(() => lagging.sm.values.length === 1, 'the lagging node applied the first entry');
  network.isolate(lagging.node.id);
  // Concurrent proposals: some arrive while a snapshot is being encoded and wait for it.
  const proposals: Promise<unknown>[] = [];
  for (let i = 0; i < 120; i++) proposals.push(leader.node.propose(encode(`v${i}`)));
  await Promise.all(proposals);
  await until(
    () => (leader.storage.newestSnapshot()?.meta.index ?? 0) >= 100,
    'the leader snapshotted and compacted',
  );
  t.ok(leader.sm.steps > 10, `the leader encoded in ${leader.sm.steps} steps`);
  t.equal(leader.sm.appliedBetweenSteps, 0, 'nothing applied between two steps');
  const snap = leader.storage.newestSnapshot()!;
  const values = JSON.parse(new TextDecoder().decode(snap.data)) as string[];
  t.same(values, leader.sm.values.slice(0, values.length), 'the saved bytes are the state there');
  network.heal();
  await until(() => lagging.sm.values.length === 121, 'the lagging node caught up');
  t.ok(lagging.sm.restores >= 1, 'through InstallSnapshot');
  t.same(lagging.sm.values, leader.sm.values);
});

/** StallingStorage that stalls by itself at the first write of a hard state committing `index`. */
class CommitStallingStorage extends StallingStorage {
  stallAtCommit = Infinity;
  reached: () => void = () => undefined;
  override async persist(batch: PersistBatch): Promise<void> {
    if ((batch.hardState?.commitIndex ?? 0) >= this.stallAtCommit) {
      this.stallAtCommit = Infinity;
      this.stall();
      this.reached();
    }
    return super.persist(batch);
  }
}

t.test(
  'a hold released during a write: what waited is applied before the new entries',
  async (t) => {
    const network = new MemoryNetwork();
    const members: { node: RaftNode<number>; sm: ListMachine; storage: CommitStallingStorage }[] =
      [];
    const fatal: unknown[] = [];
    for (const id of ids) {
      const storage = new CommitStallingStorage();
      const sm = new ListMachine();
      const options = memoryNodeOptions(
        id,
        ids,
        { network, storage, stateMachine: sm },
        { electionTimeoutMs: 300, onFatalError: (err) => fatal.push(err) },
      );
      members.push({ node: await RaftNode.open(options), sm, storage });
    }
    t.teardown(async () => {
      for (const m of members) await m.node.stop();
    });
    const leader = await until(
      () => members.find((m) => m.node.status().role === 'leader'),
      'a leader',
    );
    const follower = members.find((m) => m !== leader)!;
    await leader.node.propose(encode('first'));
    await until(() => follower.sm.values.length === 1, 'the follower applied the first entry');
    const release = follower.node.holdApplies();
    const held = (await leader.node.propose(encode('held'))).index;
    await until(() => follower.node.status().commitIndex >= held, 'the held entry is committed');
    // The write that commits the next entry stalls; the hold ends while it is in flight.
    const reached = new Promise<void>((r) => (follower.storage.reached = r));
    follower.storage.stallAtCommit = held + 1;
    await leader.node.propose(encode('after'));
    await reached;
    release();
    follower.storage.resume();
    await until(
      () => follower.sm.values.length === 3 || fatal.length > 0,
      'the follower applied both entries',
    );
    t.same(fatal, [], 'no fatal error');
    t.same(follower.sm.values, ['first', 'held', 'after'], 'in order, exactly once');
  },
);

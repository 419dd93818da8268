// Proves RaftNode follows Ready.mustPersistBeforeSend (dissertation §10.2.1): while the leader's own
// write of a new entry is still in flight, its AppendEntries already reached the followers and they
// made the entry durable — but the leader applies (and answers the proposal) only after its write.
import t from 'tap';
import { RaftNode } from '../../src/raft-node.js';
import { MemoryRaftStorage } from '../../src/storage/raft-storage.js';
import type { PersistBatch } from '../../src/storage/raft-storage.js';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';
import { ListMachine, until } from './fixtures/list-machine.js';

const ids = ['n1', 'n2', 'n3'];
const peers = ids.map((id) => ({ id, raftAddress: 'in-memory' }));

/** Memory storage whose persist() can be held open (an fsync that has not returned yet). */
class GatedStorage extends MemoryRaftStorage {
  #gate: Promise<void> | null = null;
  #release: (() => void) | null = null;
  /** Batches that reached persist() while the gate was closed (not yet written). */
  held = 0;
  close_(): void {
    this.#gate = new Promise((resolve) => (this.#release = resolve));
  }
  open_(): void {
    this.#release?.();
    this.#gate = null;
    this.#release = null;
  }
  override async persist(batch: PersistBatch): Promise<void> {
    const gate = this.#gate;
    if (gate !== null) {
      this.held++;
      await gate;
    }
    return super.persist(batch);
  }
}

t.test(
  'the leader sends a new entry before its own write completes, and applies it only after',
  async (t) => {
    const network = new MemoryNetwork();
    const members = ids.map((id) => ({ id, storage: new GatedStorage(), sm: new ListMachine() }));
    const nodes: RaftNode<number>[] = [];
    for (const m of members) {
      nodes.push(
        await RaftNode.open({
          id: m.id,
          clusterId: 'test',
          peers,
          stateMachine: m.sm,
          storage: m.storage,
          transport: network.transport(m.id),
          tickMs: 5,
          heartbeatMs: 25,
          electionTimeoutMs: 150,
          randomSeed: ids.indexOf(m.id) + 1,
        }),
      );
    }
    t.teardown(async () => {
      for (const m of members) m.storage.open_();
      for (const n of nodes) await n.stop();
    });
    const leaderAt = await until(() => {
      const i = nodes.findIndex((n) => n.status().role === 'leader');
      return i >= 0 ? i + 1 : null;
    }, 'a leader');
    const leader = nodes[leaderAt - 1]!;
    const lm = members[leaderAt - 1]!;
    await leader.propose(new TextEncoder().encode('warm-up'));

    lm.storage.close_();
    const index = leader.status().lastLogIndex + 1;
    let settled = false;
    const proposal = leader.propose(new TextEncoder().encode('x')).then((r) => {
      settled = true;
      return r;
    });
    await until(() => lm.storage.held > 0, 'the leader write to be in flight');
    const followers = members.filter((m) => m !== lm);
    await until(
      () => followers.every((m) => m.storage.lastIndex() >= index),
      'followers to hold the entry durably while the leader write is held',
    );
    // The leader's status shows only what its own disk holds; the followers learn the commit from it.
    const followerNodes = nodes.filter((n) => n !== leader);
    await until(
      () => followerNodes.every((n) => n.status().commitIndex >= index),
      'the followers’ answers to commit it',
    );
    t.ok(
      lm.storage.lastIndex() < index,
      'the leader has not written the entry yet: followers alone committed it',
    );
    t.equal(settled, false, 'the proposal is not answered before the leader’s write');
    t.notOk(lm.sm.values.includes('x'), 'the leader applied nothing it has not written');

    lm.storage.open_();
    const applied = await proposal;
    t.equal(applied.index, index);
    t.ok(lm.storage.lastIndex() >= index);
    t.ok(lm.sm.values.includes('x'));
    for (const n of nodes) n.checkInvariants();
  },
);

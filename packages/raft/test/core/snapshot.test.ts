// Proves log compaction and InstallSnapshot in the pure core (Raft §7, Figure 13): compaction keeps
// term lookups at the compaction point, a follower behind the leader's firstIndex is caught up by
// InstallSnapshot (and retried when it is lost), a follower holding the snapshot's last entry keeps
// its suffix, a snapshot its commitIndex already covers is ignored, and every invariant holds.
import t from 'tap';
import { RaftCore } from '../../src/core/raft-core.js';
import { asIndex, asTerm } from '../../src/core/types.js';
import type {
  Entry,
  InstallSnapshotMsg,
  InstallSnapshotResponseMsg,
  Message,
  NodeId,
  Ready,
  SnapshotMeta,
} from '../../src/core/types.js';
import {
  ManualClock,
  ScriptedNetwork,
  scriptedDefaults,
} from '../../src/testing/scripted-network.js';
import { SeededRandom } from '../../src/random.js';

const three = ['n1', 'n2', 'n3'];
const encode = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);
const isSnap = (m: Message): m is InstallSnapshotMsg => m.type === 'InstallSnapshot';
const isSnapResponse = (m: Message): m is InstallSnapshotResponseMsg =>
  m.type === 'InstallSnapshotResponse';

/**
 * ScriptedNetwork whose Ready cycle also honours Ready.snapshot: each node's "state machine" is the
 * list of applied command texts, its snapshot that list as JSON. Messages are queued unfiltered;
 * deliver() drops those on cut links.
 */
class SnapshotNet extends ScriptedNetwork {
  readonly state = new Map<NodeId, string[]>();
  readonly snapshotData = new Map<NodeId, Uint8Array>();
  readonly installed = new Map<NodeId, SnapshotMeta[]>();
  /** Every InstallSnapshot sent, in order. */
  readonly snapshotsSent: InstallSnapshotMsg[] = [];

  override process(id: NodeId): void {
    const core = this.cores.get(id);
    if (core === undefined) return;
    for (let rounds = 0; core.hasReady(); rounds++) {
      if (rounds > 10_000) throw new Error('Ready loop does not settle');
      this.#handle(id, core, core.ready());
    }
  }

  #handle(id: NodeId, core: RaftCore, rd: Ready): void {
    const disk = this.disks.get(id)!;
    if (rd.snapshot !== null) {
      disk.snapshot = rd.snapshot.meta;
      disk.entries = [];
      this.snapshotData.set(id, rd.snapshot.data);
    }
    if (rd.hardState !== null) disk.hardState = rd.hardState;
    const first = rd.entries[0];
    if (first !== undefined) {
      disk.entries.length = first.index - ((disk.snapshot?.index ?? 0) + 1);
      disk.entries.push(...rd.entries);
    }
    this.queue.push(...rd.messages);
    this.snapshotsSent.push(...rd.messages.filter(isSnap));
    if (rd.snapshot !== null) {
      this.state.set(id, JSON.parse(decode(rd.snapshot.data)) as string[]);
      this.installed.set(id, [...(this.installed.get(id) ?? []), rd.snapshot.meta]);
    }
    const list = this.state.get(id) ?? [];
    for (const e of rd.committedEntries) if (e.type === 'command') list.push(decode(e.data));
    this.state.set(id, list);
    core.advance(rd);
    core.checkInvariants();
  }

  /** Snapshot `id` at its applied index and compact, keeping `keepEntries` entries below it. */
  snapshot(id: NodeId, keepEntries = 0): SnapshotMeta {
    const core = this.core(id);
    const meta = core.snapshotMetaAt(core.appliedIndex());
    const data = encode(JSON.stringify(this.state.get(id) ?? []));
    const compactIndex = asIndex(Math.max(0, meta.index - keepEntries));
    t.ok(core.compact(meta, data, compactIndex), `${id} compacts`);
    core.checkInvariants();
    const disk = this.disks.get(id)!;
    disk.entries = disk.entries.filter((e) => e.index > compactIndex);
    this.snapshotData.set(id, data);
    return meta;
  }

  settle(): void {
    for (let i = 0; i < 3; i++) {
      this.tickAll();
      this.stabilize();
    }
  }
}

function proposeMany(net: ScriptedNetwork, id: NodeId, from: number, count: number): void {
  for (let i = from; i < from + count; i++) t.ok(net.propose(id, `c${i}`).ok);
}

const entry = (index: number, term: number, clusterTimeMs = index): Entry => ({
  term: asTerm(term),
  index: asIndex(index),
  type: 'command',
  clusterTimeMs,
  data: encode(`e${index}`),
});

/** A lone follower core n2 of cluster n1..n3 starting from `entries` with commitIndex `commit`. */
function follower(entries: Entry[], commit: number, term = 2): RaftCore {
  return new RaftCore(
    { ...scriptedDefaults, id: 'n2', voters: three },
    {
      hardState: { term: asTerm(term), votedFor: null, commitIndex: asIndex(commit) },
      snapshot: null,
      entries,
      appliedIndex: asIndex(commit),
    },
    new ManualClock(0),
    new SeededRandom(1),
  );
}

function installMsg(
  index: number,
  term: number,
  msgTerm = 2,
  clusterTimeMs = 1000,
): InstallSnapshotMsg {
  return {
    type: 'InstallSnapshot',
    from: 'n1',
    to: 'n2',
    term: asTerm(msgTerm),
    snapshot: { index: asIndex(index), term: asTerm(term), clusterTimeMs: index },
    data: encode('snapshot-bytes'),
    clusterTimeMs,
  };
}

t.test('§7 compaction drops entries but keeps term lookups at the compaction point', async (t) => {
  const net = new SnapshotNet(three);
  net.elect('n1');
  proposeMany(net, 'n1', 0, 10);
  net.settle();
  const leader = net.core('n1');
  t.equal(leader.appliedIndex(), 11);
  const meta = net.snapshot('n1', 3);
  t.same(meta, {
    index: 11,
    term: 1,
    clusterTimeMs: meta.clusterTimeMs,
    membership: { voters: ['n1', 'n2', 'n3'], learners: [] },
    configIndex: 0,
  });
  t.equal(leader.firstIndex(), 9, 'entries ≤ 8 dropped, 3 kept below the snapshot');
  t.same(leader.snapshotMeta(), meta);
  t.throws(
    () => leader.snapshotMetaAt(asIndex(7)),
    'index below the compaction point has no term any more',
  );
  t.equal(leader.snapshotMetaAt(asIndex(8)).term, 1, 'term of the compaction point is kept');
  proposeMany(net, 'n1', 10, 3);
  net.settle();
  for (const id of three)
    t.same(net.state.get(id)!.length, 13, `${id} keeps replicating after compaction`);
  t.equal(net.installed.get('n2'), undefined, 'followers in step never need a snapshot');
  t.notOk(leader.compact(meta, encode('[]'), asIndex(11)), 'an older or equal snapshot is ignored');
});

t.test(
  '§7 a follower behind the leader firstIndex gets InstallSnapshot and catches up',
  async (t) => {
    const net = new SnapshotNet(three);
    net.elect('n1');
    proposeMany(net, 'n1', 0, 2);
    net.settle();
    net.isolate('n3');
    proposeMany(net, 'n1', 2, 20);
    net.settle();
    const meta = net.snapshot('n1', 0);
    net.snapshot('n2', 0);
    t.equal(net.core('n1').progress().get('n3')!.needsSnapshot, true);
    net.heal();
    net.tickAll();
    net.deliver((m) => m.type === 'AppendEntries');
    net.deliver((m) => m.type === 'AppendEntriesResponse');
    t.equal(
      net.core('n1').progress().get('n3')!.state,
      'snapshot',
      'n3 answered; leader sends the snapshot',
    );
    t.equal(net.queue.filter(isSnap).length, 1);
    net.tickAll(3);
    net.stabilize();
    t.equal(net.snapshotsSent.length, 1, 'one InstallSnapshot, not one per heartbeat');
    t.same(net.snapshotsSent[0]!.snapshot, meta);
    t.same(net.installed.get('n3'), [meta], 'n3 installed the leader snapshot');
    t.same(net.disks.get('n3')!.snapshot, meta, 'and persisted it');
    t.same(net.state.get('n3'), net.state.get('n1'), 'state machine matches the leader');
    t.not(
      net.core('n1').progress().get('n3')!.state,
      'snapshot',
      'back to probe/replicate after the answer',
    );
    proposeMany(net, 'n1', 22, 3);
    net.settle();
    t.same(net.state.get('n3'), net.state.get('n1'), 'and keeps up with new entries');
    t.equal(net.state.get('n3')!.length, 25);
    t.equal(net.core('n3').hardState().commitIndex, net.core('n1').hardState().commitIndex);
  },
);

t.test('§7 a lost InstallSnapshot is sent again after snapshotRetryTicks (BC-25)', async (t) => {
  const net = new SnapshotNet(three, { config: { snapshotRetryTicks: 5 } });
  net.elect('n1');
  net.isolate('n3');
  proposeMany(net, 'n1', 0, 5);
  net.settle();
  net.snapshot('n1', 0);
  net.heal();
  net.tick('n1');
  net.deliver((m) => m.type === 'AppendEntries');
  net.deliver((m) => m.type === 'AppendEntriesResponse');
  t.equal(net.drop(isSnap), 1, 'first InstallSnapshot lost');
  net.tick('n1', 3);
  t.equal(net.queue.filter(isSnap).length, 0, 'no resend before the retry timeout');
  net.tick('n1', 2);
  t.equal(net.queue.filter(isSnap).length, 1, 'resent after the retry timeout');
  net.stabilize();
  t.same(net.state.get('n3'), net.state.get('n1'));
});

t.test(
  '§7 a follower holding the snapshot last entry keeps its suffix and only commits',
  async (t) => {
    const core = follower(
      [1, 2, 3, 4, 5, 6, 7, 8].map((i) => entry(i, 1)),
      3,
    );
    core.step(installMsg(5, 1));
    const rd = core.ready();
    t.equal(rd.snapshot, null, 'nothing to restore: the log already has entries 4..5');
    t.same(
      rd.committedEntries.map((e) => e.index),
      [4, 5],
      'entries up to the snapshot index are applied normally',
    );
    t.equal(core.lastIndex(), 8, 'suffix kept');
    t.equal(rd.hardState?.commitIndex, 5);
    const reply = rd.messages.find(isSnapResponse);
    t.same([reply?.snapshotIndex, reply?.matchIndex], [5, 5]);
    core.advance(rd);
    core.checkInvariants();
  },
);

t.test(
  '§7 a snapshot at or below commitIndex is ignored and answered with commitIndex',
  async (t) => {
    const core = follower(
      [1, 2, 3, 4, 5, 6, 7, 8].map((i) => entry(i, 1)),
      8,
    );
    core.step(installMsg(5, 1));
    const rd = core.ready();
    t.equal(rd.snapshot, null);
    t.equal(core.lastIndex(), 8, 'log untouched');
    const reply = rd.messages.find(isSnapResponse);
    t.same([reply?.snapshotIndex, reply?.matchIndex], [5, 8]);
    core.advance(rd);
    core.checkInvariants();
  },
);

t.test('§7 a conflicting log is discarded and replaced by the snapshot', async (t) => {
  const core = follower(
    [1, 2, 3, 4, 5, 6].map((i) => entry(i, 1)),
    2,
    3,
  );
  core.step(installMsg(5, 2, 3));
  t.equal(core.lastIndex(), 5, 'log now ends at the snapshot');
  const rd = core.ready();
  t.same(rd.snapshot?.meta, { index: 5, term: 2, clusterTimeMs: 5 });
  t.same(decode(rd.snapshot!.data), 'snapshot-bytes');
  t.equal(rd.hardState?.commitIndex, 5, 'commitIndex moves to the snapshot in the same Ready');
  t.same(rd.entries, [], 'old entries are not handed out again');
  t.same(rd.committedEntries, [], 'nothing applied from the discarded log');
  t.equal(core.appliedIndex(), 5);
  t.ok(core.clusterTimeMs() >= 1000, 'the leader cluster time counts toward the highest seen');
  core.advance(rd);
  core.checkInvariants();
  t.same(core.snapshotMeta(), rd.snapshot?.meta, 'kept to serve others if this node leads later');
  // A later AppendEntries continues right after the snapshot.
  core.step({
    type: 'AppendEntries',
    from: 'n1',
    to: 'n2',
    term: asTerm(3),
    prevLogIndex: asIndex(5),
    prevLogTerm: asTerm(2),
    entries: [entry(6, 3, 1000)],
    leaderCommit: asIndex(6),
    clusterTimeMs: 1000,
    heartbeatSeq: 1,
  });
  const next = core.ready();
  t.same(
    next.committedEntries.map((e) => e.index),
    [6],
  );
  core.advance(next);
  core.checkInvariants();
});

t.test(
  'InstallSnapshot from a stale term is answered with our term and changes nothing',
  async (t) => {
    const core = follower([entry(1, 1)], 1, 5);
    core.step(installMsg(10, 2, 3));
    const rd = core.ready();
    t.equal(rd.snapshot, null);
    const reply = rd.messages.find(isSnapResponse);
    t.equal(reply?.term, 5, 'stale leader learns the newer term');
    t.equal(reply?.matchIndex, 0);
    t.equal(core.lastIndex(), 1);
  },
);

t.test('malformed InstallSnapshot (snapshot term above message term) is dropped', async (t) => {
  const core = follower([entry(1, 1)], 1, 2);
  core.step(installMsg(10, 3, 2));
  t.equal(core.lastIndex(), 1);
  t.notOk(core.hasReady() && core.ready().messages.some(isSnapResponse));
});

t.test(
  'a leader restarted from a snapshot with its bytes catches up an empty follower',
  async (t) => {
    const net = new SnapshotNet(three);
    net.elect('n1');
    proposeMany(net, 'n1', 0, 4);
    net.settle();
    const meta = net.snapshot('n1', 0);
    const data = net.snapshotData.get('n1')!;
    const disk = net.disks.get('n1')!;
    const leader = new RaftCore(
      { ...scriptedDefaults, id: 'n1', voters: three },
      { hardState: disk.hardState, snapshot: meta, snapshotData: data, entries: disk.entries },
      new ManualClock(10_000),
      new SeededRandom(7),
    );
    leader.checkInvariants();
    t.equal(leader.appliedIndex(), meta.index, 'restarts applied up to the snapshot');
    t.same(leader.snapshotMeta(), meta);
    t.equal(leader.firstIndex(), meta.index + 1);
  },
);

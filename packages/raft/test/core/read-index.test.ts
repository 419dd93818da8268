// Proves ReadIndex (Raft dissertation §6.4): a read point is released only after a majority echoed a
// heartbeat sent after the request, only once the leader committed an entry of its term, batched
// under one broadcast, and failed (with a leader hint) on non-leaders or when leadership is lost.
import t from 'tap';
import { asIndex, asTerm } from '../../src/core/types.js';
import type { Message } from '../../src/core/types.js';
import { ScriptedNetwork } from '../../src/testing/scripted-network.js';

const three = ['n1', 'n2', 'n3'];
const appendsIn = (msgs: readonly Message[]) => msgs.filter((m) => m.type === 'AppendEntries');

t.test(
  '§6.4 basic: the read index is the commit index, released after a majority echo',
  async (t) => {
    const net = new ScriptedNetwork(three);
    net.elect('n1');
    net.propose('n1', 'a');
    net.stabilize();
    net.core('n1').readIndex(42);
    net.process('n1');
    t.same(net.readStates.get('n1'), [], 'not released before any echo');
    t.equal(appendsIn(net.queue).length, 2, 'one heartbeat per follower');
    net.deliver((m) => m.to === 'n2');
    net.deliver((m) => m.from === 'n2');
    t.same(
      net.readStates.get('n1'),
      [{ requestId: 42, index: 2 }],
      'released with one follower + leader',
    );
  },
);

t.test('§6.4 concurrent reads are batched behind one broadcast', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  for (const id of [1, 2, 3]) net.core('n1').readIndex(id);
  const rd = net.core('n1').ready();
  t.equal(appendsIn(rd.messages).length, 2, 'three reads, one heartbeat per follower');
  net.core('n1').advance(rd);
  for (const m of rd.messages) net.queue.push(m);
  net.stabilize();
  t.same(
    net.readStates.get('n1')!.map((r) => r.requestId),
    [1, 2, 3],
  );
  t.ok(net.readStates.get('n1')!.every((r) => r.index === 1));
});

t.test('§6.4 echoes of heartbeats sent before the request do not confirm it', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.tick('n1'); // heartbeats (older seq) are queued
  const old = net.queue.length;
  t.equal(old, 2);
  net.core('n1').readIndex(7);
  net.process('n1');
  const oldMsgs = new Set(net.queue.slice(0, old));
  net.deliver((m) => oldMsgs.has(m));
  net.deliver((m) => m.type === 'AppendEntriesResponse');
  t.same(net.readStates.get('n1'), [], 'old echoes do not count');
  net.stabilize();
  t.same(net.readStates.get('n1'), [{ requestId: 7, index: 1 }]);
});

t.test('§6.4 a new leader answers reads only after committing an entry of its term', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.propose('n1', 'a');
  net.stabilize();
  net.tickAll();
  net.stabilize(); // n2, n3 know commitIndex 2
  net.crash('n1');
  net.campaign('n2');
  net.tick('n3', 10); // stickiness lapses on n3
  net.deliver((m) => m.type === 'RequestVote');
  net.deliver((m) => m.type === 'RequestVoteResponse');
  const leader = net.core('n2');
  t.equal(leader.softState().role, 'leader');
  t.equal(leader.hardState().commitIndex, 2, 'commit index from the previous term');
  leader.readIndex(5);
  net.process('n2');
  t.same(net.readStates.get('n2'), []);
  net.stabilize();
  t.same(
    net.readStates.get('n2'),
    [{ requestId: 5, index: 3 }],
    'read index is the commit index once the no-op (3) committed',
  );
});

t.test('§6.4 non-leaders fail reads with a leader hint', async (t) => {
  const net = new ScriptedNetwork(three);
  net.core('n2').readIndex(1);
  net.elect('n1');
  net.core('n2').readIndex(2);
  net.process('n2');
  t.same(net.readFailures.get('n2'), [
    { requestId: 1, leaderHint: null },
    { requestId: 2, leaderHint: 'n1' },
  ]);
});

t.test('§6.4 reads pending when leadership is lost fail with the new leader as hint', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.core('n1').readIndex(9);
  net.process('n1');
  net.drop(() => true);
  net.core('n1').step({
    type: 'AppendEntries',
    from: 'n2',
    to: 'n1',
    term: asTerm(2),
    prevLogIndex: asIndex(0),
    prevLogTerm: asTerm(0),
    entries: [],
    leaderCommit: asIndex(0),
    clusterTimeMs: 0,
    heartbeatSeq: 1,
  });
  net.process('n1');
  t.same(net.readFailures.get('n1'), [{ requestId: 9, leaderHint: 'n2' }]);
  t.same(net.readStates.get('n1'), []);
});

t.test('§6.4 a single-node leader answers reads at once', async (t) => {
  const net = new ScriptedNetwork(['n1']);
  net.elect('n1');
  net.core('n1').readIndex(3);
  net.process('n1');
  t.same(net.readStates.get('n1'), [{ requestId: 3, index: 1 }]);
});

t.test('§6.4 the read index is fixed at receipt: later commits do not change it', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.core('n1').readIndex(1);
  net.propose('n1', 'later');
  net.stabilize();
  t.same(net.readStates.get('n1'), [{ requestId: 1, index: 1 }]);
  t.equal(net.core('n1').hardState().commitIndex, 2);
});

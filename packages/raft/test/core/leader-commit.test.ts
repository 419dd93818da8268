// Proves what a follower knows of its leader's commit index (docs/architecture.md, Readiness): an emptied
// follower learns the leader's commit index from the first heartbeat, long before its log holds it.
import t from 'tap';
import type { Message } from '../../src/core/types.js';
import { ScriptedNetwork } from '../../src/testing/scripted-network.js';

const three = ['n1', 'n2', 'n3'];
const heartbeatTo = (id: string) => (m: Message) =>
  m.type === 'AppendEntries' && m.to === id && m.entries.length === 0;

t.test('a wiped follower knows the leader commit index before it holds the entries', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  for (const text of ['a', 'b', 'c']) t.ok(net.propose('n1', text).ok);
  net.stabilize();
  net.tick('n1');
  net.stabilize();
  const leaderCommit = net.core('n1').hardState().commitIndex;
  t.equal(leaderCommit, 4, 'no-op and three entries committed');
  t.equal(net.core('n1').leaderCommitIndex(), leaderCommit, 'a leader reports its own');

  net.wipe('n3');
  t.equal(net.core('n3').leaderCommitIndex(), 0, 'no leader known yet: its own commit index');
  net.drop(() => true);
  net.tick('n1', 2);
  t.ok(net.deliver(heartbeatTo('n3')) > 0, 'a heartbeat reached n3');
  t.equal(net.core('n3').softState().leaderId, 'n1');
  t.equal(net.core('n3').hardState().commitIndex, 0, 'its log holds nothing committed');
  t.equal(net.core('n3').leaderCommitIndex(), leaderCommit, 'it knows what the leader committed');

  net.stabilize();
  net.tick('n1');
  net.stabilize();
  t.equal(net.core('n3').hardState().commitIndex, leaderCommit, 'caught up');
  t.equal(net.core('n3').leaderCommitIndex(), leaderCommit);
});

t.test('a new term forgets the previous leader commit index', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  t.ok(net.propose('n1', 'a').ok);
  net.stabilize();
  net.tick('n1');
  net.stabilize();
  t.equal(net.core('n2').leaderCommitIndex(), 2);
  net.isolate('n1');
  net.elect('n2');
  t.equal(net.core('n3').softState().leaderId, 'n2');
  t.equal(
    net.core('n3').leaderCommitIndex(),
    net.core('n2').hardState().commitIndex,
    'the new leader’s commit index',
  );
});

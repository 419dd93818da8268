// Proves leadership transfer (Raft dissertation §3.10): the target is caught up, receives TimeoutNow
// and wins despite stickiness; proposals are refused meanwhile; the transfer aborts after a timeout.
import t from 'tap';
import { ScriptedNetwork } from '../../src/testing/scripted-network.js';

const three = ['n1', 'n2', 'n3'];

t.test('§3.10 transfer to an up-to-date follower: TimeoutNow, target wins at once', async (t) => {
  const net = new ScriptedNetwork(three, { config: { preVote: true, checkQuorum: true } });
  net.elect('n1');
  net.core('n1').transferLeadership('n2');
  net.process('n1');
  t.match(net.queue, [{ type: 'TimeoutNow', from: 'n1', to: 'n2', term: 1 }]);
  net.stabilize();
  t.same(
    net.core('n2').softState(),
    { role: 'leader', leaderId: 'n2', term: 2 },
    'n3 voted despite stickiness',
  );
  t.same(net.core('n1').softState(), { role: 'follower', leaderId: 'n2', term: 2 });
  t.equal(net.core('n1').transferTarget(), null);
});

t.test(
  '§3.10 transfer to a lagging follower: catch up first, refuse proposals meanwhile',
  async (t) => {
    const net = new ScriptedNetwork(three);
    net.elect('n1');
    net.isolate('n2');
    for (let i = 0; i < 5; i++) net.propose('n1', `p${i}`);
    net.stabilize();
    net.heal();
    net.core('n1').transferLeadership('n2');
    net.process('n1');
    t.notOk(
      net.queue.some((m) => m.type === 'TimeoutNow'),
      'no TimeoutNow while the target lags',
    );
    t.match(net.core('n1').propose(new Uint8Array([1])), {
      ok: false,
      reason: 'transferring',
      leaderHint: 'n1',
    });
    // Messages lost while n2 was cut off are found missing at the next heartbeat round.
    for (let i = 0; i < 5 && net.core('n2').softState().role !== 'leader'; i++) {
      net.tick('n1');
      net.stabilize();
    }
    t.equal(net.core('n2').softState().role, 'leader');
    t.equal(net.core('n2').lastIndex(), 7, 'target had every entry (and appended its no-op)');
    t.match(net.core('n1').propose(new Uint8Array([1])), {
      ok: false,
      reason: 'not_leader',
      leaderHint: 'n2',
    });
  },
);

t.test('§3.10 a transfer that does not finish within an election timeout is aborted', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.isolate('n3');
  net.core('n1').transferLeadership('n3');
  t.equal(net.core('n1').transferTarget(), 'n3');
  t.equal(net.core('n1').propose(new Uint8Array([1])).ok, false);
  for (let i = 0; i < 10; i++) {
    net.tick('n1');
    net.stabilize();
  }
  t.equal(net.core('n1').transferTarget(), null, 'aborted');
  t.equal(net.core('n1').softState().role, 'leader');
  t.equal(net.propose('n1', 'again').ok, true, 'proposals accepted again');
});

t.test('§3.10 transfer requests are ignored on followers, to self and to non-voters', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.core('n2').transferLeadership('n3');
  t.equal(net.core('n2').transferTarget(), null);
  net.core('n1').transferLeadership('n1');
  net.core('n1').transferLeadership('n9');
  t.equal(net.core('n1').transferTarget(), null);
  t.equal(net.core('n1').hasReady(), false);
});

t.test('§3.10 TimeoutNow from a node that is not the known leader is ignored', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net
    .core('n2')
    .step({ type: 'TimeoutNow', from: 'n3', to: 'n2', term: net.core('n2').softState().term });
  t.equal(net.core('n2').softState().role, 'follower');
});

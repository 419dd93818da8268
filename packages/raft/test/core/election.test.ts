// Proves leader election (Raft §5.2, §5.4.1, dissertation §9.6): who wins, who refuses, how terms move
// with pre-vote, check-quorum and leader stickiness, and that votes are persisted before they are sent.
import t from 'tap';
import { RaftCore } from '../../src/core/raft-core.js';
import { asIndex, asTerm } from '../../src/core/types.js';
import type { Message, NodeId } from '../../src/core/types.js';
import {
  ManualClock,
  ScriptedNetwork,
  scriptedDefaults,
} from '../../src/testing/scripted-network.js';
import { SeededRandom } from '../../src/random.js';

const three = ['n1', 'n2', 'n3'];
const fresh = {
  hardState: { term: asTerm(0), votedFor: null, commitIndex: asIndex(0) },
  snapshot: null,
  entries: [],
};
const termOf = (net: ScriptedNetwork, id: NodeId) => net.core(id).softState().term;
const roleOf = (net: ScriptedNetwork, id: NodeId) => net.core(id).softState().role;

t.test(
  '§5.2 basic election: a candidate with a majority becomes leader of term 1; others follow',
  async (t) => {
    const net = new ScriptedNetwork(three);
    net.elect('n1');
    for (const id of ['n2', 'n3']) {
      t.same(net.core(id).softState(), { role: 'follower', leaderId: 'n1', term: 1 }, id);
      t.equal(net.disks.get(id)!.hardState.votedFor, 'n1', `${id} persisted its vote`);
    }
    t.equal(net.core('n1').lastIndex(), 1, 'leader appended its no-op');
    t.equal(net.core('n1').hardState().commitIndex, 1, 'no-op committed');
  },
);

t.test('§5.2 single-node cluster elects itself and commits after persisting', async (t) => {
  const net = new ScriptedNetwork(['n1']);
  net.elect('n1');
  const r = net.propose('n1', 'solo');
  t.ok(r.ok);
  t.same(net.appliedTexts('n1'), ['solo']);
});

t.test(
  '§5.2 election timeouts are drawn from [electionTimeoutTicks, 2×) by the injected Random',
  async (t) => {
    for (const draw of [0, 3, 9]) {
      const random = { intBelow: (n: number) => (t.equal(n, 10), draw) };
      const core = new RaftCore(
        { ...scriptedDefaults, id: 'n1', voters: three },
        fresh,
        new ManualClock(),
        random,
      );
      let ticks = 0;
      while (core.softState().role === 'follower') {
        core.tick();
        ticks++;
      }
      t.equal(ticks, 10 + draw, `draw ${draw}`);
    }
  },
);

t.test('§5.2 split vote: no leader in term 1, a later randomized timeout elects one', async (t) => {
  const net = new ScriptedNetwork(['n1', 'n2', 'n3', 'n4'], { draws: 'seeded' });
  net.campaign('n1');
  net.campaign('n2');
  // n4 hears n2 first, n3 hears n1 first: 2 votes each, a quorum is 3.
  net.deliver((m) => m.from === 'n2' && m.to === 'n4');
  net.stabilize();
  t.equal(net.leader(), null, 'nobody won term 1');
  t.equal(termOf(net, 'n1'), 1);
  for (let i = 0; i < 40 && net.leader() === null; i++) {
    net.tickAll();
    net.stabilize();
  }
  const leader = net.leader();
  t.not(leader, null, 'a leader emerges');
  t.ok(termOf(net, leader!) >= 2, 'in a later term');
});

t.test('§5.4.1 votes only go to candidates whose log is at least as up-to-date', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.isolate('n3');
  net.propose('n1', 'a');
  net.stabilize();
  net.crash('n1');
  net.heal();
  // n3 times out first (n2 ticks too, so its stickiness lapses); n3 keeps losing, n2 eventually wins.
  net.campaign('n3');
  net.stabilize();
  let n3Won = false;
  for (let i = 0; i < 100 && net.leader() === null; i++) {
    net.tickAll();
    net.stabilize();
    n3Won ||= roleOf(net, 'n3') === 'leader';
  }
  t.notOk(n3Won, 'n3 (missing a committed entry) never wins');
  t.equal(net.leader(), 'n2');
  t.ok(termOf(net, 'n2') >= 2, 'in a new term');
  t.equal(net.core('n2').lastIndex(), 3, 'the winner holds the committed entry, then its no-op');
});

t.test(
  'UNSAFE skipLogUpToDateCheck lets a stale candidate win (the bug the flag exists to show)',
  async (t) => {
    const net = new ScriptedNetwork(three, {
      perNode: { n2: { unsafe: { skipLogUpToDateCheck: true } } },
    });
    net.elect('n1');
    net.isolate('n3');
    net.propose('n1', 'a');
    net.stabilize();
    net.tickAll();
    net.stabilize();
    t.equal(net.core('n2').hardState().commitIndex, 2, "'a' is committed on n2");
    net.crash('n1');
    net.crash('n2');
    net.restart('n2'); // forgets the leader, so stickiness does not apply
    net.heal();
    net.campaign('n3');
    net.deliver((m) => m.type === 'RequestVote');
    net.deliver((m) => m.type === 'RequestVoteResponse');
    t.equal(roleOf(net, 'n3'), 'leader', 'n3 won without the committed entry');
    t.not(net.core('n3').hardState().term, 1);
    t.equal(
      net.diskTerm('n3', asIndex(2)),
      net.core('n3').softState().term,
      'index 2 holds its own no-op, not the committed entry',
    );
  },
);

t.test(
  '§5.2 the vote is in the same Ready as (so persisted before) the vote response',
  async (t) => {
    const core = new RaftCore(
      { ...scriptedDefaults, id: 'n2', voters: three },
      fresh,
      new ManualClock(),
      new SeededRandom(1),
    );
    core.step({
      type: 'RequestVote',
      from: 'n1',
      to: 'n2',
      term: asTerm(1),
      lastLogIndex: asIndex(0),
      lastLogTerm: asTerm(0),
      transfer: false,
    });
    const rd = core.ready();
    t.same(rd.hardState, { term: 1, votedFor: 'n1', commitIndex: 0 });
    t.match(rd.messages, [{ type: 'RequestVoteResponse', to: 'n1', granted: true }]);
    core.advance(rd);
    core.step({
      type: 'RequestVote',
      from: 'n3',
      to: 'n2',
      term: asTerm(1),
      lastLogIndex: asIndex(5),
      lastLogTerm: asTerm(1),
      transfer: false,
    });
    const rd2 = core.ready();
    t.equal(rd2.hardState, null, 'no hard state change');
    t.match(
      rd2.messages,
      [{ type: 'RequestVoteResponse', to: 'n3', granted: false }],
      'one vote per term',
    );
    core.checkInvariants();
  },
);

t.test(
  'UNSAFE dontPersistVotedFor: a restarted voter votes twice and two leaders share a term',
  async (t) => {
    for (const unsafe of [false, true]) {
      const net = new ScriptedNetwork(
        three,
        unsafe ? { config: { unsafe: { dontPersistVotedFor: true } } } : {},
      );
      net.campaign('n1');
      net.campaign('n2');
      net.deliver((m) => m.from === 'n1' && m.to === 'n3');
      net.deliver((m) => m.from === 'n3' && m.to === 'n1');
      t.equal(roleOf(net, 'n1'), 'leader');
      net.drop(() => true);
      net.crash('n3');
      net.restart('n3');
      t.equal(net.disks.get('n3')!.hardState.votedFor, unsafe ? null : 'n1');
      // n2's term-1 RequestVote reaches the restarted n3 (sent again by hand: the original was dropped).
      net.core('n3').step({
        type: 'RequestVote',
        from: 'n2',
        to: 'n3',
        term: asTerm(1),
        lastLogIndex: asIndex(0),
        lastLogTerm: asTerm(0),
        transfer: false,
      });
      net.process('n3');
      net.deliver((m) => m.from === 'n3' && m.to === 'n2');
      t.equal(
        roleOf(net, 'n2'),
        unsafe ? 'leader' : 'candidate',
        unsafe ? 'second leader in term 1' : 'no second leader',
      );
      t.equal(termOf(net, 'n2'), 1);
    }
  },
);

t.test(
  '§9.6 / BC-20 pre-vote: an isolated node does not inflate its term and rejoins without disruption',
  async (t) => {
    const net = new ScriptedNetwork(three, { config: { preVote: true } });
    net.elect('n1');
    net.isolate('n3');
    net.tick('n3', 100);
    t.equal(termOf(net, 'n3'), 1, 'term unchanged');
    t.equal(roleOf(net, 'n3'), 'precandidate');
    net.queue.length = 0;
    net.heal();
    net.tick('n1');
    net.stabilize();
    t.same(net.core('n3').softState(), { role: 'follower', leaderId: 'n1', term: 1 });
    t.same(
      net.core('n1').softState(),
      { role: 'leader', leaderId: 'n1', term: 1 },
      'leader undisturbed',
    );
  },
);

t.test('BC-20 with pre-vote and check-quorum: the heal causes no election at all', async (t) => {
  const net = new ScriptedNetwork(three, { config: { preVote: true, checkQuorum: true } });
  net.elect('n1');
  net.isolate('n3');
  for (let i = 0; i < 300; i++) {
    net.tickAll();
    net.stabilize();
  }
  t.equal(termOf(net, 'n3'), 1, 'term not inflated during 30 election timeouts');
  net.heal();
  let ticksWithoutN1 = 0;
  for (let i = 0; i < 100; i++) {
    net.tickAll();
    net.stabilize();
    if (net.leader() !== 'n1') ticksWithoutN1++;
  }
  t.equal(ticksWithoutN1, 0, 'n1 led throughout');
  t.same(net.core('n3').softState(), { role: 'follower', leaderId: 'n1', term: 1 });
});

t.test(
  'BC-20 without pre-vote a rejoining node with an inflated term forces a new election it cannot win',
  async (t) => {
    const net = new ScriptedNetwork(three);
    net.elect('n1');
    net.isolate('n3');
    net.propose('n1', 'a');
    net.stabilize();
    net.tick('n3', 100);
    const inflated = termOf(net, 'n3');
    t.ok(inflated >= 5, `isolated node inflated its term to ${inflated}`);
    net.queue.length = 0;
    net.heal();
    net.tick('n1');
    net.stabilize();
    t.equal(termOf(net, 'n1'), inflated, 'old leader learned the higher term and stepped down');
    t.not(roleOf(net, 'n1'), 'leader');
    for (let i = 0; i < 60 && net.leader() === null; i++) {
      net.tickAll();
      net.stabilize();
    }
    const leader = net.leader();
    t.ok(leader === 'n1' || leader === 'n2', `an up-to-date node leads (${leader})`);
    t.ok(termOf(net, leader!) > inflated);
  },
);

t.test(
  '§9.6 precandidate: granted responses keep the term; a rejection with a higher term demotes',
  async (t) => {
    const core = new RaftCore(
      { ...scriptedDefaults, id: 'n1', voters: three, preVote: true },
      fresh,
      new ManualClock(),
      new SeededRandom(2),
    );
    while (core.softState().role !== 'precandidate') core.tick();
    const rd = core.ready();
    t.match(
      rd.messages,
      [
        { type: 'PreVote', term: 1 },
        { type: 'PreVote', term: 1 },
      ],
      'pre-votes ask for term + 1',
    );
    t.equal(rd.hardState, null, 'pre-vote changes no persistent state');
    core.advance(rd);
    core.step({ type: 'PreVoteResponse', from: 'n2', to: 'n1', term: asTerm(5), granted: false });
    t.same(
      core.softState(),
      { role: 'follower', leaderId: null, term: 5 },
      'higher-term rejection: follower at that term',
    );
    while (core.softState().role !== 'precandidate') core.tick();
    core.step({ type: 'PreVoteResponse', from: 'n2', to: 'n1', term: asTerm(6), granted: true });
    t.same(
      core.softState(),
      { role: 'candidate', leaderId: null, term: 6 },
      'a granted pre-vote majority starts the real election',
    );
    core.checkInvariants();
  },
);

t.test("§9.6 PreVote requests never change the receiver's term", async (t) => {
  const core = new RaftCore(
    { ...scriptedDefaults, id: 'n2', voters: three, preVote: true },
    fresh,
    new ManualClock(),
    new SeededRandom(3),
  );
  core.step({
    type: 'PreVote',
    from: 'n1',
    to: 'n2',
    term: asTerm(7),
    lastLogIndex: asIndex(0),
    lastLogTerm: asTerm(0),
  });
  t.equal(core.softState().term, 0);
  const rd = core.ready();
  t.match(rd.messages, [{ type: 'PreVoteResponse', term: 7, granted: true }]);
  t.equal(rd.hardState, null);
});

t.test(
  'check-quorum: a leader cut off from the majority steps down within an election timeout',
  async (t) => {
    for (const checkQuorum of [true, false]) {
      const net = new ScriptedNetwork(three, { config: { checkQuorum } });
      net.elect('n1');
      net.isolate('n1');
      net.tick('n1', 10); // exactly one election timeout after the last answer
      t.equal(roleOf(net, 'n1'), checkQuorum ? 'follower' : 'leader', `checkQuorum=${checkQuorum}`);
      if (checkQuorum) t.equal(net.core('n1').softState().leaderId, null);
    }
  },
);

t.test('check-quorum: a leader that keeps hearing a majority stays leader', async (t) => {
  const net = new ScriptedNetwork(three, { config: { checkQuorum: true } });
  net.elect('n1');
  net.isolate('n3');
  for (let i = 0; i < 50; i++) {
    net.tick('n1');
    net.stabilize();
  }
  t.equal(roleOf(net, 'n1'), 'leader');
});

t.test(
  'leader stickiness: followers that hear a live leader ignore a disruptive RequestVote/PreVote',
  async (t) => {
    for (const preVote of [false, true]) {
      const net = new ScriptedNetwork(three, { config: { preVote } });
      net.elect('n1');
      net.cut('n1', 'n2'); // n2 alone stops hearing the leader
      for (let i = 0; i < 40; i++) {
        net.tick('n1');
        net.tick('n2');
        net.stabilize();
      }
      t.same(
        net.core('n1').softState(),
        { role: 'leader', leaderId: 'n1', term: 1 },
        `preVote=${preVote}: leader kept`,
      );
      t.equal(termOf(net, 'n3'), 1, 'n3 did not even bump its term');
      t.equal(net.core('n3').softState().leaderId, 'n1');
      if (preVote) t.equal(termOf(net, 'n2'), 1, 'pre-vote kept the cut-off node at term 1');
    }
  },
);

t.test(
  'a follower whose leader went silent for an election timeout grants votes again',
  async (t) => {
    const net = new ScriptedNetwork(three);
    net.elect('n1');
    net.crash('n1');
    net.elect('n2');
    t.equal(termOf(net, 'n2'), 2);
    t.equal(net.core('n3').softState().leaderId, 'n2');
  },
);

t.test(
  '§5.1 step-down on a higher term: leader becomes follower and forgets its vote',
  async (t) => {
    const net = new ScriptedNetwork(three);
    net.elect('n1');
    const msg: Message = {
      type: 'AppendEntriesResponse',
      from: 'n2',
      to: 'n1',
      term: asTerm(5),
      success: false,
      matchIndex: asIndex(0),
      conflictIndex: asIndex(0),
      conflictTerm: asTerm(0),
      heartbeatSeq: 0,
    };
    net.core('n1').step(msg);
    net.process('n1');
    t.same(net.core('n1').softState(), { role: 'follower', leaderId: null, term: 5 });
    t.same(
      net.disks.get('n1')!.hardState,
      { term: 5, votedFor: null, commitIndex: 1 },
      'new term persisted',
    );
    t.same(net.core('n1').progress().size, 0, 'no progress tracked after stepping down');
  },
);

t.test(
  '§5.1 stale-term messages are ignored; stale leaders and candidates are told the newer term',
  async (t) => {
    const net = new ScriptedNetwork(three);
    net.elect('n1');
    net.crash('n1');
    net.elect('n2'); // term 2
    const before = net.core('n3').lastIndex();
    const stale = {
      type: 'AppendEntries',
      from: 'n1',
      to: 'n3',
      term: asTerm(1),
      prevLogIndex: asIndex(1),
      prevLogTerm: asTerm(1),
      entries: [
        {
          term: asTerm(1),
          index: asIndex(2),
          type: 'command',
          clusterTimeMs: 0,
          data: new Uint8Array(),
        },
      ],
      leaderCommit: asIndex(2),
      clusterTimeMs: 0,
      heartbeatSeq: 9,
    } as const;
    net.core('n3').step(stale);
    t.equal(net.core('n3').lastIndex(), before, 'log untouched');
    t.equal(net.core('n3').softState().leaderId, 'n2', 'leader unchanged');
    const rd = net.core('n3').ready();
    t.match(rd.messages, [{ type: 'AppendEntriesResponse', to: 'n1', term: 2, success: false }]);
    net.core('n3').advance(rd);
    net
      .core('n3')
      .step({ type: 'RequestVoteResponse', from: 'n1', to: 'n3', term: asTerm(1), granted: true });
    t.equal(net.core('n3').hasReady(), false, 'stale response has no effect');
  },
);

t.test(
  '§5.2 a (pre)candidate that hears AppendEntries of its own term becomes follower',
  async (t) => {
    for (const preVote of [false, true]) {
      const core = new RaftCore(
        { ...scriptedDefaults, id: 'n2', voters: three, preVote },
        fresh,
        new ManualClock(),
        new SeededRandom(4),
      );
      while (core.softState().role === 'follower') core.tick();
      const term = core.softState().term;
      core.step({
        type: 'AppendEntries',
        from: 'n1',
        to: 'n2',
        term,
        prevLogIndex: asIndex(0),
        prevLogTerm: asTerm(0),
        entries: [],
        leaderCommit: asIndex(0),
        clusterTimeMs: 0,
        heartbeatSeq: 1,
      });
      t.same(core.softState(), { role: 'follower', leaderId: 'n1', term }, `preVote=${preVote}`);
      core.checkInvariants();
    }
  },
);

t.test('check-quorum step-down fails pending reads and refuses proposals', async (t) => {
  const net = new ScriptedNetwork(three, { config: { checkQuorum: true } });
  net.elect('n1');
  net.isolate('n1');
  net.core('n1').readIndex(11);
  net.tick('n1', 10);
  t.equal(roleOf(net, 'n1'), 'follower');
  t.same(net.readFailures.get('n1'), [{ requestId: 11, leaderHint: null }]);
  t.match(net.core('n1').propose(new Uint8Array([1])), {
    ok: false,
    reason: 'not_leader',
    leaderHint: null,
  });
});

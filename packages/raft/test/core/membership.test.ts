// Proves single-server membership changes (Raft dissertation ch. 4) in the pure core: learners,
// add/promote/remove, one uncommitted change at a time, a new leader commits in its term first,
// configuration in effect on append and rolled back on truncation, recovery from snapshot + log,
// a removed leader handing over, removed nodes unable to disrupt, and the wiped-follower probe reset.
import t from 'tap';
import { RaftCore } from '../../src/core/raft-core.js';
import { decodeMembership, encodeMembership } from '../../src/core/membership.js';
import { asIndex, asTerm } from '../../src/core/types.js';
import type { Message } from '../../src/core/types.js';
import {
  ManualClock,
  ScriptedNetwork,
  scriptedDefaults,
} from '../../src/testing/scripted-network.js';
import { SeededRandom } from '../../src/random.js';

const four = ['n1', 'n2', 'n3', 'n4'];
const three = ['n1', 'n2', 'n3'];
const isVote = (m: Message): boolean =>
  m.type === 'PreVote' ||
  m.type === 'RequestVote' ||
  m.type === 'PreVoteResponse' ||
  m.type === 'RequestVoteResponse';

/** n1 leads {n1, n2, n3}; n4 runs outside the membership (an empty node about to join). */
function clusterWithSpare(config: object = {}): ScriptedNetwork {
  const net = new ScriptedNetwork(four, { voters: three, config });
  net.elect('n1');
  return net;
}

t.test('§4.2.1 a learner receives the log but never campaigns or counts', async (t) => {
  const net = clusterWithSpare();
  t.match(net.changeMembership('n1', { type: 'addLearner', id: 'n4' }), {
    ok: true,
    index: 2,
    membership: { voters: three, learners: ['n4'] },
  });
  net.stabilize();
  net.propose('n1', 'a');
  net.stabilize();
  net.tick('n1');
  net.stabilize();
  t.same(net.appliedTexts('n4'), ['a'], 'the learner applied the command');
  t.match(net.core('n4').configuration(), {
    membership: { voters: three, learners: ['n4'] },
    configIndex: 2,
    committed: true,
  });
  t.notOk(net.core('n4').isVoter());
  net.isolate('n1');
  net.tick('n4', 50);
  t.equal(net.core('n4').softState().role, 'follower', 'a learner never campaigns');
  t.notOk(
    net.queue.some((m) => m.from === 'n4' && isVote(m)),
    'a learner sends no vote request',
  );
});

t.test('a member added where nothing answers is never counted as heard from', async (t) => {
  const net = clusterWithSpare();
  net.isolate('n4');
  t.match(net.changeMembership('n1', { type: 'addLearner', id: 'n4' }), { ok: true });
  net.stabilize();
  net.tick('n1', 3);
  net.stabilize();
  t.equal(net.core('n1').progress().get('n4')?.lastAckTick, -1, 'no answer, no contact time');
  t.ok(net.core('n1').progress().get('n2')!.lastAckTick >= 0, 'n2 answered');
});

t.test('§4.1 the configuration takes effect on append, before it commits', async (t) => {
  const net = clusterWithSpare();
  net.cut('n1', 'n3');
  net.changeMembership('n1', { type: 'addLearner', id: 'n4' });
  net.deliver((m) => m.to === 'n2' && m.type === 'AppendEntries');
  t.match(net.core('n2').configuration(), {
    membership: { voters: three, learners: ['n4'] },
    configIndex: 2,
    committed: false,
  });
  t.match(net.core('n3').configuration(), { configIndex: 0 }, 'n3 has not appended it');
});

t.test('§4.1 one change at a time: a second one waits for the first to commit', async (t) => {
  const net = clusterWithSpare();
  net.isolate('n1');
  t.match(net.changeMembership('n1', { type: 'addLearner', id: 'n4' }), { ok: true });
  t.match(net.changeMembership('n1', { type: 'remove', id: 'n3' }), {
    ok: false,
    reason: 'reconfiguration_in_progress',
    leaderHint: 'n1',
  });
  net.heal();
  net.tick('n1'); // the heartbeat finds what the isolated followers missed
  net.stabilize();
  t.match(net.core('n1').configuration(), { committed: true });
  t.match(net.changeMembership('n1', { type: 'remove', id: 'n3' }), { ok: true });
});

t.test('§4.1 a new leader commits an entry of its term before changing membership', async (t) => {
  const net = new ScriptedNetwork(four, { voters: three });
  net.campaign('n1');
  // Votes only: n1 wins, but its no-op is not replicated (so not committed) yet.
  while (net.deliver(isVote) > 0) net.processAll();
  t.equal(net.core('n1').softState().role, 'leader');
  t.match(net.changeMembership('n1', { type: 'addLearner', id: 'n4' }), {
    ok: false,
    reason: 'leader_not_ready',
  });
  net.stabilize();
  t.match(net.changeMembership('n1', { type: 'addLearner', id: 'n4' }), { ok: true });
});

t.test(
  '§4.2.1 promotion: a lagging learner is refused, a caught-up one becomes a voter',
  async (t) => {
    const net = clusterWithSpare({ catchUpEntriesMax: 2 });
    net.changeMembership('n1', { type: 'addLearner', id: 'n4' });
    net.stabilize();
    net.isolate('n4');
    for (let i = 0; i < 5; i++) net.propose('n1', `p${i}`);
    net.stabilize();
    t.match(net.changeMembership('n1', { type: 'promote', id: 'n4' }), {
      ok: false,
      reason: 'not_caught_up',
      detail: /^n4 is \d+ entries behind \(at most 2\)$/,
    });
    net.heal();
    net.tick('n1');
    net.stabilize();
    t.match(net.changeMembership('n1', { type: 'promote', id: 'n4' }), {
      ok: true,
      membership: { voters: four, learners: [] },
    });
    net.stabilize();
    t.ok(net.core('n4').isVoter());
    // Four voters: a commit needs three of them.
    net.cut('n1', 'n2', 'n3');
    const r = net.propose('n1', 'needs-three');
    net.stabilize();
    t.ok(r.ok && net.core('n1').hardState().commitIndex < r.index, 'n1 + n4 are not a quorum');
  },
);

t.test('§4.2.1 changes that do not apply are refused with their code', async (t) => {
  const net = clusterWithSpare();
  t.match(net.changeMembership('n1', { type: 'addLearner', id: 'n2' }), {
    reason: 'already_member',
  });
  t.match(net.changeMembership('n1', { type: 'promote', id: 'n2' }), { reason: 'not_a_learner' });
  t.match(net.changeMembership('n1', { type: 'remove', id: 'n9' }), { reason: 'not_a_member' });
  t.match(net.changeMembership('n2', { type: 'remove', id: 'n3' }), {
    reason: 'not_leader',
    leaderHint: 'n1',
  });
  net.core('n1').transferLeadership('n2');
  net.process('n1');
  t.match(net.changeMembership('n1', { type: 'remove', id: 'n3' }), { reason: 'transferring' });
});

t.test('§4.1 a configuration entry that is truncated is rolled back', async (t) => {
  const net = clusterWithSpare();
  net.isolate('n1');
  net.changeMembership('n1', { type: 'addLearner', id: 'n4' });
  t.match(net.core('n1').configuration(), { configIndex: 2, committed: false });
  net.elect('n2');
  net.heal();
  net.tick('n2');
  net.stabilize();
  t.equal(net.core('n1').softState().leaderId, 'n2');
  t.match(
    net.core('n1').configuration(),
    { membership: { voters: three, learners: [] }, configIndex: 0 },
    'the uncommitted change vanished with its entry',
  );
});

t.test(
  '§4.1 the configuration is recovered on restart from the log and from a snapshot',
  async (t) => {
    const net = clusterWithSpare();
    net.changeMembership('n1', { type: 'addLearner', id: 'n4' });
    net.stabilize();
    net.crash('n2');
    net.restart('n2');
    t.match(net.core('n2').configuration(), {
      membership: { voters: three, learners: ['n4'] },
      configIndex: 2,
    });
    const core = new RaftCore(
      { ...scriptedDefaults, id: 'n5', voters: [] },
      {
        hardState: { term: asTerm(3), votedFor: null, commitIndex: asIndex(10) },
        snapshot: {
          index: asIndex(10),
          term: asTerm(3),
          clusterTimeMs: 0,
          membership: { voters: ['n1', 'n5'], learners: ['n7'] },
          configIndex: asIndex(8),
        },
        entries: [],
      },
      new ManualClock(),
      new SeededRandom(1),
    );
    t.same(core.configuration(), {
      membership: { voters: ['n1', 'n5'], learners: ['n7'] },
      configIndex: 8,
      committed: true,
    });
    t.ok(core.isVoter());
  },
);

t.test('§4.1 snapshots carry the membership in effect at their index', async (t) => {
  const net = clusterWithSpare();
  net.changeMembership('n1', { type: 'addLearner', id: 'n4' });
  net.stabilize();
  const meta = net.core('n1').snapshotMetaAt(asIndex(1));
  t.same(meta.membership, { voters: three, learners: [] }, 'before the change');
  t.same(net.core('n1').snapshotMetaAt(asIndex(2)).membership, {
    voters: three,
    learners: ['n4'],
  });
  t.equal(net.core('n1').snapshotMetaAt(asIndex(2)).configIndex, 2);
});

t.test('§4.2.3 a removed node cannot disrupt the cluster with vote requests', async (t) => {
  const net = new ScriptedNetwork(three, { config: { checkQuorum: true } });
  net.elect('n1');
  net.changeMembership('n1', { type: 'remove', id: 'n3' });
  net.stabilize();
  t.match(net.core('n2').configuration(), { membership: { voters: ['n1', 'n2'] } });
  const termBefore = net.core('n1').softState().term;
  net.tick('n3', 40); // n3 hears nothing any more and campaigns with its old membership
  t.ok(
    net.queue.some((m) => m.from === 'n3' && isVote(m)),
    'n3 campaigns',
  );
  net.stabilize();
  t.equal(net.core('n1').softState().role, 'leader', 'n1 still leads');
  t.equal(net.core('n1').softState().term, termBefore, 'no term was bumped');
  t.equal(net.core('n2').softState().term, termBefore);
});

t.test('§4.2.2 a leader that removes itself leads until it commits, then hands over', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  t.match(net.changeMembership('n1', { type: 'remove', id: 'n1' }), {
    ok: true,
    membership: { voters: ['n2', 'n3'] },
  });
  t.equal(net.core('n1').softState().role, 'leader', 'still leading while uncommitted');
  net.processAll();
  net.deliver((m) => m.type === 'AppendEntries');
  net.deliver((m) => m.type === 'AppendEntriesResponse');
  net.processAll();
  t.equal(net.core('n1').softState().role, 'follower', 'stepped down once committed');
  t.ok(
    net.queue.some((m) => m.type === 'TimeoutNow' && m.from === 'n1'),
    'handed over to an up-to-date voter',
  );
  net.stabilize();
  const leader = net.leader();
  t.ok(leader === 'n2' || leader === 'n3', `a remaining voter leads (${leader})`);
  net.tick('n1', 50);
  t.notOk(
    net.queue.some((m) => m.from === 'n1'),
    'the removed node neither heartbeats nor campaigns',
  );
  t.equal(net.core('n1').softState().role, 'follower');
  t.match(net.core(leader!).propose(new Uint8Array([1])), { ok: true });
});

t.test('§3.10 leadership transfer targets voters only', async (t) => {
  const net = clusterWithSpare();
  net.changeMembership('n1', { type: 'addLearner', id: 'n4' });
  net.stabilize();
  net.core('n1').transferLeadership('n4');
  t.equal(net.core('n1').transferTarget(), null, 'a learner is no target');
  net.core('n1').transferLeadership('n2');
  t.equal(net.core('n1').transferTarget(), 'n2');
});

t.test('§5.3 a follower whose data was wiped is probed from its real log end', async (t) => {
  for (const keep of [true, false]) {
    const net = new ScriptedNetwork(three, {
      config: { unsafe: { keepMatchIndexOnShorterLog: keep } },
    });
    net.elect('n1');
    for (let i = 0; i < 4; i++) net.propose('n1', `p${i}`);
    net.stabilize();
    net.wipe('n3');
    for (let i = 0; i < 5; i++) {
      net.tick('n1');
      // Bounded rounds: with the UNSAFE clamp, probe and rejection ping-pong for ever.
      for (let round = 0; round < 50 && net.queue.length > 0; round++) net.deliver();
    }
    if (keep) {
      t.equal(
        net.core('n3').lastIndex(),
        0,
        'UNSAFE clamp: the leader never probes below its match',
      );
      t.equal(net.core('n1').progress().get('n3')!.matchIndex, 5, 'stale matchIndex kept');
    } else {
      t.equal(net.core('n3').lastIndex(), 5, 'the wiped follower caught up');
      t.match(net.warnings, [
        {
          node: 'n1',
          warning: {
            type: 'follower_log_shrank',
            peer: 'n3',
            recordedMatchIndex: 5,
            followerLastIndex: 0,
          },
        },
      ]);
    }
  }
});

t.test('§4.2.1 a wiped learner counts as lagging: its promotion is refused', async (t) => {
  const net = clusterWithSpare({ catchUpEntriesMax: 0 });
  net.changeMembership('n1', { type: 'addLearner', id: 'n4' });
  for (let i = 0; i < 4; i++) net.propose('n1', `p${i}`);
  net.stabilize();
  net.wipe('n4');
  net.cut('n1', 'n4');
  net.tick('n1');
  net.stabilize();
  // The wiped learner's answer reaches the leader before its catch-up does.
  net.heal();
  net.tick('n1');
  net.deliver((m) => m.to === 'n4');
  net.deliver((m) => m.from === 'n4');
  t.equal(net.core('n1').progress().get('n4')!.matchIndex, 0, 'progress reset');
  t.match(net.changeMembership('n1', { type: 'promote', id: 'n4' }), {
    reason: 'not_caught_up',
    detail: /does not hold the membership/,
  });
});

t.test(
  '§4.2.1 a learner never reached, or gone silent, is not caught up on a young log',
  async (t) => {
    const net = clusterWithSpare(); // catchUpEntriesMax 100: the log lag alone would pass
    net.cut('n1', 'n4');
    net.changeMembership('n1', { type: 'addLearner', id: 'n4' });
    net.stabilize();
    t.match(
      net.changeMembership('n1', { type: 'promote', id: 'n4' }),
      { reason: 'not_caught_up', detail: 'n4 has never answered this leader' },
      'never answered',
    );
    net.heal();
    net.tick('n1');
    net.stabilize();
    t.ok(
      net.core('n1').progress().get('n4')!.matchIndex >= 2,
      'reached: holds the entry naming it',
    );
    net.cut('n1', 'n4');
    net.tick('n1', 10); // the scripted network's electionTimeoutTicks
    net.stabilize();
    t.match(
      net.changeMembership('n1', { type: 'promote', id: 'n4' }),
      { reason: 'not_caught_up', detail: /not answered this leader within an election timeout/ },
      'silent for an election timeout',
    );
    net.heal();
    net.tick('n1');
    net.stabilize();
    t.match(
      net.changeMembership('n1', { type: 'promote', id: 'n4' }),
      { ok: true },
      'answering again',
    );
  },
);

t.test('config entries round-trip and malformed ones are rejected', async (t) => {
  const m = { voters: ['a', 'b'], learners: ['c'] };
  t.same(decodeMembership(encodeMembership(m)), m);
  t.equal(decodeMembership(new TextEncoder().encode('{"voters":["a"],"learners":["a"]}')), null);
  t.equal(decodeMembership(new Uint8Array([0xff])), null);
});

t.test(
  '§4.2.1 learners never vote: UNSAFE countLearnerVotes elects a leader lacking a commit',
  async (t) => {
    for (const unsafe of [true, false]) {
      const net = clusterWithSpare({ unsafe: { countLearnerVotes: unsafe } });
      net.changeMembership('n1', { type: 'addLearner', id: 'n4' });
      net.stabilize();
      // n2 and the learner n4 are cut off; n1 + n3 commit without them.
      net.cut('n2', 'n1', 'n3');
      net.cut('n4', 'n1', 'n3');
      net.propose('n1', 'committed-without-n2');
      net.stabilize();
      const committed = net.core('n1').hardState().commitIndex;
      t.ok(net.core('n2').lastIndex() < committed, 'n2 lacks a committed entry');
      net.tick('n4', 25); // the learner's leader lease runs out too (it hears no heartbeat)
      net.campaign('n2');
      net.stabilize();
      if (unsafe) {
        t.equal(
          net.core('n2').softState().role,
          'leader',
          'UNSAFE: n2 + learner n4 made a "majority"',
        );
      } else {
        t.not(net.core('n2').softState().role, 'leader', 'the learner was not even asked');
        t.notOk(net.queue.some((m) => m.to === 'n4' && isVote(m)));
      }
    }
  },
);

t.test(
  '§4.1 UNSAFE configChangeBeforeTermCommit: a new leader changes membership at once',
  async (t) => {
    const net = new ScriptedNetwork(four, {
      voters: three,
      config: { unsafe: { configChangeBeforeTermCommit: true } },
    });
    net.campaign('n1');
    while (net.deliver(isVote) > 0) net.processAll();
    t.match(
      net.changeMembership('n1', { type: 'addLearner', id: 'n4' }),
      { ok: true },
      'accepted before the no-op of its term committed (the single-server bug window)',
    );
  },
);

// Proves RaftCore.peerRefused (docs/architecture.md, Failover): a follower told that its leader
// refused a connection campaigns within a quarter of the election timeout, through the usual
// pre-vote; the hint changes nothing on other roles or for other peers, and a live leader's next
// heartbeat undoes a spurious one.
import t from 'tap';
import type { NodeId } from '../../src/core/types.js';
import { ScriptedNetwork } from '../../src/testing/scripted-network.js';

const three = ['n1', 'n2', 'n3'];
/** scriptedDefaults' electionTimeoutTicks is 10: the hint's delay is 1 to ⌈10 / 4⌉ = 3 ticks. */
const HINT_DELAY_TICKS_MAX = 3;
const options = { config: { preVote: true, checkQuorum: true } };
/** Distinct hint delays (n2: 2 ticks, n3: 3); equal ones may split the vote, as in any election. */
const distinctDraws = { ...options, draws: { n1: 0, n2: 1, n3: 2 } };

/** Ticks the live `ids` together, delivering after each tick, until a leader other than n1 leads. */
function ticksToNewLeader(net: ScriptedNetwork, ids: readonly NodeId[], ticksMax: number): number {
  for (let ticks = 1; ticks <= ticksMax; ticks++) {
    for (const id of ids) net.tick(id);
    net.stabilize();
    const leader = net.leader();
    if (leader !== null && leader !== 'n1') return ticks;
  }
  return Number.POSITIVE_INFINITY;
}

t.test('the followers of a crashed leader elect a new one within the hint delay', async (t) => {
  const net = new ScriptedNetwork(three, distinctDraws);
  net.elect('n1');
  net.crash('n1');
  for (const id of ['n2', 'n3']) {
    net.core(id).peerRefused('n1');
    const soft = net.core(id).softState();
    t.same(soft, { role: 'follower', leaderId: null, term: 1 }, `${id} forgot its leader`);
    const due = net.core(id).ticksUntilDue();
    t.ok(due >= 1 && due <= HINT_DELAY_TICKS_MAX, `${id} campaigns in ${due} ticks`);
  }
  const ticks = ticksToNewLeader(net, ['n2', 'n3'], HINT_DELAY_TICKS_MAX);
  t.ok(ticks <= HINT_DELAY_TICKS_MAX, `a new leader after ${ticks} ticks`);
  t.equal(net.core(net.leader()!).softState().term, 2, 'one election: term 2');
});

t.test('without the hint the same crash takes at least an election timeout', async (t) => {
  const net = new ScriptedNetwork(three, options);
  net.elect('n1');
  net.crash('n1');
  const ticks = ticksToNewLeader(net, ['n2', 'n3'], 100);
  t.ok(ticks >= 10 && ticks < 100, `a new leader after ${ticks} ticks`);
});

t.test('ignored for a peer that is not the leader, and on the leader itself', async (t) => {
  const net = new ScriptedNetwork(three, options);
  net.elect('n1');
  const before = net.core('n2').ticksUntilDue();
  net.core('n2').peerRefused('n3');
  t.same(net.core('n2').softState(), { role: 'follower', leaderId: 'n1', term: 1 });
  t.equal(net.core('n2').ticksUntilDue(), before, 'timer not moved');
  net.core('n1').peerRefused('n2');
  t.same(net.core('n1').softState(), { role: 'leader', leaderId: 'n1', term: 1 });
  for (let i = 0; i < 20; i++) {
    net.tickAll();
    net.stabilize();
  }
  t.equal(net.leader(), 'n1', 'n1 still leads');
});

t.test('a follower still hearing the leader refuses the pre-vote of a hinted one', async (t) => {
  const net = new ScriptedNetwork(three, options);
  net.elect('n1');
  net.crash('n1');
  net.core('n2').peerRefused('n1');
  net.tick('n2', HINT_DELAY_TICKS_MAX);
  net.stabilize();
  t.equal(net.core('n2').softState().role, 'precandidate', 'n2 campaigns');
  t.same(net.core('n3').softState(), { role: 'follower', leaderId: 'n1', term: 1 }, 'n3 refused');
  t.equal(net.core('n2').softState().term, 1, 'no term moved');
  // n3 loses the leader too (its own hint): it campaigns, and n2 — no longer sticky — grants.
  net.core('n3').peerRefused('n1');
  const ticks = ticksToNewLeader(net, ['n3'], HINT_DELAY_TICKS_MAX);
  t.ok(ticks <= HINT_DELAY_TICKS_MAX, `n3's hint elected a leader after ${ticks} ticks`);
  t.equal(net.leader(), 'n3');
});

t.test('the other follower grants once its own election timeout passed', async (t) => {
  const net = new ScriptedNetwork(three, options);
  net.elect('n1');
  net.crash('n1');
  net.core('n2').peerRefused('n1');
  const ticks = ticksToNewLeader(net, ['n2', 'n3'], 100);
  t.ok(ticks >= 10 && ticks < 100, `a new leader after ${ticks} ticks (n3's lease lapsed)`);
});

t.test("a spurious hint: the live leader's next heartbeat restores the follower", async (t) => {
  const net = new ScriptedNetwork(three, options);
  net.elect('n1');
  net.core('n2').peerRefused('n1');
  t.ok(net.core('n2').ticksUntilDue() <= HINT_DELAY_TICKS_MAX, 'timer moved');
  net.tick('n1');
  net.stabilize();
  t.same(net.core('n2').softState(), { role: 'follower', leaderId: 'n1', term: 1 }, 'n2 follows');
  t.ok(net.core('n2').ticksUntilDue() >= 10, 'a full randomized timeout again');
  // Even when the campaign starts before a heartbeat arrives, the leader keeps its term.
  net.core('n2').peerRefused('n1');
  net.tick('n2', HINT_DELAY_TICKS_MAX);
  net.stabilize();
  t.equal(net.core('n2').softState().role, 'precandidate', 'n2 campaigns');
  net.tickAll();
  net.stabilize();
  t.equal(net.leader(), 'n1', 'n1 still leads');
  for (const id of three) t.equal(net.core(id).softState().term, 1, `${id} still at term 1`);
});

t.test(
  'a vote split after the hint is retried within the quarter, not an election timeout',
  async (t) => {
    // 100-tick timeouts: the hint draws from 25 ticks, so equal draws (both followers campaign in the
    // same tick, each votes for itself, the vote splits) happen in a few seeds of 300.
    const electionTimeoutTicks = 100;
    const config = { ...options.config, electionTimeoutTicks };
    let splits = 0;
    let worstTicks = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const net = new ScriptedNetwork(three, { config, draws: 'seeded', seed });
      while (net.leader() === null) {
        net.tickAll();
        net.stabilize();
      }
      const crashed = net.leader()!;
      const termBefore = net.core(crashed).softState().term;
      const survivors = three.filter((id) => id !== crashed);
      net.crash(crashed);
      for (const id of survivors) net.core(id).peerRefused(crashed);
      let ticks = 0;
      while (net.leader() === null || net.leader() === crashed) {
        for (const id of survivors) net.tick(id);
        net.stabilize();
        if (++ticks > 3 * electionTimeoutTicks) break;
      }
      if (net.core(net.leader()!).softState().term > termBefore + 1) splits++;
      worstTicks = Math.max(worstTicks, ticks);
    }
    t.ok(splits > 0, `${splits} of 300 crashes split the first vote`);
    t.ok(
      worstTicks < electionTimeoutTicks,
      `every crash had a new leader within ${worstTicks} ticks (one election timeout is ${electionTimeoutTicks})`,
    );
  },
);

t.test(
  'a split without a hint, or after a leader was heard again, waits a full timeout',
  async (t) => {
    const net = new ScriptedNetwork(three, { ...options, draws: { n1: 0, n2: 1, n3: 1 } });
    net.elect('n1');
    net.core('n2').peerRefused('n1'); // spurious: n1's heartbeat clears it
    net.tick('n1');
    net.stabilize();
    net.crash('n1');
    // Equal draws: n2 and n3 time out in the same tick and split the vote at term 2.
    const ticks = ticksToNewLeader(net, ['n2', 'n3'], 100);
    t.equal(ticks, Number.POSITIVE_INFINITY, 'equal fixed draws split every round');
    t.equal(net.core('n2').softState().role, 'candidate');
    t.ok(net.core('n2').ticksUntilDue() >= 10, 'the split waits a full randomized timeout');
  },
);

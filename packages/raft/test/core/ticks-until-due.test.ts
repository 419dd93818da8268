// Proves RaftCore.ticksUntilDue, which lets the runtime sleep instead of ticking (lazy-ticker.ts):
// in random runs of a three-node cluster (pre-vote, check-quorum, commit-notice delay, proposals,
// lost messages), fewer ticks than it announces never make a node do anything but count — no Ready,
// no change of role, term or leader — so skipping their wake-ups changes nothing.
import t from 'tap';
import { SeededRandom } from '../../src/random.js';
import { ScriptedNetwork } from '../../src/testing/scripted-network.js';
import type { NodeId } from '../../src/core/types.js';

const ids = ['n1', 'n2', 'n3'];
const tickMs = 10;

/** Ticks `id` one short of its due tick; returns a complaint if any of those ticks did more than count. */
function tickShortOfDue(net: ScriptedNetwork, id: NodeId): string | null {
  const core = net.core(id);
  net.process(id);
  const before = core.softState();
  const due = core.ticksUntilDue();
  if (!(due >= 1)) return `ticksUntilDue ${due} < 1`;
  for (let i = 1; i < Math.min(due, 200); i++) {
    net.clocks.get(id)!.advance(tickMs);
    core.tick();
    const now = core.softState();
    if (core.hasReady() || now.role !== before.role || now.term !== before.term)
      return `${id} (${before.role}) acted at tick ${i} of ${due} announced`;
    if (now.leaderId !== before.leaderId) return `${id} lost its leader at tick ${i} of ${due}`;
  }
  return null;
}

t.test('no tick before the announced one does more than count', async (t) => {
  let checks = 0;
  for (let seed = 1; seed <= 40; seed++) {
    const random = new SeededRandom(seed);
    const net = new ScriptedNetwork(ids, {
      seed,
      tickMs,
      draws: 'seeded',
      config: {
        electionTimeoutTicks: 20,
        heartbeatTicks: 4,
        preVote: true,
        checkQuorum: true,
        commitNoticeDelayTicks: 2,
      },
    });
    for (let step = 0; step < 300; step++) {
      const id = ids[random.intBelow(ids.length)]!;
      const action = random.intBelow(10);
      if (action < 3) {
        const complaint = tickShortOfDue(net, id);
        checks++;
        if (complaint !== null) {
          t.fail(`seed ${seed} step ${step}: ${complaint}`);
          return;
        }
      } else if (action < 6) net.tick(id);
      else if (action < 8) net.deliver();
      else if (action < 9) {
        const leader = ids.find((n) => net.core(n).softState().role === 'leader');
        if (leader !== undefined) net.propose(leader, `s${seed}-${step}`);
      } else net.drop((m) => m.to === id);
      net.processAll();
    }
  }
  t.ok(checks > 1000, `${checks} checks`);
});

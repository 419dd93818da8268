// Proves that seeded simulations with membership changes as faults (add/promote/remove at random,
// the leader too, learner wipes, during partitions and crashes; dissertation ch. 4) break no checker,
// and that in liveness runs every member catches up after the heal. A short slice: the long run is
// `npm run sim -- --membership --seeds N`.
import t from 'tap';
import { runSimulation } from '../../src/testing/index.js';
import type { SimMode } from '../../src/testing/index.js';
import { describeFailure } from './sim-seeds.js';
import { UNSAFE_SCHEDULES } from './unsafe-schedules.js';

function slice(from: number, count: number, mode: SimMode, nodes: 3 | 5) {
  const failures: string[] = [];
  let membershipChanges = 0;
  let committed = 0;
  let crashes = 0;
  for (let seed = from; seed < from + count; seed++) {
    const r = runSimulation({ seed, mode, nodes, membership: true });
    if (!r.ok) failures.push(describeFailure(r));
    membershipChanges += r.stats.faults.membershipChanges;
    committed += r.stats.committed;
    crashes += r.stats.faults.crashes;
  }
  return { failures, membershipChanges, committed, crashes };
}

for (const [mode, nodes, count] of [
  ['safety', 3, 8],
  ['safety', 5, 4],
  ['liveness', 3, 6],
] as const) {
  t.test(`membership ${mode}, ${nodes} nodes: ${count} seeds break no checker`, async (t) => {
    const s = slice(1, count, mode, nodes);
    t.same(s.failures, [], 'no violation (each failure line holds its replay command)');
    t.ok(s.membershipChanges >= count * 3, `membership faults injected (${s.membershipChanges})`);
    t.ok(s.committed >= count * 20 && s.crashes > 0, `runs commit (${s.committed}) and crash`);
  });
}

// The schedule that finds the §4.1 single-server bug (a leader cut off right after a change, voters
// crashing right after their grant, a change asked of every new leader, down voters removed): the
// correct core survives it.
t.test('membership §4.1-window schedule: the correct core breaks no checker', async (t) => {
  const { schedule } = UNSAFE_SCHEDULES.configChangeBeforeTermCommit;
  const failures: string[] = [];
  let membershipChanges = 0;
  for (let seed = 101; seed < 104; seed++) {
    const r = runSimulation({ ...schedule, seed });
    if (!r.ok) failures.push(describeFailure(r));
    membershipChanges += r.stats.faults.membershipChanges;
  }
  t.same(failures, [], 'no violation (each failure line holds its replay command)');
  t.ok(membershipChanges >= 9, `membership faults injected (${membershipChanges})`);
});

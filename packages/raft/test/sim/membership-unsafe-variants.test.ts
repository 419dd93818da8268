// Proves the simulator catches broken membership rules (dissertation ch. 4): for each deliberately
// broken core behaviour a bounded range of membership seeds finds a violation, and the same seed
// passes with the correct core.
import t from 'tap';
import type { UnsafeVariants } from '../../src/core/types.js';
import { runSimulation } from '../../src/testing/index.js';
import type { SimOptions } from '../../src/testing/index.js';

/** Seeds tried per variant before the test gives up (the §4.1 new-leader bug needs a rarer pattern). */
const SEEDS_MAX = 60;
const SEEDS_MAX_NEW_LEADER_CHANGE = 120;

type Schedule = Omit<SimOptions, 'seed' | 'unsafe'>;

/** Membership faults dominate, 10 s runs: many changes per run, each during other faults. */
const CHURN: Schedule = {
  nodes: 3,
  mode: 'safety',
  membership: true,
  faultPhaseMs: 10_000,
  faults: { membershipWeight: 150, gapMsMin: 20, gapMsMax: 400 },
};

/**
 * Schedules per variant (all legitimate faults; the correct core survives them — checked below):
 * - countRemovedVotes / countLearnerVotes: a lagging candidate wins with votes of nodes that may not
 *   vote (removed members still running, learners) and lacks committed entries.
 * - concurrentConfigChanges: a leader cut off with a learner piles up promote + remove and commits
 *   with a majority of its new voters that misses the old majority; no check-quorum, so it stays
 *   leader long enough.
 * - configChangeBeforeTermCommit (Ongaro's single-server bug): with four voters, a leader's change
 *   reaches a minority, the next leader changes membership before committing in its term, and the
 *   two new majorities miss each other; leaders are crashed and cut off often, and a new leader is
 *   asked for a change at once 30 % of the time (simulation.ts).
 * - keepMatchIndexOnShorterLog: a learner wiped in place is never re-probed by a leader that outlives
 *   the heal; the liveness run's catch-up check finds it stuck.
 */
const variants: ReadonlyArray<readonly [keyof UnsafeVariants, Schedule]> = [
  ['countRemovedVotes', CHURN],
  ['countLearnerVotes', CHURN],
  [
    'concurrentConfigChanges',
    {
      ...CHURN,
      core: { checkQuorum: false },
      faults: {
        membershipWeight: 120,
        partitionWeight: 80,
        crashWeight: 10,
        gapMsMin: 20,
        gapMsMax: 300,
      },
    },
  ],
  [
    'configChangeBeforeTermCommit',
    {
      ...CHURN,
      core: { checkQuorum: false, preVote: false },
      faults: {
        membershipWeight: 100,
        partitionWeight: 80,
        crashWeight: 40,
        crashLeaderProbability: 0.9,
        gapMsMin: 20,
        gapMsMax: 300,
      },
    },
  ],
  [
    'keepMatchIndexOnShorterLog',
    { nodes: 3, mode: 'liveness', membership: true, faults: { membershipWeight: 150 } },
  ],
];

for (const [flag, schedule] of variants) {
  const seedsMax =
    flag === 'configChangeBeforeTermCommit' ? SEEDS_MAX_NEW_LEADER_CHANGE : SEEDS_MAX;
  t.test(`${flag}: a violation is found within ${seedsMax} membership seeds`, async (t) => {
    let found: { seed: number; message: string } | null = null;
    for (let seed = 1; seed <= seedsMax && found === null; seed++) {
      const r = runSimulation({ ...schedule, seed, unsafe: { [flag]: true } });
      if (!r.ok) found = { seed, message: r.violation!.message.split('\n')[0]! };
    }
    t.ok(found !== null, `the checkers catch ${flag}`);
    if (found === null) return;
    t.comment(`seed ${found.seed}: ${found.message}`);
    const correct = runSimulation({ ...schedule, seed: found.seed });
    t.ok(
      correct.ok,
      `seed ${found.seed} passes with the correct core (${correct.violation?.message ?? 'ok'})`,
    );
  });
}

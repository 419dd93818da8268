// Proves the simulator catches broken membership rules (dissertation ch. 4): for each deliberately
// broken core behaviour a bounded range of membership seeds finds a violation, and the same seed
// passes with the correct core. (configChangeBeforeTermCommit is not yet found by the simulator
// within a bounded range; test/core/membership.test.ts scripts it.)
import t from 'tap';
import type { UnsafeVariants } from '../../src/core/types.js';
import { runSimulation } from '../../src/testing/index.js';
import type { SimOptions } from '../../src/testing/index.js';

/** Seeds tried per variant before the test gives up. */
const SEEDS_MAX = 60;

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
 * - countRemovedVotes: a lagging candidate wins with the votes of removed members that still run
 *   (they never learn of their removal) and lacks committed entries.
 * - countLearnerVotes: five voters and frequent partitions: a candidate cut off with learners wins
 *   with their votes while the other side elects too.
 * - concurrentConfigChanges: a leader cut off with a learner piles up promote + remove and commits
 *   with a majority of its new voters that misses the old majority; no check-quorum, so it stays
 *   leader long enough.
 * - keepMatchIndexOnShorterLog: a learner wiped in place is never re-probed by a leader that outlives
 *   the heal; the liveness run's catch-up check finds it stuck.
 */
const variants: ReadonlyArray<readonly [keyof UnsafeVariants, Schedule]> = [
  ['countRemovedVotes', CHURN],
  [
    'countLearnerVotes',
    {
      ...CHURN,
      nodes: 5,
      faults: { membershipWeight: 60, partitionWeight: 100, gapMsMin: 20, gapMsMax: 400 },
    },
  ],
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
    'keepMatchIndexOnShorterLog',
    { nodes: 3, mode: 'liveness', membership: true, faults: { membershipWeight: 150 } },
  ],
];

for (const [flag, schedule] of variants) {
  const seedsMax = SEEDS_MAX;
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

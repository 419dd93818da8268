/**
 * The fault schedule under which the simulator finds each deliberately broken core behaviour
 * (UnsafeVariants): one entry per variant, so a variant added to the core without a schedule does
 * not compile. unsafe-variants.test.ts runs the plain ones, membership-unsafe-variants.test.ts the
 * membership ones (UNSAFE_VARIANT_RUNS says which is which). All are legitimate faults: the correct
 * core survives each schedule (the tests check the finding seed with it).
 */
import type { Test } from 'tap';
import type { UnsafeVariants } from '../../src/core/types.js';
import {
  runSimulation,
  UNSAFE_VARIANT_NAMES,
  UNSAFE_VARIANT_RUNS,
} from '../../src/testing/index.js';
import type { SimOptions, UnsafeVariantRun } from '../../src/testing/index.js';

/** A run's options without the seed and the variant. */
export type Schedule = Omit<SimOptions, 'seed' | 'unsafe'>;

/**
 * The seeds below were found before the simulator sent connection-refused hints; the hints change
 * every schedule that crashes a node, so these runs go without them (the seed sweeps cover them).
 */
const NO_HINTS = { refusalHints: false } as const;

/** Where the checkers must find a variant: its schedule and the seeds tried from 1. */
export interface UnsafeSchedule {
  readonly schedule: Schedule;
  readonly seedsMax: number;
}

/** Membership faults dominate, 10 s runs: many changes per run, each during other faults. */
const CHURN: Schedule = {
  nodes: 3,
  mode: 'safety',
  membership: true,
  faultPhaseMs: 10_000,
  faults: { membershipWeight: 150, gapMsMin: 20, gapMsMax: 400 },
};

/**
 * Schedules per variant:
 * - commitPreviousTermByCounting (Figure 8) needs two leaders that each appended an uncommitted
 *   entry at the same index and then died at once, and a third leader that commits the older one by
 *   counting and dies before its own no-op spreads: single-entry AppendEntries plus crashes right
 *   after winning an election or persisting a commit advance.
 * - sendBeforePersistAlways needs nothing special: followers acknowledging before their fsync and
 *   crashing lose entries the leader already counted (the §10.2.1 exemption applied beyond the leader).
 * - dontPersistVotedFor needs a voter to crash right after granting a vote and then receive a
 *   second candidate's RequestVote of the same term: crashes right after vote grants on a slow network.
 * - countRemovedVotes: a lagging candidate wins with the votes of removed members that still run
 *   (they never learn of their removal) and lacks committed entries.
 * - countLearnerVotes: five voters and frequent partitions: a candidate cut off with learners wins
 *   with their votes while the other side elects too.
 * - concurrentConfigChanges: a leader cut off with a learner piles up promote + remove and commits
 *   with a majority of its new voters that misses the old majority; no check-quorum, so it stays
 *   leader long enough.
 * - configChangeBeforeTermCommit (the §4.1 single-server bug) needs four voters A, B, C, D: A
 *   accepts a change (say remove C) and is cut off at once, so it stays in A's log alone; B is elected
 *   by B, C and D, D crashes right after granting its vote, and B at once removes D (down) and commits
 *   that with B and C alone; A, whose term grew while cut off (no pre-vote), then wins with A and D —
 *   a majority of A's configuration — and lacks B's committed entries. Five voters (one removal away
 *   from four), crashes right after vote grants, a change asked of every new leader, long partitions.
 * - keepMatchIndexOnShorterLog (the matchIndex clamp): a learner wiped in place is never re-probed
 *   by a leader that outlives the heal; the liveness run's catch-up check finds it stuck.
 */
export const UNSAFE_SCHEDULES: { readonly [K in keyof Required<UnsafeVariants>]: UnsafeSchedule } =
  {
    commitPreviousTermByCounting: {
      seedsMax: 200,
      schedule: {
        nodes: 3,
        mode: 'safety',
        core: { entriesPerMessageMax: 1 },
        faults: {
          crashPoints: ['afterElected', 'afterElected', 'afterCommitAdvance'],
          quickRestartProbability: 0.8,
          crashWeight: 100,
          partitionWeight: 0,
          lossBurstWeight: 0,
          transferWeight: 0,
          powerLossWeight: 0,
          gapMsMin: 20,
          gapMsMax: 300,
        },
      },
    },
    skipLogUpToDateCheck: { seedsMax: 200, schedule: { nodes: 3, mode: 'safety' } },
    dontPersistVotedFor: {
      seedsMax: 200,
      schedule: {
        nodes: 3,
        mode: 'safety',
        network: { latencyMsMin: 50, latencyMsMax: 400 },
        faults: {
          crashPoints: ['afterVoteGranted'],
          quickRestartProbability: 0.9,
          crashWeight: 80,
        },
      },
    },
    sendBeforePersistAlways: { seedsMax: 200, schedule: { nodes: 3, mode: 'safety' } },
    truncateMatchingEntries: {
      seedsMax: 200,
      schedule: {
        nodes: 3,
        mode: 'safety',
        network: { slowProbability: 0.2, slowLatencyMsMax: 300, duplicateProbability: 0.1 },
      },
    },
    countRemovedVotes: { seedsMax: 60, schedule: CHURN },
    countLearnerVotes: {
      seedsMax: 60,
      schedule: {
        ...CHURN,
        nodes: 5,
        faults: { membershipWeight: 60, partitionWeight: 100, gapMsMin: 20, gapMsMax: 400 },
      },
    },
    concurrentConfigChanges: {
      seedsMax: 60,
      schedule: {
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
    },
    configChangeBeforeTermCommit: {
      seedsMax: 100,
      schedule: {
        nodes: 5,
        mode: 'safety',
        membership: true,
        faultPhaseMs: 20_000,
        core: { preVote: false, checkQuorum: true },
        faults: {
          membershipWeight: 40,
          changeAtElectionProbability: 1,
          isolateAfterChangeProbability: 0.8,
          removeDownVoterWeight: 100,
          crashWeight: 35,
          crashPoints: ['afterVoteGranted'],
          crashLeaderProbability: 0,
          partitionWeight: 3,
          partitionMsMin: 3_000,
          partitionMsMax: 6_000,
          healWeight: 0,
          powerLossWeight: 0,
          pauseWeight: 0,
          diskStallWeight: 0,
          lossBurstWeight: 0,
          gapMsMin: 20,
          gapMsMax: 400,
        },
      },
    },
    keepMatchIndexOnShorterLog: {
      seedsMax: 60,
      schedule: { nodes: 3, mode: 'liveness', membership: true, faults: { membershipWeight: 150 } },
    },
  };

/**
 * The known-bad check for each variant run by `run` (UNSAFE_VARIANT_RUNS): within its seeds the
 * checkers find a violation, and the finding seed passes with the correct core.
 */
export function testVariantsFound(t: Test, run: UnsafeVariantRun): void {
  for (const flag of UNSAFE_VARIANT_NAMES) {
    if (UNSAFE_VARIANT_RUNS[flag] !== run) continue;
    const { schedule, seedsMax } = UNSAFE_SCHEDULES[flag];
    t.test(`${flag}: a violation is found within ${seedsMax} seeds`, async (t) => {
      let found: { seed: number; message: string } | null = null;
      for (let seed = 1; seed <= seedsMax && found === null; seed++) {
        const r = runSimulation({ ...schedule, ...NO_HINTS, seed, unsafe: { [flag]: true } });
        if (!r.ok) found = { seed, message: r.violation!.message.split('\n')[0]! };
      }
      t.ok(found !== null, `the checkers catch ${flag}`);
      if (found === null) return;
      t.comment(`seed ${found.seed}: ${found.message}`);
      const correct = runSimulation({ ...schedule, ...NO_HINTS, seed: found.seed });
      t.ok(
        correct.ok,
        `seed ${found.seed} passes with the correct core (${correct.violation?.message ?? 'ok'})`,
      );
    });
  }
}

// Proves the simulator's checkers can fail: for each deliberately broken core behaviour
// (UnsafeVariants) a bounded range of seeds finds a violation, and the same seed passes with the correct core.
import t from 'tap';
import type { UnsafeVariants } from '../../src/core/types.js';
import { runSimulation } from '../../src/testing/index.js';
import type { SimOptions } from '../../src/testing/index.js';

/** Seeds tried per variant before the test gives up. */
const SEEDS_MAX = 200;

type Schedule = Omit<SimOptions, 'seed' | 'unsafe'>;

/**
 * Fault schedules tuned per variant (all legitimate faults; the correct core survives them — checked below):
 * - commitPreviousTermByCounting (Figure 8) needs two leaders that each appended an uncommitted entry at
 *   the same index and then died at once, and a third leader that commits the older one by counting and
 *   dies before its own no-op spreads: single-entry AppendEntries plus crashes right after winning an
 *   election or persisting a commit advance.
 * - sendBeforePersistAlways needs nothing special: followers acknowledging before their fsync and
 *   crashing lose entries the leader already counted.
 * - dontPersistVotedFor needs a voter to crash right after granting a vote and then receive a
 *   second candidate's RequestVote of the same term: crashes right after vote grants on a slow network.
 */
const variants: ReadonlyArray<readonly [keyof UnsafeVariants, Schedule]> = [
  [
    'commitPreviousTermByCounting',
    {
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
  ],
  ['skipLogUpToDateCheck', { nodes: 3, mode: 'safety' }],
  [
    'dontPersistVotedFor',
    {
      nodes: 3,
      mode: 'safety',
      network: { latencyMsMin: 50, latencyMsMax: 400 },
      faults: { crashPoints: ['afterVoteGranted'], quickRestartProbability: 0.9, crashWeight: 80 },
    },
  ],
  // A follower that acknowledges entries (or grants a vote) before its own fsync (Figure 2): the
  // §10.2.1 exemption applied beyond the leader.
  ['sendBeforePersistAlways', { nodes: 3, mode: 'safety' }],
  [
    'truncateMatchingEntries',
    {
      nodes: 3,
      mode: 'safety',
      network: { slowProbability: 0.2, slowLatencyMsMax: 300, duplicateProbability: 0.1 },
    },
  ],
];

for (const [flag, schedule] of variants) {
  t.test(`${flag}: a violation is found within ${SEEDS_MAX} seeds`, async (t) => {
    let found: { seed: number; message: string } | null = null;
    for (let seed = 1; seed <= SEEDS_MAX && found === null; seed++) {
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

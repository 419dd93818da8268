// Proves the simulator exercises dissertation §10.2.1 (types.ts Ready.mustPersistBeforeSend) and that
// it is safe: with slow disks (followers answer while the leader's fsync runs) and leaders crashing
// between sending AppendEntries and their own fsync, 150 seeds each of 3 and 5 nodes break no checker.
import t from 'tap';
import { runSimulation } from '../../src/testing/index.js';
import type { SimOptions } from '../../src/testing/index.js';

const SEEDS = 150;

const schedule: Omit<SimOptions, 'seed' | 'nodes'> = {
  mode: 'safety',
  fsyncMsMax: 10,
  faults: {
    crashPoints: ['afterEarlySend', 'afterEarlySend', 'beforeFsync', 'now'],
    crashWeight: 80,
    crashLeaderProbability: 0.9,
    quickRestartProbability: 0.7,
  },
};

for (const nodes of [3, 5] as const) {
  t.test(
    `${nodes} nodes: leaders crashing between send and fsync lose nothing committed`,
    async (t) => {
      const failures: string[] = [];
      let earlySends = 0;
      let crashesBetween = 0;
      let committed = 0;
      for (let seed = 1; seed <= SEEDS; seed++) {
        const r = runSimulation({ ...schedule, seed, nodes });
        if (!r.ok) failures.push(`${r.violation!.message.split('\n')[0]!} — ${r.replay}`);
        earlySends += r.stats.earlySends;
        crashesBetween += r.stats.crashesBetweenSendAndFsync;
        committed += r.stats.committed;
      }
      t.same(failures, [], 'no seed violates a safety property');
      t.ok(earlySends > SEEDS * 10, `leaders sent before their fsync (${earlySends} Readies)`);
      t.ok(crashesBetween > SEEDS, `crashes struck between send and fsync (${crashesBetween})`);
      t.ok(committed > SEEDS * 20, `runs commit entries (${committed})`);
    },
  );
}

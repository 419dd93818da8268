// Proves that after a fault phase (including one-way partitions and nodes rejoining with a higher term)
// every one of 300 seeded liveness-mode simulations (3 nodes) heals: a leader is established within
// LIVENESS_LEADER_BOUND_MS and a write commits within LIVENESS_COMMIT_BOUND_MS, with safety checked throughout.
import t from 'tap';
import { LIVENESS_COMMIT_BOUND_MS, LIVENESS_LEADER_BOUND_MS } from '../../src/testing/index.js';
import { runSeeds } from './sim-seeds.js';

const summary = runSeeds(1, 300, 3, 'liveness');
t.same(
  summary.failures,
  [],
  'every seed regains a leader and commits in bound (failure lines hold replay commands)',
);
t.ok(
  summary.leaderAfterHealMsMax <= LIVENESS_LEADER_BOUND_MS,
  `slowest leader after heal: ${Math.round(summary.leaderAfterHealMsMax)}ms`,
);
t.ok(
  summary.commitAfterHealMsMax <= LIVENESS_COMMIT_BOUND_MS,
  `slowest commit after heal: ${Math.round(summary.commitAfterHealMsMax)}ms`,
);
t.ok(
  summary.crashes > 0 && summary.partitions > 0,
  `faults were injected (${summary.crashes} crashes, ${summary.partitions} partitions)`,
);
t.comment(`${summary.seeds} seeds, ${summary.events} events`);

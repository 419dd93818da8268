// Proves that 400 seeded safety-mode simulations (seeds 401–800, 3 nodes) under partitions, crashes (also mid-Ready
// and power loss), pauses, fsync stalls, loss, duplication, reordering and clock drift break no checker.
import t from 'tap';
import { runSeeds } from './sim-seeds.js';

const summary = runSeeds(401, 400, 3, 'safety');
t.same(
  summary.failures,
  [],
  'no seed violates a safety property (each failure line holds its replay command)',
);
t.ok(
  summary.leaderTerms >= summary.seeds * 2,
  `runs elect leaders repeatedly (${summary.leaderTerms} leader terms)`,
);
t.ok(summary.committed >= summary.seeds * 20, `runs commit entries (${summary.committed})`);
t.ok(
  summary.writesAcked > 0 && summary.readsChecked > 0,
  `writes acked (${summary.writesAcked}) and reads checked (${summary.readsChecked})`,
);
t.ok(
  summary.crashes > 0 && summary.partitions > 0,
  `faults were injected (${summary.crashes} crashes, ${summary.partitions} partitions)`,
);
t.comment(`${summary.seeds} seeds, ${summary.events} events`);

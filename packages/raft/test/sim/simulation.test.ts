// Proves a simulation run is a pure function of its options (a seed replays exactly), that runs
// exercise the cluster (leaders, commits, reads, faults), and that a failing run names its replay command.
import t from 'tap';
import { runSimulation } from '../../src/testing/index.js';

t.test('the same seed replays exactly; another seed differs', async (t) => {
  const a = runSimulation({ seed: 11, nodes: 3, mode: 'safety' });
  const b = runSimulation({ seed: 11, nodes: 3, mode: 'safety' });
  const c = runSimulation({ seed: 12, nodes: 3, mode: 'safety' });
  t.same(a, b);
  t.notSame(a.stats, c.stats);
  t.ok(a.ok, a.violation?.message ?? 'ok');
  t.ok(a.stats.events > 1000, `a run has thousands of events (${a.stats.events})`);
  t.ok(
    a.stats.leaderTerms >= 2 && a.stats.committed > 10 && a.stats.readsChecked > 0,
    'it elects, commits and reads',
  );
});

t.test('a failing run reports its kind and the one command that replays it', async (t) => {
  let failing = null;
  for (let seed = 1; seed <= 50 && failing === null; seed++) {
    const r = runSimulation({
      seed,
      nodes: 3,
      mode: 'safety',
      unsafe: { skipLogUpToDateCheck: true },
    });
    if (!r.ok) failing = r;
  }
  t.ok(failing !== null, 'skipLogUpToDateCheck fails within 50 seeds');
  t.match(
    failing?.replay,
    /^npm run sim -- --seed \d+ --mode safety --nodes 3 --unsafe skipLogUpToDateCheck$/,
  );
  t.ok(failing?.violation?.kind);
});

t.test('liveness mode measures heal → leader and heal → commit', async (t) => {
  const r = runSimulation({ seed: 3, nodes: 5, mode: 'liveness' });
  t.ok(r.ok, r.violation?.message ?? 'ok');
  t.ok(r.stats.leaderAfterHealMs !== null && r.stats.commitAfterHealMs !== null);
});

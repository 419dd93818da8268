// Proves the reported cluster time (docs/concepts.md time model): a follower counts on from its leader's
// last reading, a node without a leader reports a frozen value that neither counts nor jumps back.
import t from 'tap';
import { ClusterTimeEstimate } from '../../src/cluster-time-estimate.js';

t.test('a leader reports its own timeline', async (t) => {
  const e = new ClusterTimeEstimate(1000);
  t.equal(e.read(500, 'leader', true, 0), 500);
  t.equal(e.read(700, 'leader', true, 10_000), 700);
});

t.test('a follower extrapolates from the last reading, at most the bound', async (t) => {
  const e = new ClusterTimeEstimate(1000);
  t.equal(e.read(500, 'follower', true, 100), 500);
  t.equal(e.read(500, 'follower', true, 350), 750, 'counts on with local time');
  t.equal(e.read(800, 'follower', true, 400), 800, 'a new reading restarts the count');
  t.equal(e.read(800, 'follower', true, 5000), 1800, 'never more than the bound past it');
});

t.test('without a leader the reported time is frozen where it was', async (t) => {
  const e = new ClusterTimeEstimate(1000);
  e.read(500, 'follower', true, 0);
  const last = e.read(500, 'follower', true, 200);
  t.equal(last, 700);
  t.equal(e.read(500, 'candidate', false, 5000), 700, 'frozen, not counting');
  t.equal(e.read(500, 'follower', false, 60_000), 700, 'still frozen, and no jump back');
  t.equal(e.read(900, 'follower', false, 61_000), 900, 'a newer reading is taken as is');
  t.equal(e.read(900, 'follower', true, 61_100), 1000, 'a leader again: counts on');
});

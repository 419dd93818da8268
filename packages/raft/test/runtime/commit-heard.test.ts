// Proves the readiness target (commit-heard.ts, docs/architecture.md, Readiness): the commit index
// heard `lagMs` ago, or everything heard while nothing is that old — on explicit times.
import t from 'tap';
import { CommitHeard } from '../../src/commit-heard.js';
import { asIndex } from '../../src/core/types.js';

const i = asIndex;

t.test('under steady writes the target trails the newest heard by the lag', async (t) => {
  const h = new CommitHeard(1000);
  t.equal(h.target(0), 0, 'nothing heard: 0');
  // A commit every 10 ms for 3 s: the newest heard is always a little above what is applied.
  for (let ms = 0; ms <= 3000; ms += 10) h.heard(i(ms / 10), ms);
  t.equal(h.highest(), 300);
  const target = h.target(3000);
  // Heard between 1 s and 1 s minus a bucket (125 ms, 12 commits) ago: indexes 200 to 212.
  t.ok(target >= 200, `at least what was heard 1 s ago (${target})`);
  t.ok(target <= 200 + 12, `at most a bucket younger (${target})`);
  t.ok(target < h.highest(), 'below the newest: a follower still fsyncing it is ready');
});

t.test(
  'a node that heard its first leader less than the lag ago must apply the first heard',
  async (t) => {
    const h = new CommitHeard(1000);
    h.heard(i(5000), 100); // a wiped node: the first commit index it hears is far above what it holds
    t.equal(h.target(100), 5000);
    h.heard(i(5100), 900);
    t.equal(h.target(1099), 5000, 'nothing heard a lag ago yet: the first heard');
    t.equal(h.target(1100), 5000, 'once a lag old, the same index: still behind');
    h.heard(i(6000), 1500);
    t.equal(h.target(1950), 5100, 'heard at 900 ms');
    t.equal(h.target(2000), 5100, 'the newer index is not a lag old yet');
    t.equal(h.target(2500), 6000);
  },
);

t.test('the first index heard is kept exact, later ones in buckets', async (t) => {
  const h = new CommitHeard(800);
  h.heard(i(1), 0); // a node of a new cluster hears a small commit index first
  h.heard(i(2), 1);
  h.heard(i(3), 2);
  t.equal(h.target(2), 1, 'the first heard, not the newest');
  t.equal(h.target(801), 3, 'heard in the bucket after the first: up to 100 ms stricter');
});

t.test('lower or equal indexes change nothing', async (t) => {
  const h = new CommitHeard(800);
  h.heard(i(10), 0);
  h.heard(i(9), 500);
  h.heard(i(10), 600);
  t.equal(h.target(900), 10);
  t.equal(h.highest(), 10);
  t.throws(() => new CommitHeard(-1), /lagMs/);
});

t.test('a lag of 0 is the newest heard', async (t) => {
  const h = new CommitHeard(0);
  h.heard(i(3), 10);
  h.heard(i(4), 10);
  t.equal(h.target(10), 4);
  h.heard(i(7), 11);
  t.equal(h.target(11), 7);
});

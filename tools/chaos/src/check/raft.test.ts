// Proves the Raft checker flags two leaders in one term, a commit index going back within one
// process lifetime and a term going back on a node, and accepts ordinary elections, unreachable
// nodes and a restarted node that comes back with a lower (volatile) commit index.
import t from 'tap';
import { checkRaft } from './raft.js';
import type { LeaderSample } from '../types.js';

const s = (
  timeMs: number,
  node: string,
  leader: string | null,
  term: number | null,
  commitIndex: number | null,
  reachable = true,
  incarnation: number | null = 1,
): LeaderSample => ({
  timeMs,
  node,
  reachable,
  leader,
  term,
  commitIndex,
  appliedIndex: commitIndex,
  incarnation,
});

t.test('a normal failover passes', async (t) => {
  const r = checkRaft([
    s(0, 'n1', 'n1', 1, 5),
    s(0, 'n2', 'n1', 1, 5),
    s(0, 'n3', 'n1', 1, 4),
    s(200, 'n1', null, null, null, false),
    s(200, 'n2', null, 2, 5),
    s(200, 'n3', null, 2, 5),
    s(400, 'n2', 'n2', 2, 7),
    s(400, 'n3', 'n2', 2, 7),
    s(600, 'n1', 'n2', 2, 7),
  ]);
  t.ok(r.ok, JSON.stringify(r.violations));
  t.equal(r.stats['termsSeen'], 2);
});

t.test('two nodes claiming leadership in one term is flagged', async (t) => {
  const r = checkRaft([s(0, 'n1', 'n1', 3, 10), s(100, 'n2', 'n2', 3, 10)]);
  t.notOk(r.ok);
  t.equal(r.violations[0]!.property, 'one-leader-per-term');
});

t.test('conflicting follower views are counted, and fail only when strict', async (t) => {
  const samples = [s(0, 'n2', 'n1', 3, 10), s(100, 'n3', 'n2', 3, 10)];
  const r = checkRaft(samples);
  t.ok(r.ok);
  t.equal(r.stats['leaderViewConflicts'], 1);
  t.notOk(checkRaft(samples, { strictLeaderViews: true }).ok);
});

t.test('commit index going back within one process lifetime is flagged', async (t) => {
  const r = checkRaft([
    s(0, 'n1', 'n1', 1, 10),
    s(200, 'n1', null, null, null, false),
    s(400, 'n1', 'n2', 2, 8),
  ]);
  t.notOk(r.ok);
  t.equal(r.violations[0]!.property, 'commit-index-regression');
});

t.test('a restarted node may come back with a lower commit index (seed 424242, n2)', async (t) => {
  // n2 SIGKILLed at 51.2 s and restarted at 52.9 s: commitIndex is volatile (Raft Figure 2).
  const r = checkRaft([
    s(51_169, 'n2', 'n1', 4, 1425, true, 1),
    s(51_400, 'n2', null, null, null, false, 1),
    s(54_373, 'n2', 'n1', 4, 1424, true, 2),
    s(54_573, 'n2', 'n1', 4, 1430, true, 2),
  ]);
  t.ok(r.ok, JSON.stringify(r.violations));
  // Within the new lifetime the rule holds again.
  const again = checkRaft([
    s(54_373, 'n2', 'n1', 4, 1424, true, 2),
    s(54_573, 'n2', 'n1', 4, 1420, true, 2),
  ]);
  t.equal(again.violations[0]?.property, 'commit-index-regression');
});

t.test('a sample answered across a restart (unknown lifetime) is not compared', async (t) => {
  const r = checkRaft([
    s(0, 'n1', 'n1', 1, 10, true, 1),
    s(200, 'n1', 'n2', 1, 3, true, null),
    s(400, 'n1', 'n2', 1, 11, true, 2),
  ]);
  t.ok(r.ok, JSON.stringify(r.violations));
});

t.test('term going back is flagged across a restart too', async (t) => {
  const r = checkRaft([s(0, 'n1', null, 5, 10, true, 1), s(200, 'n1', null, 4, 3, true, 2)]);
  t.equal(r.violations.length, 1);
  t.equal(r.violations[0]!.property, 'term-regression');
});

t.test('term going back is flagged', async (t) => {
  const r = checkRaft([s(0, 'n1', null, 5, 10), s(200, 'n1', null, 4, 10)]);
  t.notOk(r.ok);
  t.equal(r.violations[0]!.property, 'term-regression');
});

t.test(
  'a node wiped and rejoined is a new identity: term and commit index start again',
  async (t) => {
    // n3 removed, wiped (data generation 1) and started with --join: term 0, commitIndex 0.
    const rejoin = (timeMs: number, term: number, commitIndex: number, incarnation = 2) => ({
      ...s(timeMs, 'n3', term === 0 ? null : 'n1', term, commitIndex, true, incarnation),
      dataGeneration: 1,
    });
    const before = [s(0, 'n3', 'n1', 7, 900, true, 1), s(200, 'n3', 'n1', 7, 905, true, 1)];
    const r = checkRaft([
      ...before,
      rejoin(5_000, 0, 0),
      rejoin(5_200, 7, 880),
      rejoin(5_400, 7, 990),
    ]);
    t.ok(r.ok, JSON.stringify(r.violations));
    const again = checkRaft([...before, rejoin(5_000, 7, 880), rejoin(5_200, 6, 870)]);
    t.same(
      again.violations.map((v) => v.property),
      ['commit-index-regression', 'term-regression'],
      'within the new identity the rules hold again',
    );
    t.match(again.violations[1]!.message, /^n3\/g1: term 7/);
    // Without the generation (or with the old one) the same samples are a regression.
    const unmarked = checkRaft([...before, { ...rejoin(5_000, 0, 0), dataGeneration: 0 }]);
    t.equal(unmarked.violations[0]?.property, 'term-regression');
    // A sample whose data generation is unknown (wiped mid-poll) is not compared.
    const unknown = checkRaft([...before, { ...rejoin(5_000, 0, 0, 1), dataGeneration: null }]);
    t.ok(unknown.ok, JSON.stringify(unknown.violations));
  },
);

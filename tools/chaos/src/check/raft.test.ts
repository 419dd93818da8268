// Proves the Raft checker flags two leaders in one term and a commit index or term going back on a
// node, and accepts ordinary elections and unreachable nodes.
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
): LeaderSample => ({
  timeMs,
  node,
  reachable,
  leader,
  term,
  commitIndex,
  appliedIndex: commitIndex,
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

t.test('commit index going back on one node is flagged, across a restart too', async (t) => {
  const r = checkRaft([
    s(0, 'n1', 'n1', 1, 10),
    s(200, 'n1', null, null, null, false),
    s(400, 'n1', 'n2', 2, 8),
  ]);
  t.notOk(r.ok);
  t.equal(r.violations[0]!.property, 'commit-index-regression');
});

t.test('term going back is flagged', async (t) => {
  const r = checkRaft([s(0, 'n1', null, 5, 10), s(200, 'n1', null, 4, 10)]);
  t.notOk(r.ok);
  t.equal(r.violations[0]!.property, 'term-regression');
});

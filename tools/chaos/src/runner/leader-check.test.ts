// Proves the leader-sample checker flags two leaders in one term and a decreasing term, and
// measures the longest stretch without a majority-agreed leader.
import t from 'tap';
import { leaderSampleChecker, leaderStats } from './leader-check.js';
import { runTiming } from './session.js';
import type { LeaderSample, RunRecord } from '../types.js';

const s = (
  timeMs: number,
  node: string,
  leader: string | null,
  term: number | null,
  reachable = true,
): LeaderSample => ({
  timeMs,
  node,
  reachable,
  leader,
  term,
  commitIndex: 0,
  appliedIndex: 0,
  incarnation: 1,
});
const record = (leaderSamples: LeaderSample[]): RunRecord => ({
  runDir: '',
  seed: 1,
  scenario: 'x',
  nodeIds: ['n1', 'n2', 'n3'],
  durationMs: 1000,
  timing: runTiming(),
  history: [],
  ops: [],
  faults: [],
  leaderSamples,
});

t.test('a clean handover passes', async (t) => {
  const result = await leaderSampleChecker().check(
    record([
      s(0, 'n1', 'n1', 1),
      s(0, 'n2', 'n1', 1),
      s(500, 'n2', 'n2', 2),
      s(500, 'n3', 'n2', 2),
    ]),
  );
  t.ok(result.ok);
});

t.test('two self-declared leaders in one term fail', async (t) => {
  const result = await leaderSampleChecker().check(
    record([s(0, 'n1', 'n1', 3), s(100, 'n2', 'n2', 3)]),
  );
  t.notOk(result.ok);
  t.match(result.violations[0], { property: 'one-leader-per-term' });
});

t.test('a term going backwards fails', async (t) => {
  const result = await leaderSampleChecker().check(
    record([s(0, 'n1', null, 5), s(100, 'n1', null, 4)]),
  );
  t.match(result.violations[0], { property: 'term-monotonic' });
});

t.test('a wiped and rejoined node starts a new term history (its data generation)', async (t) => {
  const rejoined = { ...s(100, 'n1', null, 0), dataGeneration: 1 };
  const ok = await leaderSampleChecker().check(record([s(0, 'n1', null, 5), rejoined]));
  t.ok(ok.ok, JSON.stringify(ok.violations));
  const back = await leaderSampleChecker().check(
    record([s(0, 'n1', null, 5), { ...s(100, 'n1', null, 6), dataGeneration: 1 }, rejoined]),
  );
  t.match(back.violations[0], { property: 'term-monotonic', message: /^n1\/g1 reported term 0/ });
});

t.test('leaderless stretch', async (t) => {
  const stats = leaderStats(
    [
      s(0, 'n1', 'n1', 1),
      s(0, 'n2', 'n1', 1),
      s(100, 'n1', null, 1, false),
      s(100, 'n2', null, 1),
      s(900, 'n2', 'n2', 2),
      s(900, 'n3', 'n2', 2),
    ],
    3,
  );
  t.equal(stats.leaderlessMaxMs, 800);
  t.equal(stats.leaderTerms, 2);
});

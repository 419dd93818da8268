// Proves the run report pairs fault injects with heals, keeps summary.md tables intact when details
// contain pipes, and renders one self-contained SVG timeline with faults, node roles and ops.
import t from 'tap';
import { faultSpans, renderSummary, renderTimeline } from './report.js';
import { runTiming } from './session.js';
import type { RunRecord } from '../types.js';

const run: RunRecord = {
  runDir: '/tmp/x',
  seed: 1,
  scenario: 'mixed',
  nodeIds: ['n1', 'n2'],
  durationMs: 2000,
  timing: runTiming(),
  history: [],
  ops: [
    {
      opId: 1,
      process: 'p',
      node: 'n1',
      kind: 'lease.acquire',
      args: { name: 'L' },
      invokeMs: 10,
      completeMs: 20,
      outcome: { status: 'ok', httpStatus: 200, value: null },
    },
  ],
  faults: [
    {
      timeMs: 100,
      kind: 'partition',
      action: 'inject',
      targets: ['n1'],
      detail: 'a | b',
      faultId: 1,
    },
    { timeMs: 900, kind: 'partition', action: 'heal', targets: ['n1'], detail: 'heal', faultId: 1 },
    {
      timeMs: 1000,
      kind: 'crash',
      action: 'inject',
      targets: ['n2'],
      detail: 'SIGKILL n2',
      faultId: 2,
    },
  ],
  leaderSamples: [
    {
      timeMs: 0,
      node: 'n1',
      reachable: true,
      leader: 'n1',
      term: 1,
      commitIndex: 1,
      appliedIndex: 1,
      incarnation: 1,
    },
  ],
};

t.test('fault spans pair inject and heal', async (t) => {
  t.match(faultSpans(run.faults), [
    { faultId: 1, startMs: 100, endMs: 900 },
    { faultId: 2, startMs: 1000, endMs: null },
  ]);
});

t.test('summary escapes pipes and lists verdicts', async (t) => {
  const md = renderSummary({ title: 'T', facts: [['seed', '1']], notes: ['n'] }, run, [
    {
      checker: 'c',
      ok: false,
      violations: [{ property: 'p', message: 'broken' }],
      stats: { x: 1 },
      elapsedMs: 3,
    },
  ]);
  t.match(md, /\| 1 \| partition \| a \\\| b \| 0\.1 \| 0\.8 \|/);
  t.match(md, /\| c \| FAIL \| 1 \|/);
  t.match(md, /not healed/);
});

t.test('timeline is one svg with faults, nodes and ops', async (t) => {
  const html = renderTimeline('T', run);
  t.equal(html.match(/<svg/g)?.length, 1);
  t.match(html, /partition/);
  t.match(html, /n1 @0\.0s: term 1 LEADER/);
  t.match(html, /lease\.acquire/);
});

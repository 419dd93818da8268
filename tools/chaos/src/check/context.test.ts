// Proves violation context names who led in which term over a window and the faults overlapping it
// or healed shortly before, and that an early-expiry message carries the leaders at renew and grant.
import t from 'tap';
import { describeContext, faultsNear, leaderAt, leadersDuring } from './context.js';
import { checkLeaseTiming } from './lease-timing.js';
import { DEFAULT_TIMING, HistoryBuilder, ok } from './testing.js';
import type { FaultEvent, LeaderSample } from '../types.js';

const sample = (
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
  commitIndex: null,
  appliedIndex: null,
  incarnation: 1,
});
// n2 leads t3, is paused 3.0–6.5 s; n1 leads t4 from 4.5 s; n2 leads again t5 from 8.0 s.
const samples: LeaderSample[] = [
  sample(1000, 'n2', 'n2', 3),
  sample(1000, 'n1', 'n2', 3),
  sample(2800, 'n2', 'n2', 3),
  sample(3200, 'n2', null, null, false),
  sample(4600, 'n1', 'n1', 4),
  sample(7800, 'n1', 'n1', 4),
  sample(8000, 'n2', 'n2', 5),
  sample(9000, 'n2', 'n2', 5),
];
const faults: FaultEvent[] = [
  {
    timeMs: 3000,
    kind: 'pause',
    action: 'inject',
    targets: ['n2'],
    detail: 'SIGSTOP leader n2',
    faultId: 1,
  },
  {
    timeMs: 6500,
    kind: 'pause',
    action: 'heal',
    targets: ['n2'],
    detail: 'SIGCONT n2',
    faultId: 1,
  },
  {
    timeMs: 7700,
    kind: 'clock',
    action: 'inject',
    targets: ['n1'],
    detail: 'clock rate on leader n1',
    faultId: 2,
  },
  { timeMs: 100, kind: 'crash', action: 'inject', targets: ['n3'], detail: 'old', faultId: 3 },
  { timeMs: 200, kind: 'crash', action: 'heal', targets: ['n3'], detail: 'old', faultId: 3 },
];

t.test('leaders and faults around a window', async (t) => {
  t.same(
    leadersDuring(samples, 7000, 8500).map((l) => `${l.leader}@${l.term}`),
    ['n1@4', 'n2@5'],
  );
  t.same(leaderAt(samples, 7900), { leader: 'n1', term: 4, sampledMs: 7800 });
  t.equal(leaderAt(samples, 500), null);
  const near = faultsNear(faults, 7000, 8500, 5000);
  t.equal(
    near.length,
    2,
    'the pause healed 0.5 s before and the active clock fault; not the old crash',
  );
  t.match(near[0]!, /pause \[3\.0s–6\.5s\] SIGSTOP leader n2/);
  t.match(near[1]!, /clock \[7\.7s–end\]/);
  t.match(
    describeContext(samples, faults, 7000, 8500),
    /leaders n1@t4 4\.6s–7\.8s, n2@t5 8\.0s–9\.0s; faults from/,
  );
});

t.test(
  'an early-expiry message names the leaders at renew and grant and the paused former leader',
  async (t) => {
    const h = new HistoryBuilder();
    const grant = (holder: string, token: number) =>
      ok({ name: 'L', holder, fencingToken: token, ttlMs: 3000 });
    h.add('a', 'lease.acquire', { name: 'L', holder: 'A', ttlMs: 3000 }, 7000, 7010, grant('A', 1));
    h.add(
      'b',
      'lease.acquire',
      { name: 'L', holder: 'B', ttlMs: 3000, waitMs: 5000 },
      7100,
      9000,
      grant('B', 2),
    );
    const r = checkLeaseTiming(h.ops, samples, faults, { timing: DEFAULT_TIMING });
    const v = r.violations.find((x) => x.property === 'early-expiry');
    t.ok(v);
    t.match(v!.message, /leader at renew: n1@t4 .* at grant: n2@t5/);
    t.match(v!.message, /SIGSTOP leader n2/);
    t.match(v!.details, { token: 2, previousToken: 1 });
  },
);

// Proves the fault schedule replays from its seed, honours backend capabilities and topology, keeps
// clock-rate faults inside docs/concepts.md's drift bound and pause lengths around the lease TTL,
// and plans membership faults (replace a node) that `--faults` selects and the default mix holds.
import t from 'tap';
import { createRandom } from '../util/random.js';
import { feasibleKinds, nextFault, planFault, type ScheduleContext } from './schedule.js';
import { defaultFaultKinds, runTiming } from './session.js';
import { describePlan } from './describe.js';
import { faultKinds, parseFaultKinds } from '../faults/index.js';
import type { FaultKind } from '../types.js';

const all: FaultKind[] = [
  'crash',
  'pause',
  'partition',
  'netem',
  'clock',
  'restart-all',
  'rolling-restart',
  'membership',
];
const netns: ScheduleContext = {
  timing: runTiming(),
  leaseTtlMs: 3000,
  capabilities: {
    linkBlocks: true,
    netemLoss: true,
    netemDelay: false,
    clockRate: true,
    wallClockStep: true,
    membership: true,
  },
};
const compose: ScheduleContext = {
  ...netns,
  capabilities: {
    linkBlocks: false,
    netemLoss: false,
    netemDelay: false,
    clockRate: false,
    wallClockStep: false,
    membership: false,
  },
};

t.test('same seed, same schedule; different seed, different schedule', async (t) => {
  const plans = (seed: number) => {
    const r = createRandom(seed);
    return Array.from({ length: 50 }, () => nextFault(r, all, netns));
  };
  t.same(plans(7), plans(7));
  t.notSame(plans(7), plans(8));
});

t.test('feasibleKinds drops what the backend or topology cannot do', async (t) => {
  t.same(feasibleKinds(all, compose.capabilities, 3), [
    'crash',
    'pause',
    'partition',
    'restart-all',
    'rolling-restart',
  ]);
  t.same(feasibleKinds(all, netns.capabilities, 3), all);
  t.same(feasibleKinds(all, netns.capabilities, 5), all);
  t.notOk(
    feasibleKinds(all, netns.capabilities, 2).includes('membership'),
    'two nodes: removing one leaves no cluster',
  );
});

t.test('membership: --faults selects it, the default mix holds it, plans vary', async (t) => {
  t.same(parseFaultKinds('crash, membership'), ['crash', 'membership']);
  t.throws(() => parseFaultKinds('crash,membershipp'), /unknown fault "membershipp".*membership/);
  t.ok(faultKinds.includes('membership'));
  t.ok(defaultFaultKinds.includes('membership'), 'in the default mix');
  const r = createRandom(5);
  const seen = new Set<string>();
  const holdsOutside: number[] = [];
  for (let i = 0; i < 200; i++) {
    const plan = planFault(r, 'membership', netns);
    if (plan.kind !== 'membership') throw new Error('kind');
    if (plan.holdMs < 1_000 || plan.holdMs > 8_000) holdsOutside.push(plan.holdMs);
    seen.add(`${String(plan.params.target)}/${plan.params.removal}`);
  }
  t.same(holdsOutside, [], 'two voters for 1 to 8 s');
  t.same(
    [...seen].sort(),
    ['follower', 'leader', 'random']
      .flatMap((target) => [`${target}/lost-disk`, `${target}/live`])
      .sort(),
    'every target with both removals',
  );
  t.equal(
    describePlan({
      kind: 'membership',
      holdMs: 2_500,
      params: { target: 'leader', removal: 'lost-disk' },
    }),
    'replace leader (SIGKILL, remove, wipe), rejoin after 2.5 s',
  );
  const mixed = createRandom(6);
  const kinds = new Set(
    Array.from({ length: 300 }, () => nextFault(mixed, defaultFaultKinds, netns).plan.kind),
  );
  t.ok(kinds.has('membership'), 'a default mixed schedule plans membership faults');
});

t.test('compose partitions are whole-node isolations only', async (t) => {
  const r = createRandom(1);
  for (let i = 0; i < 200; i++) {
    const plan = planFault(r, 'partition', compose);
    if (plan.kind !== 'partition') throw new Error('kind');
    t.equal(plan.params.shape, 'isolate');
    if (plan.params.shape === 'isolate') t.equal(plan.params.peerOnly, false);
  }
});

t.test(
  'clock rates stay within maxDriftRatio; netem never asks for delay without netem',
  async (t) => {
    const r = createRandom(3);
    let rates = 0;
    for (let i = 0; i < 500; i++) {
      const clock = planFault(r, 'clock', netns);
      if (clock.kind === 'clock' && clock.params.mode === 'rate') {
        rates++;
        t.ok(
          Math.abs(clock.params.rate - 1) <= netns.timing.maxDriftRatio + 1e-9,
          `rate ${clock.params.rate}`,
        );
      }
      const netem = planFault(r, 'netem', netns);
      if (netem.kind === 'netem')
        t.notOk((netem.params.spec.delayMs ?? 0) > 0, 'no delay on a kernel without netem');
    }
    t.ok(rates > 0, 'some rate faults planned');
  },
);

t.test('pauses last 0.3 to 2.2 lease TTLs', async (t) => {
  const r = createRandom(4);
  for (let i = 0; i < 200; i++) {
    const plan = planFault(r, 'pause', netns);
    t.ok(plan.holdMs >= 0.27 * 3000 && plan.holdMs <= 2.2 * 3000, `hold ${plan.holdMs}`);
  }
});

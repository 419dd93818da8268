// Proves the fault schedule replays from its seed, honours backend capabilities, and keeps
// clock-rate faults inside docs/concepts.md's drift bound and pause lengths around the lease TTL.
import t from 'tap';
import { createRandom } from '../util/random.js';
import { feasibleKinds, nextFault, planFault, type ScheduleContext } from './schedule.js';
import { runTiming } from './session.js';
import type { FaultKind } from '../types.js';

const all: FaultKind[] = [
  'crash',
  'pause',
  'partition',
  'netem',
  'clock',
  'restart-all',
  'rolling-restart',
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

t.test('feasibleKinds drops what the backend cannot do', async (t) => {
  t.same(feasibleKinds(all, compose.capabilities), [
    'crash',
    'pause',
    'partition',
    'restart-all',
    'rolling-restart',
  ]);
  t.same(feasibleKinds(all, netns.capabilities), all);
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

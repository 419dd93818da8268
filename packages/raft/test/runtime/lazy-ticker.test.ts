// Proves the lazy ticker (lazy-ticker.ts) on a hand-moved clock: inputs get the ticks that passed
// one short of the due tick, the timer runs the due tick (and tells its target), and ticks beyond
// it after a stall are dropped. Waits on the timer's call, never on elapsed time.
import t from 'tap';
import { LazyTicker } from '../../src/lazy-ticker.js';

function setup(due: number) {
  const clock = { nowMs: 0 };
  const target = {
    due,
    ticks: 0,
    timerCalls: 0,
    wake: null as (() => void) | null,
    tick() {
      this.ticks++;
      this.due = Math.max(1, this.due - 1);
    },
    ticksUntilDue() {
      return this.due;
    },
    afterTimerTicks() {
      this.timerCalls++;
      this.wake?.();
    },
  };
  const ticker = new LazyTicker(10, 1000, () => clock.nowMs, target);
  const timerRan = () => new Promise<void>((r) => (target.wake = r));
  return { clock, target, ticker, timerRan };
}

t.test('inputs get the ticks that passed, one short of the due tick', async (t) => {
  const { clock, target, ticker } = setup(10);
  ticker.start();
  t.teardown(() => ticker.stop());
  clock.nowMs = 35;
  t.equal(ticker.pendingTicks(), 3);
  ticker.catchUp();
  t.equal(target.ticks, 3, 'three counting ticks');
  t.equal(ticker.pendingTicks(), 0);
  clock.nowMs = 200; // 17 ticks passed, 7 due
  ticker.catchUp();
  t.equal(target.ticks, 3 + 6, 'stopped one short of the due tick');
});

t.test('the timer runs the due tick; a stall drops the ticks past it', async (t) => {
  const { clock, target, ticker, timerRan } = setup(2);
  ticker.start();
  t.teardown(() => ticker.stop());
  clock.nowMs = 25; // the due tick (20 ms) has passed
  await timerRan();
  t.equal(target.ticks, 2, 'the counting tick and the due one');
  t.equal(target.timerCalls, 1);

  target.due = 1;
  clock.nowMs = 5_000; // a stall of ~5 s
  await timerRan();
  t.equal(target.ticks, 3, 'one tick, not 500: time stood still during the stall');
  clock.nowMs = 5_005;
  t.equal(ticker.pendingTicks(), 0, 're-anchored at the wake-up');
});

t.test('an input that brings the due tick forward re-arms the timer', async (t) => {
  const { clock, target, ticker, timerRan } = setup(100);
  ticker.start();
  t.teardown(() => ticker.stop());
  target.due = 1; // e.g. a commit notice became pending
  ticker.rearm();
  clock.nowMs = 10;
  await timerRan();
  t.equal(target.ticks, 1);
});

/**
 * Ticks the Raft core on demand instead of waking every `tickMs` (idle CPU: a 10 ms interval alone
 * costs about 1 % of a core on a loaded machine, half of an idle node's use). The core's ticks are
 * the same: tick k of the core stands for `tickMs` of time, and the core sees every tick before any
 * other input; only when the ticks run changes.
 *
 * - The timer is armed for the tick at which the core next has something to do
 *   (RaftCore.ticksUntilDue: an election, a heartbeat, a check-quorum step-down, a commit notice…),
 *   at most `sleepTicksMax` ahead, and earlier again whenever an input moves that tick forward.
 * - Before an input (a message, a proposal…) the ticks that passed are handed over, stopping one
 *   short of the due tick: ticks before it only count, and the due one is left to the timer, which
 *   runs its ticks after the I/O of its event-loop turn (setImmediate). So after a stall, queued
 *   heartbeats reach a follower before its election timer does, as with an interval ticker.
 * - Ticks the timer finds beyond the due one (the process stalled) are dropped: time stands still
 *   during a stall, as it does for an interval timer, which never fires twice to catch up.
 */
import assert from 'node:assert/strict';

/** What the ticker drives: the core's tick, its due tick, and what to do after timer ticks. */
export interface TickTarget {
  /** One tick of the core. */
  tick(): void;
  /** RaftCore.ticksUntilDue: ≥ 1, or +Infinity when nothing is ever due by time alone. */
  ticksUntilDue(): number;
  /** Called after the timer ran ticks (the core may have a Ready). */
  afterTimerTicks(): void;
}

export class LazyTicker {
  readonly #tickMs: number;
  readonly #sleepTicksMax: number;
  readonly #now: () => number;
  readonly #target: TickTarget;
  /** When the last tick handed to the core was due (ms of #now); tick k+1 is due tickMs later. */
  #anchorMs = 0;
  #timer: NodeJS.Timeout | null = null;
  /** When the armed timer fires (ms of #now); meaningless while #timer is null. */
  #armedAtMs = 0;
  #stopped = false;

  constructor(tickMs: number, sleepTicksMax: number, now: () => number, target: TickTarget) {
    assert.ok(tickMs > 0 && sleepTicksMax >= 1, 'tickMs > 0, sleepTicksMax ≥ 1');
    this.#tickMs = tickMs;
    this.#sleepTicksMax = sleepTicksMax;
    this.#now = now;
    this.#target = target;
  }

  start(): void {
    this.#anchorMs = this.#now();
    this.rearm();
  }

  /** Whole ticks passed since the last one handed over (not handed over yet). */
  pendingTicks(): number {
    return Math.max(0, Math.floor((this.#now() - this.#anchorMs) / this.#tickMs));
  }

  /** Before an input: hands over the ticks that passed, one short of the due tick (see above). */
  catchUp(): void {
    const passed = this.pendingTicks();
    if (passed === 0) return;
    const ticks = Math.min(passed, this.#target.ticksUntilDue() - 1);
    for (let i = 0; i < ticks; i++) this.#target.tick();
    this.#anchorMs += ticks * this.#tickMs;
  }

  /** After an input: arms the timer for the due tick if that is earlier than the armed one. */
  rearm(): void {
    if (this.#stopped) return;
    const due = Math.min(this.#target.ticksUntilDue(), this.#sleepTicksMax);
    const atMs = this.#anchorMs + due * this.#tickMs;
    if (this.#timer !== null) {
      if (this.#armedAtMs <= atMs) return;
      clearTimeout(this.#timer);
    }
    this.#armedAtMs = atMs;
    this.#timer = setTimeout(() => setImmediate(() => this.#fire()), atMs - this.#now());
  }

  #fire(): void {
    this.#timer = null;
    if (this.#stopped) return;
    const passed = this.pendingTicks();
    const due = this.#target.ticksUntilDue();
    const ticks = Math.min(passed, due);
    for (let i = 0; i < ticks; i++) this.#target.tick();
    // Past the due tick: the process stalled; drop the rest (time stood still meanwhile).
    this.#anchorMs = passed > ticks ? this.#now() : this.#anchorMs + ticks * this.#tickMs;
    if (ticks > 0) this.#target.afterTimerTicks();
    this.rearm();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}

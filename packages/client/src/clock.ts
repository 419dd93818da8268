/**
 * Time for lease and leadership handles: a monotonic clock and one-shot timers, injectable so tests
 * drive renewals and deadlines without sleeping (docs/architecture.md habit 3). Wall clocks are never used (docs/concepts.md).
 */

/** Opaque timer handle returned by `Clock.setTimer`. */
export type TimerHandle = unknown;

/**
 * Monotonic clock + timers. `now()` is milliseconds on a monotonic clock (never goes back);
 * `setTimer(fn, delayMs)` calls `fn` once, no earlier than `delayMs` from now (later if the event
 * loop stalls); `clearTimer` cancels a pending timer (no-op if it already fired).
 */
export interface Clock {
  now(): number;
  setTimer(fn: () => void, delayMs: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

/** The process clock: `performance.now()` and `setTimeout` (timers are unref'd so they never hold the process open). */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimer: (fn, delayMs) => {
    const t = setTimeout(fn, Math.max(0, delayMs));
    t.unref();
    return t;
  },
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Waits `delayMs` on `clock`; rejects with the signal's reason if `signal` aborts first.
 */
export function sleepMs(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clock.clearTimer(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

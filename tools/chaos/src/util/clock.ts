/** The run clock: monotonic milliseconds since the run's start (types.ts `RunClock`). */
import type { RunClock } from '../types.js';

/** A `RunClock` whose zero is now (performance.now(), so never affected by wall-clock steps). */
export function createRunClock(): RunClock {
  const originMs = performance.now();
  return { now: () => performance.now() - originMs };
}

/**
 * Resolves after `delayMs` or rejects with the signal's reason when it aborts first. The harness
 * uses it to wait out fault durations chosen by the schedule (a fault's length is the test input,
 * not a stand-in for synchronisation).
 */
export function delay(delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * What the client's two self-resuming iterators share — the long-polls of `watchLease`/`observe`
 * (long-poll.ts) and the streaming `watch` (change-watch.ts): an async iterator whose loop runs
 * under one AbortSignal that aborts when the caller's signal does or when the consumer leaves the
 * `for await` (so a request in flight ends at once), and the backoff sleep between two attempts
 * that ends the loop instead of throwing when that signal aborts.
 */
import { backoffDelayMs, type RetryPolicy } from './backoff.js';

/** Sleep and jitter of the backoff between attempts (the client's, or a test's). */
export interface BackoffDeps {
  readonly sleep: (delayMs: number, signal?: AbortSignal) => Promise<void>;
  readonly random: () => number;
}

/**
 * Runs `loop(signal)` as an async iterator. `signal` aborts when `callerSignal` does (with its
 * reason) and when the consumer calls `return` or `throw` (breaking out of `for await`); the
 * listener on `callerSignal` is removed when the loop ends, however it ends.
 */
export function resumingIterator<T>(
  callerSignal: AbortSignal | undefined,
  loop: (signal: AbortSignal) => AsyncGenerator<T, void, undefined>,
): AsyncIterableIterator<T> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted) controller.abort(callerSignal.reason);
  else callerSignal?.addEventListener('abort', onAbort, { once: true });

  async function* run(): AsyncGenerator<T, void, undefined> {
    try {
      yield* loop(controller.signal);
    } finally {
      callerSignal?.removeEventListener('abort', onAbort);
    }
  }

  const generator = run();
  return {
    next: () => generator.next(),
    return: (value?: unknown) => {
      controller.abort();
      return generator.return(value as undefined);
    },
    throw: (error?: unknown) => {
      controller.abort();
      return generator.throw(error);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * Waits the `policy` backoff of the `failures`-th failure in a row (0-based, with jitter) before
 * the next attempt. Resolves true to go on, false when `signal` aborted the wait (the loop ends).
 */
export async function backoffOrStop(
  deps: BackoffDeps,
  policy: RetryPolicy,
  failures: number,
  signal: AbortSignal,
): Promise<boolean> {
  try {
    await deps.sleep(backoffDelayMs(policy, failures, deps.random), signal);
    return true;
  } catch {
    return false;
  }
}

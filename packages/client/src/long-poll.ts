/**
 * Async iterators over long-polls (docs/api.md: `watch`, `observe` answer with `changed: true|false`
 * within `timeoutMs` + 1 s). Breaking out of `for await` aborts the poll in flight at once.
 */
import { TenureError } from './errors.js';
import type { Logger } from './logger.js';
import { backoffOrStop, resumingIterator, type BackoffDeps } from './resuming-iterator.js';

/** How one long-poll iterator fetches: the initial state, then the next change after a state. */
export interface LongPollSource<T> {
  initial(signal: AbortSignal): Promise<T>;
  /** Resolves with the state after the next change, or with null when the poll timed out unchanged. */
  next(after: T, signal: AbortSignal): Promise<T | null>;
}

/** Options of a long-poll iterator. */
export interface LongPollOptions {
  /** Ends the iteration (no error) when aborted. */
  readonly signal?: AbortSignal;
  /** Yield the state found at the start before waiting for changes (default true). */
  readonly initial?: boolean;
}

const POLL_RETRY_POLICY = { attempts: Number.MAX_SAFE_INTEGER, baseDelayMs: 100, maxDelayMs: 2000 };

/**
 * Iterates states from `source`: the initial one (unless `initial: false`), then each change. Transient
 * failures (TenureError `unavailable`/`no_leader`/`timeout`/5xx) are retried with backoff; other errors
 * end the iteration by throwing. Ends cleanly when `signal` aborts or the consumer breaks.
 */
export function longPoll<T>(
  source: LongPollSource<T>,
  options: LongPollOptions,
  deps: BackoffDeps & { logger: Logger },
): AsyncIterableIterator<T> {
  return resumingIterator(options.signal, async function* (signal) {
    let state: T | null = null;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (state === null) {
          state = await source.initial(signal);
          failures = 0;
          if (options.initial !== false) yield state;
          continue;
        }
        const changed = await source.next(state, signal);
        failures = 0;
        if (changed !== null) {
          state = changed;
          yield changed;
        }
      } catch (error) {
        if (signal.aborted) return;
        if (!isTransient(error)) throw error;
        deps.logger.debug?.({ code: (error as TenureError).code }, 'long-poll failed, retrying');
        if (!(await backoffOrStop(deps, POLL_RETRY_POLICY, failures++, signal))) return;
      }
    }
  });
}

function isTransient(error: unknown): boolean {
  if (!(error instanceof TenureError)) return false;
  return (
    error.code === 'unavailable' ||
    error.code === 'no_leader' ||
    error.code === 'timeout' ||
    error.code === 'internal'
  );
}

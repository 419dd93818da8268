/**
 * Waiting on a condition in tests: poll until it holds, fail naming what was awaited. A test waits
 * on events or conditions with a deadline sized for a loaded 2-core machine, never on a sleep.
 */

/** How `pollUntil` polls: the deadline and the pause between checks, both ms. */
export interface PollOptions {
  /** Fail after this long (ms; default 120,000: bounds a broken system, not a slow one). */
  readonly timeoutMs?: number;
  /** Pause between two checks (ms; default 50). */
  readonly intervalMs?: number;
}

/** What `pollUntil` resolves with: the check's value once it is not undefined, null or false. */
export type Polled<T> = Exclude<T, undefined | null | false>;

/**
 * Calls `check` until it returns a value other than undefined, null or false, and resolves with it.
 * A check that throws counts as "not yet". Rejects after `timeoutMs` with an Error naming `what`
 * and the last error the check threw.
 */
export async function pollUntil<T>(
  what: string,
  check: () => T | Promise<T>,
  options: PollOptions = {},
): Promise<Polled<T>> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const intervalMs = options.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = undefined;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== null && value !== false) return value as Polled<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const cause = lastError === undefined ? '' : ` (last error: ${(lastError as Error).message})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

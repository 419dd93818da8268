/**
 * The failover measure shared by both products: after the leader's SIGKILL, keep sending one
 * write at a time to the survivors (round robin) until one is acknowledged.
 */

/** One write attempt against survivor `survivor` (0-based); resolves true when acknowledged. */
export type WriteAttempt = (survivor: number, attempt: number) => Promise<boolean>;

/** Pause between failed attempts, so a survivor that refuses at once is not spun on. */
const RETRY_PAUSE_MS = 5;

/**
 * Milliseconds from `killedAtMs` (performance.now() clock) to the first acknowledged write.
 * Throws when none is acknowledged within `deadlineMs`.
 */
export async function firstAcknowledgedMs(
  killedAtMs: number,
  survivors: number,
  attempt: WriteAttempt,
  deadlineMs: number,
): Promise<number> {
  for (let n = 0; performance.now() - killedAtMs < deadlineMs; n++) {
    const ok = await attempt(n % survivors, n).catch(() => false);
    if (ok) return performance.now() - killedAtMs;
    await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
  }
  throw new Error(`no write acknowledged within ${deadlineMs} ms of the leader's SIGKILL`);
}

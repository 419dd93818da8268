/** Small helpers shared by scenarios: bounded polling and periodic client loops. */
import type { NodeId } from '../types.js';
import type { Session } from '../runner/session.js';
import { delay } from '../util/clock.js';

/**
 * Polls `predicate` every `stepMs` until it returns a non-null value; rejects with `what` after
 * `timeoutMs`. (Bounded polling of observable state, not a sleep standing in for an event.)
 */
export async function waitFor<T>(predicate: () => T | null | Promise<T | null>, timeoutMs: number, what: string, stepMs = 100): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value !== null) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(stepMs);
  }
}

/** Waits for a majority-agreed leader that is not `excluded`. */
export function waitForLeaderOtherThan(session: Session, excluded: NodeId, timeoutMs = 15_000): Promise<NodeId> {
  return waitFor(
    () => {
      const leader = session.cluster.currentLeader();
      return leader !== null && leader !== excluded ? leader : null;
    },
    timeoutMs,
    `a leader other than ${excluded}`,
  );
}

/** Waits for any majority-agreed leader. */
export function waitForAnyLeader(session: Session, timeoutMs = 15_000): Promise<NodeId> {
  return session.cluster.waitForLeader(timeoutMs);
}

/**
 * Runs `step` again and again, at least `intervalMs` apart (start to start), until `signal`
 * aborts. Resolves when the loop ends; a throwing step ends the loop and rejects.
 */
export async function every(intervalMs: number, signal: AbortSignal, step: () => Promise<void>): Promise<void> {
  while (!signal.aborted) {
    const startMs = performance.now();
    await step();
    const restMs = intervalMs - (performance.now() - startMs);
    if (restMs > 0 && !signal.aborted) await delay(restMs).catch(() => undefined);
  }
}

/** Log prefix with the run clock, e.g. `[  12.3s] BC-08: `. */
export function stamp(session: Session, name: string): string {
  return `[${(session.clock.now() / 1000).toFixed(1).padStart(6)}s] ${name}:`;
}

/** Small helpers shared by scenarios: bounded polling and periodic client loops. */
import type { NodeId } from '../types.js';
import type { Session } from '../runner/session.js';
import { delay } from '../util/clock.js';

/**
 * Polls `predicate` every `stepMs` until it returns a non-null value; rejects with `what` after
 * `timeoutMs`. (Bounded polling of observable state, not a sleep standing in for an event.)
 */
export async function waitFor<T>(
  predicate: () => T | null | Promise<T | null>,
  timeoutMs: number,
  what: string,
  stepMs = 100,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value !== null) return value;
    if (performance.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(stepMs);
  }
}

/** Waits for a majority-agreed leader that is not `excluded`. */
export function waitForLeaderOtherThan(
  session: Session,
  excluded: NodeId,
  timeoutMs = 15_000,
): Promise<NodeId> {
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
export async function every(
  intervalMs: number,
  signal: AbortSignal,
  step: () => Promise<void>,
): Promise<void> {
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

/**
 * Scheduling slack for timing bounds in scenarios, ms: what a shared, loaded 2-core CI machine may
 * add to a bound derived from the configured timing (event-loop lag of the harness and the nodes,
 * process wake-up after SIGCONT/restart, a local HTTP round trip). Bounds are `derived + slack`;
 * the slack is not tuned to make a run pass — a violation by more than it is a finding.
 */
export const schedulingSlackMs = 1_000;

/** How a scenario's holder renews a lease it must keep across one leader change (`renewPlan`). */
export interface RenewPlan {
  /** Time between renew attempts, ms (TTL / 3, docs/failure-scenarios.md' "TTL 3 s, renew every 1 s"). */
  readonly intervalMs: number;
  /**
   * Per-attempt client deadline, ms: interval + 1 s, so the `request-timeout-ms` the client sends
   * (deadline − 1 s, client-call.ts) equals the interval and an attempt stuck on a leaderless or
   * paused node gives up by the next tick instead of eating the lease's remaining TTL.
   */
  readonly timeoutMs: number;
  /** ttlMs − 2 × interval: the margin left for scheduling (must be ≥ `schedulingSlackMs`). */
  readonly marginMs: number;
}

/**
 * Renew schedule under which a correct server never makes the holder lose its lease when a leader
 * is lost and replaced. Derivation: cluster time is frozen while there is no leader (docs/concepts.md,
 * §2), so when a leader is back the lease still has ≥ ttl − interval − (renew latency) of cluster
 * time; an attempt in flight then ends within the interval (its server deadline), so the next
 * renew is applied within interval + round trip; margin = ttl − 2 × interval. Throws when the
 * margin is below `schedulingSlackMs` (the scenario would test the machine, not the server).
 */
export function renewPlan(ttlMs: number): RenewPlan {
  const intervalMs = Math.floor(ttlMs / 3);
  const plan = { intervalMs, timeoutMs: intervalMs + 1_000, marginMs: ttlMs - 2 * intervalMs };
  if (plan.marginMs < schedulingSlackMs)
    throw new Error(
      `ttlMs ${ttlMs}: renew margin ${plan.marginMs} ms < scheduling slack ${schedulingSlackMs} ms`,
    );
  return plan;
}

/**
 * Longest a renewing holder may go without a successful renew around one election, ms:
 * electionTimeoutMax (followers notice the lost leader) + 2 × heartbeat (vote round and first
 * commit of the new term) + one renew interval (the holder's next tick) + `schedulingSlackMs`.
 * Source: Raft §5.2 (an election completes one election timeout after the last heartbeat).
 */
export function renewStallBoundMs(
  timing: { readonly electionTimeoutMaxMs: number; readonly heartbeatMs: number },
  plan: RenewPlan,
): number {
  return timing.electionTimeoutMaxMs + 2 * timing.heartbeatMs + plan.intervalMs + schedulingSlackMs;
}

/**
 * The mixed run: the workload from workload/ (or the harness smoke workload) runs against the
 * cluster while a seeded nemesis injects faults of the chosen kinds one at a time (quiet gap,
 * inject, hold, heal); then everything is healed, the cluster gets a recovery window to elect a
 * leader, the workload stops, and the session runs the checkers and writes the run folder.
 */
import type { FaultKind } from '../types.js';
import { injectPlan } from '../faults/index.js';
import { delay } from '../util/clock.js';
import { describePlan } from './describe.js';
import { feasibleKinds, nextFault } from './schedule.js';
import { openSession, type SessionOptions, type SessionResult } from './session.js';
import { createSmokeWorkload } from './smoke-workload.js';

/** Options of a mixed run. */
export interface MixedRunOptions extends Omit<SessionOptions, 'scenario'> {
  readonly durationMs: number;
  readonly faults: readonly FaultKind[];
  /** Lease TTL for the workload and pause lengths, ms. Default 3000 (docs/failure-scenarios.md). */
  readonly leaseTtlMs?: number;
  /** After healing, how long the cluster gets to elect a leader, ms. Default 20,000. */
  readonly recoveryWaitMs?: number;
  /** Workload time after the recovery (post-heal operations), ms. Default 2,000. */
  readonly tailMs?: number;
  readonly keepData?: boolean;
}

/** Runs the mixed chaos run. Throws only when the cluster cannot be set up. */
export async function runMixed(options: MixedRunOptions): Promise<SessionResult> {
  const wallClockFaults = options.faults.includes('clock');
  const session = await openSession({ ...options, scenario: 'mixed', wallClockFaults });
  const log = options.log;
  const leaseTtlMs = options.leaseTtlMs ?? 3_000;
  const random = session.random.fork('nemesis');
  const kinds = feasibleKinds(
    options.faults,
    session.backend.capabilities,
    session.backend.nodeIds.length,
  );
  for (const kind of options.faults)
    if (!kinds.includes(kind))
      session.notes.push(
        `fault ${kind} skipped: the ${session.backend.kind} backend with ${session.backend.nodeIds.length} nodes cannot do it here`,
      );
  if (!session.backend.capabilities.netemDelay && kinds.includes('netem'))
    session.notes.push(
      'netem: this kernel has no netem qdisc, so only loss (iptables statistic) and rate caps (tbf) were injected',
    );
  const stop = new AbortController();
  const workload =
    session.modules.createWorkload?.({
      seed: options.seed,
      random: session.random.fork('workload'),
      ttlMs: leaseTtlMs,
      runDir: session.runDir,
      log,
    }) ?? createSmokeWorkload(session.random.fork('workload'), 4, leaseTtlMs);
  log(
    `workload ${workload.name}; faults ${kinds.join(',') || '(none)'}; ${Math.round(options.durationMs / 1000)} s; seed ${options.seed}`,
  );
  try {
    await workload.start(session.cluster, session.history, stop.signal);
    const endMs = session.clock.now() + options.durationMs;
    while (kinds.length > 0) {
      const { gapMs, plan } = nextFault(random, kinds, {
        timing: session.timing,
        leaseTtlMs,
        capabilities: session.backend.capabilities,
      });
      if (session.clock.now() + gapMs + plan.holdMs > endMs) break;
      await delay(gapMs);
      log(`[${(session.clock.now() / 1000).toFixed(1).padStart(6)}s] plan ${describePlan(plan)}`);
      let fault;
      try {
        fault = session.track(await injectPlan(session.faults, plan));
      } catch (error) {
        log(`inject ${plan.kind} failed: ${(error as Error).message}`);
        session.notes.push(`inject ${plan.kind} failed: ${(error as Error).message}`);
        continue;
      }
      await delay(plan.holdMs);
      await session
        .heal(fault)
        .catch((error: Error) => log(`heal ${plan.kind} failed: ${error.message}`));
    }
    const remainingMs = endMs - session.clock.now();
    if (remainingMs > 0) await delay(remainingMs);
    await session.healAll();
    const leader = await session.cluster
      .waitForLeader(options.recoveryWaitMs ?? 20_000)
      .catch((error: Error) => {
        session.notes.push(`no leader after healing: ${error.message}`);
        return null;
      });
    log(
      `[${(session.clock.now() / 1000).toFixed(1).padStart(6)}s] healed; leader ${leader ?? 'NONE'}`,
    );
    await delay(options.tailMs ?? 2_000);
  } finally {
    stop.abort();
    await workload.stop();
    await session.healAll();
  }
  const result = await session.finish([], [], { keepData: options.keepData ?? false });
  return result;
}

/**
 * The seeded fault schedule: which fault next, with which parameters, held how long, and the quiet
 * gap before it. Pure given the Random stream, so a run's schedule replays from `--seed` (targets
 * named `leader`/`follower` resolve at injection time from the sampled cluster state).
 *
 * Lengths are chosen relative to the cluster's timing: pauses around and beyond the lease TTL
 * (0.3×…2×), partitions from one to ten election timeouts, clock rates inside docs/concepts.md's drift bound.
 */
import type { BackendCapabilities } from '../topology/backend.js';
import type { FaultKind, Random, RunTiming } from '../types.js';
import type { FaultPlan } from '../faults/index.js';
import type { NodeTarget } from '../faults/fault.js';
import type { PartitionParams } from '../faults/partition.js';

/** What the planner needs to know. */
export interface ScheduleContext {
  readonly timing: RunTiming;
  /** The workload's lease TTL, ms (pause lengths are multiples of it). */
  readonly leaseTtlMs: number;
  readonly capabilities: BackendCapabilities;
}

/**
 * Fewest nodes a membership fault needs: with one of them removed, the others must still form a
 * cluster that takes writes (docs/operations.md: keep an odd number of voters, remove one at a time).
 */
export const membershipNodesMin = 3;

/** Quiet time between two faults, ms. */
export const gapMsMin = 1_000;
export const gapMsMax = 4_000;

const pickTarget = (random: Random): NodeTarget => {
  const r = random.next();
  return r < 0.5 ? 'leader' : r < 0.8 ? 'follower' : 'random';
};

/**
 * Kinds the backend and topology can actually perform (clock needs libfaketime; membership needs a
 * backend that wipes and joins, and at least `membershipNodesMin` nodes).
 */
export function feasibleKinds(
  kinds: readonly FaultKind[],
  capabilities: BackendCapabilities,
  nodeCount: number,
): FaultKind[] {
  return kinds.filter((kind) => {
    if (kind === 'clock') return capabilities.clockRate || capabilities.wallClockStep;
    if (kind === 'netem') return capabilities.netemLoss || capabilities.netemDelay;
    if (kind === 'membership') return capabilities.membership && nodeCount >= membershipNodesMin;
    return true;
  });
}

/** Plans one fault of `kind`. */
export function planFault(random: Random, kind: FaultKind, ctx: ScheduleContext): FaultPlan {
  const electionMs = ctx.timing.electionTimeoutMinMs;
  switch (kind) {
    case 'crash':
      return { kind, holdMs: random.int(500, 6_000), params: { target: pickTarget(random) } };
    case 'pause': {
      const factor = random.pick([0.3, 0.7, 1.0, 1.3, 2.0]);
      const holdMs = Math.round(ctx.leaseTtlMs * factor * (0.9 + 0.2 * random.next()));
      return { kind, holdMs, params: { target: pickTarget(random) } };
    }
    case 'partition': {
      const holdMs = random.int(
        Math.max(1_000, electionMs * 1.5),
        Math.max(3_000, electionMs * 10),
      );
      const r = random.next();
      if (!ctx.capabilities.linkBlocks)
        return {
          kind,
          holdMs,
          params: { shape: 'isolate', target: r < 0.6 ? 'leader' : 'follower', peerOnly: false },
        };
      const params: PartitionParams =
        r < 0.25
          ? { shape: 'isolate', target: 'leader', peerOnly: false }
          : r < 0.45
            ? { shape: 'isolate', target: 'leader', peerOnly: true }
            : r < 0.6
              ? { shape: 'split', minority: 'random' }
              : r < 0.75
                ? { shape: 'bridge', target: 'random' }
                : r < 0.85
                  ? { shape: 'one-way-in', target: 'leader' }
                  : r < 0.95
                    ? { shape: 'one-way-out', target: 'leader' }
                    : { shape: 'isolate', target: 'follower', peerOnly: false };
      return { kind, holdMs, params };
    }
    case 'netem': {
      const target = random.next() < 0.5 ? ('all' as const) : pickTarget(random);
      const holdMs = random.int(3_000, 10_000);
      if (ctx.capabilities.netemDelay && random.next() < 0.5) {
        const delayMs = random.int(10, 200);
        return {
          kind,
          holdMs,
          params: {
            target,
            spec: {
              delayMs,
              jitterMs: Math.round(delayMs * 0.3),
              lossPercent: random.int(0, 5),
              reorderPercent: random.int(0, 10),
            },
          },
        };
      }
      return random.next() < 0.7
        ? { kind, holdMs, params: { target, spec: { lossPercent: random.int(5, 30) } } }
        : {
            kind,
            holdMs,
            params: {
              target,
              spec: { rateKbit: random.pick([256, 512, 1024]), lossPercent: random.int(0, 5) },
            },
          };
    }
    case 'clock': {
      if (ctx.capabilities.wallClockStep && (!ctx.capabilities.clockRate || random.next() < 0.5)) {
        return {
          kind,
          holdMs: random.int(3_000, 8_000),
          params: {
            mode: 'wall-step',
            target: random.next() < 0.3 ? 'all' : pickTarget(random),
            offsetSeconds: random.pick([3600, -3600, 86_400, -300]),
          },
        };
      }
      // Inside the drift bound: runs with clock faults must still pass every check (docs/concepts.md).
      const drift = ctx.timing.maxDriftRatio * (0.5 + 0.5 * random.next());
      const rate = Number((random.next() < 0.5 ? 1 + drift : 1 - drift).toFixed(4));
      return {
        kind,
        holdMs: random.int(5_000, 15_000),
        params: { mode: 'rate', target: pickTarget(random), rate },
      };
    }
    case 'restart-all':
      return { kind, holdMs: random.int(500, 3_000) };
    case 'rolling-restart':
      return { kind, holdMs: 0, params: { downMs: random.int(300, 1_500), leaderWaitMs: 10_000 } };
    case 'membership':
      // The hold is the time on two voters, as long as an operator's replacement might take.
      return {
        kind,
        holdMs: random.int(1_000, 8_000),
        params: {
          target: pickTarget(random),
          removal: random.next() < 0.5 ? 'lost-disk' : 'live',
        },
      };
  }
}

/**
 * Relative weights of the kinds: whole-cluster restarts are rarer than single-node faults so a
 * run spends most of its time with a live majority under partial failure.
 */
export const faultWeights: Readonly<Record<FaultKind, number>> = {
  crash: 3,
  pause: 3,
  partition: 3,
  netem: 2,
  clock: 2,
  'restart-all': 1,
  'rolling-restart': 1,
  membership: 1,
};

/** Picks the next kind (weighted by `faultWeights`) and plans it; also returns the quiet gap before it. */
export function nextFault(
  random: Random,
  kinds: readonly FaultKind[],
  ctx: ScheduleContext,
): { gapMs: number; plan: FaultPlan } {
  const gapMs = random.int(gapMsMin, gapMsMax);
  const total = kinds.reduce((sum, k) => sum + faultWeights[k], 0);
  let r = random.next() * total;
  let kind = kinds[kinds.length - 1]!;
  for (const k of kinds) {
    r -= faultWeights[k];
    if (r < 0) {
      kind = k;
      break;
    }
  }
  return { gapMs, plan: planFault(random, kind, ctx) };
}

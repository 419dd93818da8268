/**
 * The fault registry: one `FaultPlan` (kind + parameters + how long to hold it) per injection,
 * and `injectPlan` dispatching it to the fault module. Plans are data, so a schedule can be
 * printed, logged and replayed from its seed.
 */
import type { FaultKind } from '../types.js';
import type { ActiveFault, FaultContext } from './fault.js';
import * as clock from './clock.js';
import * as crash from './crash.js';
import * as membership from './membership.js';
import * as netem from './netem.js';
import * as partition from './partition.js';
import * as pause from './pause.js';
import * as restartAll from './restart-all.js';
import * as rollingRestart from './rolling-restart.js';

/** One planned fault: `holdMs` is how long it stays injected before heal. */
export type FaultPlan =
  | { readonly kind: 'crash'; readonly holdMs: number; readonly params: crash.CrashParams }
  | { readonly kind: 'pause'; readonly holdMs: number; readonly params: pause.PauseParams }
  | {
      readonly kind: 'partition';
      readonly holdMs: number;
      readonly params: partition.PartitionParams;
    }
  | { readonly kind: 'netem'; readonly holdMs: number; readonly params: netem.NetemParams }
  | { readonly kind: 'clock'; readonly holdMs: number; readonly params: clock.ClockParams }
  | { readonly kind: 'restart-all'; readonly holdMs: number }
  | {
      readonly kind: 'rolling-restart';
      readonly holdMs: number;
      readonly params: rollingRestart.RollingRestartParams;
    }
  | {
      readonly kind: 'membership';
      readonly holdMs: number;
      readonly params: membership.MembershipParams;
    };

/** Every fault kind, in the order `--faults` documents them. */
export const faultKinds: readonly FaultKind[] = [
  'crash',
  'pause',
  'partition',
  'netem',
  'clock',
  'restart-all',
  'rolling-restart',
  'membership',
];

/** Parses `--faults a,b,c`. Throws naming the unknown kind. */
export function parseFaultKinds(text: string): FaultKind[] {
  const kinds = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  for (const kind of kinds) {
    if (!(faultKinds as readonly string[]).includes(kind))
      throw new Error(`--faults: unknown fault "${kind}" (known: ${faultKinds.join(', ')})`);
  }
  return kinds as FaultKind[];
}

/** Injects the plan's fault. Throws what the fault module throws. */
export function injectPlan(ctx: FaultContext, plan: FaultPlan): Promise<ActiveFault> {
  switch (plan.kind) {
    case 'crash':
      return crash.inject(ctx, plan.params);
    case 'pause':
      return pause.inject(ctx, plan.params);
    case 'partition':
      return partition.inject(ctx, plan.params);
    case 'netem':
      return netem.inject(ctx, plan.params);
    case 'clock':
      return clock.inject(ctx, plan.params);
    case 'restart-all':
      return restartAll.inject(ctx);
    case 'rolling-restart':
      return rollingRestart.inject(ctx, plan.params);
    case 'membership':
      return membership.inject(ctx, plan.params);
  }
}

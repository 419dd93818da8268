/**
 * Link degradation fault on node egress: random loss and bandwidth caps everywhere; delay,
 * jitter and reorder only where the kernel has the netem qdisc (see topology/netns.ts NetemSpec).
 * Heal clears it.
 */
import {
  activeFault,
  resolveTarget,
  type ActiveFault,
  type FaultContext,
  type NodeTarget,
} from './fault.js';
import type { NetemSpec } from '../topology/netns.js';

/** Parameters: which nodes (`all` or one target) and the degradation. */
export interface NetemParams {
  readonly target: NodeTarget | 'all';
  readonly spec: NetemSpec;
}

/** Human-readable spec, e.g. `delay 50ms±10ms loss 5%`. */
export function describeNetem(spec: NetemSpec): string {
  const parts: string[] = [];
  if ((spec.delayMs ?? 0) > 0)
    parts.push(`delay ${spec.delayMs}ms${(spec.jitterMs ?? 0) > 0 ? `±${spec.jitterMs}ms` : ''}`);
  if ((spec.lossPercent ?? 0) > 0) parts.push(`loss ${spec.lossPercent}%`);
  if ((spec.reorderPercent ?? 0) > 0) parts.push(`reorder ${spec.reorderPercent}%`);
  if ((spec.duplicatePercent ?? 0) > 0) parts.push(`duplicate ${spec.duplicatePercent}%`);
  if ((spec.rateKbit ?? 0) > 0) parts.push(`rate ${spec.rateKbit}kbit`);
  return parts.join(' ') || 'none';
}

/** Installs the degradation. Throws when the backend lacks the needed capability. */
export async function inject(ctx: FaultContext, params: NetemParams): Promise<ActiveFault> {
  const nodes =
    params.target === 'all'
      ? [...ctx.backend.nodeIds]
      : [resolveTarget(ctx, params.target, ctx.backend.nodeIds).node];
  const faultId = ctx.nextFaultId();
  const detail = `${describeNetem(params.spec)} on ${nodes.join(',')}`;
  for (const node of nodes) await ctx.backend.setNetem(node, params.spec);
  ctx.record({ kind: 'netem', action: 'inject', targets: nodes, detail, faultId });
  return activeFault(ctx, faultId, 'netem', nodes, `clear ${detail}`, async () => {
    for (const node of nodes) await ctx.backend.setNetem(node, null);
  });
}

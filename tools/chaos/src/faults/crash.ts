/**
 * Crash fault: SIGKILL one node (leader, follower or random); heal restarts it from its own data
 * dir (docs/concepts.md: a restarted node recovers from its own disk).
 */
import {
  activeFault,
  resolveTarget,
  type ActiveFault,
  type FaultContext,
  type NodeTarget,
} from './fault.js';

/** Parameters of a crash. */
export interface CrashParams {
  readonly target: NodeTarget;
}

/** Kills the target with SIGKILL. Heal: start it again. Throws when the kill fails. */
export async function inject(ctx: FaultContext, params: CrashParams): Promise<ActiveFault> {
  const { node, label } = resolveTarget(ctx, params.target);
  const faultId = ctx.nextFaultId();
  const detail = `SIGKILL ${label}`;
  await ctx.backend.killNode(node);
  ctx.record({ kind: 'crash', action: 'inject', targets: [node], detail, faultId });
  return activeFault(ctx, faultId, 'crash', [node], `restart ${node}`, async () => {
    if (ctx.backend.nodeState(node) === 'stopped') await ctx.backend.startNode(node);
  });
}

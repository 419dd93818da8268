/**
 * Pause fault: SIGSTOP one node (a GC pause / VM freeze, BC-02 and BC-07) for a length chosen
 * around and beyond the lease TTL; heal sends SIGCONT.
 */
import {
  activeFault,
  resolveTarget,
  type ActiveFault,
  type FaultContext,
  type NodeTarget,
} from './fault.js';

/** Parameters of a pause. */
export interface PauseParams {
  readonly target: NodeTarget;
}

/** Stops the target process with SIGSTOP. Heal: SIGCONT. */
export async function inject(ctx: FaultContext, params: PauseParams): Promise<ActiveFault> {
  const { node, label } = resolveTarget(ctx, params.target);
  const faultId = ctx.nextFaultId();
  await ctx.backend.pauseNode(node);
  ctx.record({
    kind: 'pause',
    action: 'inject',
    targets: [node],
    detail: `SIGSTOP ${label}`,
    faultId,
  });
  return activeFault(ctx, faultId, 'pause', [node], `SIGCONT ${node}`, async () => {
    await ctx.backend.resumeNode(node);
  });
}

/**
 * Clock faults through libfaketime (Debian `libfaketime`; measured here: with FAKETIME="+0 xR"
 * Node 20's performance.now(), hrtime, timers and Date all run at rate R):
 * - `rate`: restart the target with its whole clock running at `rate` (within docs/concepts.md's
 *   maxDriftRatio for runs that must pass); heal restarts it at real rate. The restart itself is
 *   part of the fault (a rate cannot change under a running process without a jump).
 * - `wall-step`: step only the wall clock (monotonic untouched) by `offsetSeconds` at run time
 *   (BC-03); heal steps it back. Needs the backend started with wall-clock faults enabled.
 */
import {
  activeFault,
  resolveTarget,
  type ActiveFault,
  type FaultContext,
  type NodeTarget,
} from './fault.js';

/** Clock fault variants. */
export type ClockParams =
  | { readonly mode: 'rate'; readonly target: NodeTarget; readonly rate: number }
  | {
      readonly mode: 'wall-step';
      readonly target: NodeTarget | 'all';
      readonly offsetSeconds: number;
    };

/** Applies the clock fault. Throws when the backend lacks libfaketime support. */
export async function inject(ctx: FaultContext, params: ClockParams): Promise<ActiveFault> {
  const faultId = ctx.nextFaultId();
  if (params.mode === 'rate') {
    const { node, label } = resolveTarget(ctx, params.target);
    // Recorded when the stop begins (a graceful stop of a leader can take seconds and moves
    // leadership), so the fault's bar in faults.jsonl covers the whole disturbance.
    const detail = `clock rate x${params.rate} on ${label} (stop, restart at that rate)`;
    ctx.record({ kind: 'clock', action: 'inject', targets: [node], detail, faultId });
    await ctx.backend.stopNode(node);
    await ctx.backend.startNode(node, { clockRate: params.rate });
    return activeFault(
      ctx,
      faultId,
      'clock',
      [node],
      `clock rate x1 on ${node} (restarted)`,
      async () => {
        await ctx.backend.stopNode(node);
        await ctx.backend.startNode(node);
      },
    );
  }
  const nodes =
    params.target === 'all'
      ? [...ctx.backend.nodeIds]
      : [resolveTarget(ctx, params.target, ctx.backend.nodeIds).node];
  for (const node of nodes) await ctx.backend.setWallClockOffset(node, params.offsetSeconds);
  const detail = `wall clock ${params.offsetSeconds >= 0 ? '+' : ''}${params.offsetSeconds}s on ${nodes.join(',')}`;
  ctx.record({ kind: 'clock', action: 'inject', targets: nodes, detail, faultId });
  return activeFault(
    ctx,
    faultId,
    'clock',
    nodes,
    `wall clock back on ${nodes.join(',')}`,
    async () => {
      for (const node of nodes) await ctx.backend.setWallClockOffset(node, 0);
    },
  );
}

/**
 * Rolling restart: stop (SIGTERM) and start each node in turn, followers first and the leader
 * last, waiting between steps until a majority agrees on a leader again (bounded by
 * `leaderWaitMs`; a step that times out is logged and the roll goes on). The whole roll is the
 * inject; heal only makes sure every node runs.
 */
import { activeFault, type ActiveFault, type FaultContext } from './fault.js';

/** Parameters of a rolling restart. */
export interface RollingRestartParams {
  /** Down time of each node, ms. */
  readonly downMs: number;
  /** Bound on waiting for a leader after each node is back, ms. */
  readonly leaderWaitMs: number;
}

/** Performs the roll (resolves when the last node is back). */
export async function inject(
  ctx: FaultContext,
  params: RollingRestartParams,
): Promise<ActiveFault> {
  const leader = ctx.currentLeader();
  const order = [
    ...ctx.backend.nodeIds.filter((id) => id !== leader),
    ...(leader !== null ? [leader] : []),
  ];
  const faultId = ctx.nextFaultId();
  ctx.record({
    kind: 'rolling-restart',
    action: 'inject',
    targets: order,
    detail: `rolling restart ${order.join(' -> ')}`,
    faultId,
  });
  for (const id of order) {
    await ctx.backend.stopNode(id);
    await new Promise((resolve) => setTimeout(resolve, params.downMs));
    await ctx.backend.startNode(id);
    await ctx.waitForLeader(params.leaderWaitMs).catch(() => undefined);
  }
  return activeFault(ctx, faultId, 'rolling-restart', order, 'rolling restart done', async () => {
    for (const id of order)
      if (ctx.backend.nodeState(id) === 'stopped') await ctx.backend.startNode(id);
  });
}

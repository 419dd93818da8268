/**
 * Power loss: SIGKILL every node at the same moment (BC-26); heal starts them all again from
 * their own disks. Acknowledged writes must survive (docs/concepts.md, fsync before ack).
 */
import { activeFault, type ActiveFault, type FaultContext } from './fault.js';

/** Kills all nodes concurrently. */
export async function inject(ctx: FaultContext): Promise<ActiveFault> {
  const nodes = [...ctx.backend.nodeIds];
  const faultId = ctx.nextFaultId();
  await Promise.all(nodes.map((id) => ctx.backend.killNode(id)));
  ctx.record({
    kind: 'restart-all',
    action: 'inject',
    targets: nodes,
    detail: 'SIGKILL all nodes (power loss)',
    faultId,
  });
  return activeFault(ctx, faultId, 'restart-all', nodes, 'restart all nodes', async () => {
    for (const id of nodes)
      if (ctx.backend.nodeState(id) === 'stopped') await ctx.backend.startNode(id);
  });
}

/**
 * Membership fault: replace a node the way docs/operations.md "Replace a failed node" tells an
 * operator to. Inject: (SIGKILL it, for a lost machine,) remove it through the membership API on a
 * live member, wait for a live removed node to exit on its own (it learns its removal and exits,
 * docs/api.md "Membership"), and wipe its data directory. The cluster then runs on two voters for
 * the hold. Heal: start the node on its empty directory with `--join <a member>`, wait for its
 * `/readyz`, and promote it back to a voter.
 *
 * The rejoined node is a new Raft identity under the old id (term and commit index start from 0):
 * the backend counts the wipe (`dataGeneration`), the leader samples carry it, and the Raft checks
 * compare persistent state only within one identity (check/node-identity.ts).
 */
import type { NodeId } from '../types.js';
import {
  activeFault,
  resolveTarget,
  type ActiveFault,
  type FaultContext,
  type NodeTarget,
} from './fault.js';
import { memberChange, waitReady, waitStopped } from './member-calls.js';

/** How the node leaves: `lost-disk` is SIGKILLed first; `live` is removed while it runs. */
export type RemovalMode = 'lost-disk' | 'live';

/** Parameters of a membership fault. */
export interface MembershipParams {
  readonly target: NodeTarget;
  readonly removal: RemovalMode;
}

/**
 * Bound on each step (a change committed, a node caught up), ms of the run clock: generous, since
 * a catch-up on a loaded 2-core machine takes seconds; it only bounds a broken cluster.
 */
export const membershipStepMaxMs = 120_000;
/** How long a live removed node gets to notice its removal and exit before it is SIGKILLed, ms. */
export const removedExitMaxMs = 30_000;

/**
 * Removes the target and wipes its data. Needs every node running (the cluster keeps a majority of
 * the remaining voters only if none is down). Throws when a node is not running or the removal is
 * not committed in time; a node killed for the removal is then started again on its intact data.
 */
export async function inject(ctx: FaultContext, params: MembershipParams): Promise<ActiveFault> {
  const down = ctx.backend.nodeIds.filter((id) => ctx.backend.nodeState(id) !== 'running');
  if (down.length > 0) throw new Error(`membership fault needs every node running (${down} not)`);
  const { node, label } = resolveTarget(ctx, params.target);
  const others = ctx.backend.nodeIds.filter((id) => id !== node);
  const faultId = ctx.nextFaultId();
  ctx.record({
    kind: 'membership',
    action: 'inject',
    targets: [node],
    detail: `${params.removal === 'lost-disk' ? 'SIGKILL and ' : ''}remove ${label}, wipe its data`,
    faultId,
  });
  const removedMs = await remove(ctx, node, others, params.removal, faultId);
  const exit =
    params.removal === 'live'
      ? await waitStopped(ctx, node, ctx.clock.now() + removedExitMaxMs)
      : null;
  await ctx.backend.killNode(node);
  await ctx.backend.wipeNode(node);
  const how =
    exit === null
      ? ''
      : exit
        ? `; it exited on its own ${((ctx.clock.now() - removedMs) / 1000).toFixed(1)} s after its removal`
        : `; it did not exit within ${removedExitMaxMs / 1000} s of its removal (SIGKILLed)`;
  return activeFault(
    ctx,
    faultId,
    'membership',
    [node],
    `${node} rejoined with --join and promoted${how}`,
    () => rejoin(ctx, node, others),
  );
}

/**
 * Kills `node` for a lost disk, then removes it; resolves with the run time of the committed
 * removal. When the removal fails, a killed node is restarted on its data, the heal is recorded,
 * and the error is rethrown.
 */
async function remove(
  ctx: FaultContext,
  node: NodeId,
  others: readonly NodeId[],
  removal: RemovalMode,
  faultId: number,
): Promise<number> {
  if (removal === 'lost-disk') await ctx.backend.killNode(node);
  const via = removal === 'live' ? [node, ...others] : others;
  try {
    // 404: an earlier attempt whose answer was lost did remove it.
    const deadline = ctx.clock.now() + membershipStepMaxMs;
    await memberChange(ctx, via, 'DELETE', `/v1/cluster/members/${node}`, [200, 404], deadline);
    return ctx.clock.now();
  } catch (error) {
    const restart = ctx.backend.nodeState(node) === 'stopped';
    if (restart) await ctx.backend.startNode(node);
    ctx.record({
      kind: 'membership',
      action: 'heal',
      targets: [node],
      detail: `removal of ${node} failed${restart ? ', restarted on its data' : ''}: ${(error as Error).message}`,
      faultId,
    });
    throw error;
  }
}

/** Starts the wiped node with `--join`, waits until it is ready and promotes it. */
async function rejoin(ctx: FaultContext, node: NodeId, others: readonly NodeId[]): Promise<void> {
  const leader = ctx.currentLeader();
  const via = leader !== null && others.includes(leader) ? leader : ctx.random.pick(others);
  await ctx.backend.startNode(node, { join: ctx.backend.endpoint(via).httpUrl });
  await waitReady(ctx, node, ctx.clock.now() + membershipStepMaxMs);
  const deadline = ctx.clock.now() + membershipStepMaxMs;
  await memberChange(ctx, others, 'POST', `/v1/cluster/members/${node}/promote`, [200], deadline);
}

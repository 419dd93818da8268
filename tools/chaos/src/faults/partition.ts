/**
 * Partition fault (iptables DROP inside the node namespaces): isolate a node fully or from its
 * peers only (BC-08), majority/minority split, bridge (non-transitive), one-way loss into a node,
 * or a client cut. Heal removes this fault's blocks only.
 */
import {
  activeFault,
  resolveTarget,
  type ActiveFault,
  type FaultContext,
  type NodeTarget,
} from './fault.js';
import { bridge, clientCut, isolate, oneWay, split } from './partition-plan.js';
import type { LinkBlock } from '../topology/backend.js';

/** Partition shapes. */
export type PartitionParams =
  | { readonly shape: 'isolate'; readonly target: NodeTarget; readonly peerOnly: boolean }
  | { readonly shape: 'split'; readonly minority: NodeTarget }
  | { readonly shape: 'bridge'; readonly target: NodeTarget }
  | { readonly shape: 'one-way-in'; readonly target: NodeTarget }
  | { readonly shape: 'one-way-out'; readonly target: NodeTarget }
  | {
      readonly shape: 'client-cut';
      readonly clients: readonly string[];
      readonly nodes?: readonly string[];
    };

/** Applies the partition. Throws when the backend cannot block links. */
export async function inject(ctx: FaultContext, params: PartitionParams): Promise<ActiveFault> {
  const nodeIds = ctx.backend.nodeIds;
  const clientIds = ctx.backend.clientAddresses.map((c) => c.id);
  const all = nodeIds.filter(() => true);
  let blocks: LinkBlock[];
  let targets: string[];
  let detail: string;
  switch (params.shape) {
    case 'isolate': {
      const { node, label } = resolveTarget(ctx, params.target, all);
      blocks = isolate(node, nodeIds, clientIds, params.peerOnly);
      targets = [node];
      detail = `${params.peerOnly ? 'peer-only ' : ''}isolate ${label}`;
      break;
    }
    case 'split': {
      const { node, label } = resolveTarget(ctx, params.minority, all);
      const majority = nodeIds.filter((id) => id !== node);
      blocks = split([[node], majority]);
      targets = [node];
      detail = `split [${node}] vs [${majority.join(',')}] (minority ${label})`;
      break;
    }
    case 'bridge': {
      const { node, label } = resolveTarget(ctx, params.target, all);
      const others = nodeIds.filter((id) => id !== node);
      const [a, b] = others;
      if (a === undefined || b === undefined) throw new Error('bridge partition needs 3 nodes');
      blocks = bridge(a, b);
      targets = [a, b];
      detail = `bridge via ${label}: ${a} x ${b}`;
      break;
    }
    case 'one-way-in': {
      const { node, label } = resolveTarget(ctx, params.target, all);
      blocks = oneWay(nodeIds, node);
      targets = [node];
      detail = `one-way: peers -> ${label} dropped`;
      break;
    }
    case 'one-way-out': {
      const { node, label } = resolveTarget(ctx, params.target, all);
      blocks = nodeIds.filter((id) => id !== node).flatMap((id) => oneWay([node], id));
      targets = [node];
      detail = `one-way: ${label} -> peers dropped`;
      break;
    }
    case 'client-cut': {
      const nodes = params.nodes ?? nodeIds;
      blocks = clientCut(params.clients, nodes);
      targets = [...params.clients];
      detail = `cut clients ${params.clients.join(',')} from ${nodes.join(',')}`;
      break;
    }
  }
  const faultId = ctx.nextFaultId();
  await ctx.network.add(faultId, blocks);
  ctx.record({ kind: 'partition', action: 'inject', targets, detail, faultId });
  return activeFault(ctx, faultId, 'partition', targets, `heal ${detail}`, () =>
    ctx.network.remove(faultId),
  );
}

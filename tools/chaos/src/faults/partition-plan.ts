/**
 * Pure partition plans: which directed links to block for each partition shape. Ids are node ids
 * or client ids (`c0`, `c1`, …); the backend turns blocks into iptables rules.
 */
import type { LinkBlock } from '../topology/backend.js';
import type { NodeId } from '../types.js';

/** Blocks both directions between every member of `a` and every member of `b`. */
export function cutBetween(a: readonly string[], b: readonly string[]): LinkBlock[] {
  const blocks: LinkBlock[] = [];
  for (const x of a) {
    for (const y of b) {
      if (x === y) continue;
      blocks.push({ from: x, to: y }, { from: y, to: x });
    }
  }
  return blocks;
}

/**
 * Isolates `node` from the other nodes; with `peerOnly` false also from every client (a dead
 * network card), with `peerOnly` true clients still reach it (BC-08: deposed leader serving reads).
 */
export function isolate(
  node: NodeId,
  nodeIds: readonly NodeId[],
  clientIds: readonly string[],
  peerOnly: boolean,
): LinkBlock[] {
  const others = nodeIds.filter((id) => id !== node);
  return [...cutBetween([node], others), ...(peerOnly ? [] : cutBetween([node], clientIds))];
}

/** Splits nodes into groups that cannot reach each other (clients reach everyone). */
export function split(groups: readonly (readonly NodeId[])[]): LinkBlock[] {
  const blocks: LinkBlock[] = [];
  for (let i = 0; i < groups.length; i++) {
    for (let j = i + 1; j < groups.length; j++) blocks.push(...cutBetween(groups[i]!, groups[j]!));
  }
  return blocks;
}

/** A "bridge" (non-transitive) partition: `a` and `b` cannot talk, every other node reaches both. */
export function bridge(a: NodeId, b: NodeId): LinkBlock[] {
  return cutBetween([a], [b]);
}

/** One-way loss: packets from each of `from` never reach `to` (the reverse direction works). */
export function oneWay(from: readonly string[], to: NodeId): LinkBlock[] {
  return from.filter((f) => f !== to).map((f) => ({ from: f, to }));
}

/** Cuts the given clients off from the given nodes (both directions). */
export function clientCut(clientIds: readonly string[], nodeIds: readonly NodeId[]): LinkBlock[] {
  return cutBetween(clientIds, nodeIds);
}

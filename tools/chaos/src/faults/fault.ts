/**
 * What every fault module shares: the context it acts through and the handle it returns.
 * A fault module exports `inject(ctx, params) → ActiveFault`; `heal()` undoes it. Both log one
 * FaultEvent (faults.jsonl) with the run-clock time, so the timeline and checkers see exactly
 * when the harness acted.
 */
import type { ChaosBackend, LinkBlock } from '../topology/backend.js';
import type { FaultEvent, FaultKind, NodeId, Random, RunClock, RunTiming } from '../types.js';

/** What a fault may use. */
export interface FaultContext {
  readonly backend: ChaosBackend;
  readonly clock: RunClock;
  readonly random: Random;
  readonly timing: RunTiming;
  /** Latest majority-agreed leader (leader sampler), or null. */
  currentLeader(): NodeId | null;
  /** Waits for a majority-agreed leader; rejects after timeoutMs. */
  waitForLeader(timeoutMs: number): Promise<NodeId>;
  /** Appends one event (time stamped here) to faults.jsonl and prints it. */
  record(event: Omit<FaultEvent, 'timeMs'>): FaultEvent;
  /** A fresh fault id (shared by an inject and its heal). */
  nextFaultId(): number;
  /** The run's network blocks, by fault (partition faults add and remove theirs). */
  readonly network: BlockSet;
}

/**
 * The union of every active partition fault's blocks, applied to the backend as one rule set, so
 * overlapping partitions heal independently.
 */
export class BlockSet {
  readonly #backend: ChaosBackend;
  readonly #byFault = new Map<number, readonly LinkBlock[]>();

  constructor(backend: ChaosBackend) {
    this.#backend = backend;
  }

  /** Adds a fault's blocks and applies the union. */
  async add(faultId: number, blocks: readonly LinkBlock[]): Promise<void> {
    this.#byFault.set(faultId, blocks);
    await this.#apply();
  }

  /** Removes a fault's blocks and applies the union. */
  async remove(faultId: number): Promise<void> {
    if (!this.#byFault.delete(faultId)) return;
    await this.#apply();
  }

  /** Removes every block. */
  async clear(): Promise<void> {
    this.#byFault.clear();
    await this.#apply();
  }

  async #apply(): Promise<void> {
    const seen = new Set<string>();
    const union: LinkBlock[] = [];
    for (const blocks of this.#byFault.values()) {
      for (const b of blocks) {
        const key = `${b.from}>${b.to}`;
        if (!seen.has(key)) {
          seen.add(key);
          union.push(b);
        }
      }
    }
    await this.#backend.setBlocks(union);
  }
}

/** An injected fault. `heal` is idempotent and never rejects for a fault already healed. */
export interface ActiveFault {
  readonly faultId: number;
  readonly kind: FaultKind;
  readonly detail: string;
  heal(): Promise<void>;
}

/** Who a node fault targets. */
export type NodeTarget = 'leader' | 'follower' | 'random' | { readonly node: NodeId };

/**
 * Resolves a target to a node id: `leader` uses the sampled leader (falls back to a random node
 * when none is known, and says so in the returned label), `follower` a random non-leader.
 * Only nodes in `eligible` (default: running ones) are chosen. Throws when none is eligible.
 */
export function resolveTarget(
  ctx: FaultContext,
  target: NodeTarget,
  eligible?: readonly NodeId[],
): { node: NodeId; label: string } {
  const nodes =
    eligible ?? ctx.backend.nodeIds.filter((id) => ctx.backend.nodeState(id) === 'running');
  if (nodes.length === 0) throw new Error('no eligible node for the fault');
  if (typeof target === 'object') return { node: target.node, label: target.node };
  const leader = ctx.currentLeader();
  if (target === 'leader') {
    if (leader !== null && nodes.includes(leader))
      return { node: leader, label: `leader ${leader}` };
    const node = ctx.random.pick(nodes);
    return { node, label: `${node} (no leader known)` };
  }
  if (target === 'follower') {
    const followers = nodes.filter((id) => id !== leader);
    const node = ctx.random.pick(followers.length > 0 ? followers : nodes);
    return { node, label: `follower ${node}` };
  }
  const node = ctx.random.pick(nodes);
  return { node, label: node === leader ? `random ${node} (leader)` : `random ${node}` };
}

/** Builds an ActiveFault whose heal runs once and records the heal event. */
export function activeFault(
  ctx: FaultContext,
  faultId: number,
  kind: FaultKind,
  targets: readonly string[],
  detail: string,
  undo: () => Promise<void>,
): ActiveFault {
  let healed: Promise<void> | null = null;
  return {
    faultId,
    kind,
    detail,
    heal: () => {
      healed ??= (async () => {
        await undo();
        ctx.record({ kind, action: 'heal', targets, detail, faultId });
      })();
      return healed;
    },
  };
}

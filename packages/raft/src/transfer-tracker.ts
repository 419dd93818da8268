/**
 * Leadership transfers waiting for their target to become leader (RaftNode.transferLeadership,
 * Raft dissertation §3.10). Each resolves when its target is seen as leader and fails with
 * NotLeaderError when another node is.
 */
import type { NodeId } from './core/types.js';
import { NotLeaderError } from './errors.js';
import { Pending } from './pending.js';

interface PendingTransfer {
  readonly target: NodeId;
  readonly pending: Pending<void>;
}

export class TransferTracker {
  /** Transfers in flight; one per transferLeadership call not yet settled. */
  readonly #transfers = new Set<PendingTransfer>();

  get size(): number {
    return this.#transfers.size;
  }

  /** Waits until `target` leads; TimeoutError at the deadline or on abort. */
  start(target: NodeId, timeoutMs: number, signal: AbortSignal | undefined): Promise<void> {
    const transfer: PendingTransfer = {
      target,
      pending: new Pending<void>(timeoutMs, signal, () => this.#transfers.delete(transfer)),
    };
    this.#transfers.add(transfer);
    return transfer.pending.promise;
  }

  /**
   * The known leader changed to `leaderId` (null: unknown). Transfers to it succeed; while this
   * node is no longer leader, transfers to any other known node fail.
   */
  leaderSeen(leaderId: NodeId | null, selfIsLeader: boolean): void {
    for (const transfer of this.#transfers) {
      if (leaderId === transfer.target) {
        transfer.pending.resolve();
        this.#transfers.delete(transfer);
      } else if (!selfIsLeader && leaderId !== null) {
        transfer.pending.reject(
          new NotLeaderError(leaderId, `leadership went to ${leaderId}, not ${transfer.target}`),
        );
        this.#transfers.delete(transfer);
      }
    }
  }

  /** Rejects every transfer with `err` (the node stopped) and forgets them. */
  failAll(err: Error): void {
    for (const transfer of this.#transfers) transfer.pending.reject(err);
    this.#transfers.clear();
  }
}

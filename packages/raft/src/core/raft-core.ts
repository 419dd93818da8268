/**
 * RaftCore: the pure, deterministic Raft state machine (CONTRACT STUB — implementation pending).
 *
 * Driven only by its inputs: `tick()`, `step(msg)`, `propose(data)`, `readIndex(id)`,
 * `transferLeadership(to)`; time for cluster-time stamps comes from the injected `Clock`,
 * randomness from the injected `Random`. No timers, sockets, disk or Date.now() here.
 * Output is collected into a `Ready` batch (see types.ts for the order the runtime must follow).
 */
import type {
  Clock,
  CoreConfig,
  CoreInitialState,
  Message,
  NodeId,
  ProposeResult,
  Random,
  Ready,
  SoftState,
  HardState,
  LogIndex,
} from './types.js';

export class RaftCore {
  constructor(config: CoreConfig, initial: CoreInitialState, clock: Clock, random: Random) {
    void config; void initial; void clock; void random;
    throw new Error('RaftCore: not implemented yet');
  }
  /** Advance logical time by one tick (election / heartbeat / check-quorum timers). */
  tick(): void { throw new Error('not implemented'); }
  /** Feed one message received from a peer. Messages for other nodes or malformed ones are ignored. */
  step(_msg: Message): void { throw new Error('not implemented'); }
  /** Leader only: append a command entry stamped with the current cluster time. */
  propose(_data: Uint8Array): ProposeResult { throw new Error('not implemented'); }
  /** Request a linearizable read point; answered in Ready.readStates / readFailures by requestId. */
  readIndex(_requestId: number): void { throw new Error('not implemented'); }
  /** Leader only: transfer leadership to `to` (§3.10). Proposals are refused while transferring. */
  transferLeadership(_to: NodeId): void { throw new Error('not implemented'); }
  /** Leader: current cluster time (SPEC §2); others: highest cluster time seen. Never decreases. */
  clusterTimeMs(): number { throw new Error('not implemented'); }
  softState(): SoftState { throw new Error('not implemented'); }
  hardState(): HardState { throw new Error('not implemented'); }
  /** Last index of the local log (persisted or not). */
  lastIndex(): LogIndex { throw new Error('not implemented'); }
  /** Leader only: per-follower replication progress; empty on others. */
  progress(): ReadonlyMap<NodeId, { matchIndex: LogIndex; nextIndex: LogIndex; lastAckTick: number }> {
    throw new Error('not implemented');
  }
  hasReady(): boolean { throw new Error('not implemented'); }
  /** Collect pending output. Call `advance(ready)` after persisting, sending and applying it. */
  ready(): Ready { throw new Error('not implemented'); }
  advance(_ready: Ready): void { throw new Error('not implemented'); }
  /** Throws (assertion) if an internal invariant is broken; tests and the simulator call it every step. */
  checkInvariants(): void { throw new Error('not implemented'); }
}

/**
 * The contract between the Raft runtime and the replicated application (hashicorp/raft's FSM).
 */
import type { EntryType, LogIndex, Term } from './core/types.js';

/**
 * A committed entry as the state machine sees it. `data` is empty for leader no-ops; `config`
 * entries (membership changes, dissertation §4.1) are Raft's own: state machines treat them as no-ops.
 */
export interface AppliedEntry {
  readonly index: LogIndex;
  readonly term: Term;
  /** docs/concepts.md cluster time stamped by the leader; never decreases along the log. */
  readonly clusterTimeMs: number;
  readonly type: EntryType;
  readonly data: Uint8Array;
}

/**
 * A deterministic state machine. `apply` is called exactly once per committed entry, in log order,
 * on every node, and must depend only on (state, entry). Its return value resolves the proposal's
 * promise on the node that proposed it. `snapshot`/`restore` must round-trip exactly, and equal
 * states must give identical snapshot bytes.
 */
export interface StateMachine<R = unknown> {
  apply(entry: AppliedEntry): R;
  snapshot(): Uint8Array;
  /**
   * Optional: the bytes of `snapshot()` in bounded steps (each `next()` a bounded amount of work),
   * for a large state. With it, the runtime takes its periodic snapshots slice by slice with turns
   * of the event loop between them, holding applies meanwhile (RaftNodeApi.holdApplies); nothing is
   * applied between two steps.
   */
  snapshotSlices?(): Iterator<Uint8Array, void, undefined>;
  restore(snapshot: Uint8Array): void;
}

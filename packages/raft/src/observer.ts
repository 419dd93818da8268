/**
 * RaftObserver: optional timings the runtime reports for metrics (the server turns them into
 * Prometheus histograms, docs/operations.md Monitoring). Every callback is called synchronously
 * from the Ready loop; it must be cheap and must not throw (a throw is logged and ignored).
 */

/** A snapshot the runtime took or installed (Raft §7). */
export interface SnapshotInfo {
  /** Last log index the snapshot covers. */
  readonly index: number;
  /** Size of the state-machine bytes. */
  readonly sizeBytes: number;
  /** Taken: StateMachine.snapshot() plus the fsynced save plus compaction; installed: the restore. */
  readonly durationMs: number;
}

/** Hooks of RaftNodeOptions.observer; every one optional. */
export interface RaftObserver {
  /** One durable write of the Ready loop (hard state, entries, snapshot; fsynced), its duration. */
  persisted?(durationMs: number, entries: number): void;
  /** A local snapshot was saved and the log compacted. */
  snapshotTaken?(info: SnapshotInfo): void;
  /** A snapshot sent by the leader replaced this node's state. */
  snapshotInstalled?(info: SnapshotInfo): void;
}

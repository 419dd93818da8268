/**
 * What the comparison bench drives: a running three-node cluster of one product, reached through
 * one client kind. Each system answers the same workloads (`WorkloadId`) with its own requests.
 */
import type { StallReading } from './stalls.js';

/** The workloads of the comparison, each one a loop body per simulated client. */
export const WORKLOAD_IDS = ['pair', 'grant', 'renew', 'handoff', 'read'] as const;
export type WorkloadId = (typeof WORKLOAD_IDS)[number];

/** Human names of the workloads, as printed in the table. */
export const WORKLOAD_TITLES: Readonly<Record<WorkloadId, string>> = {
  pair: 'acquire+release, distinct names',
  grant: 'grant+release of a fresh lease',
  renew: 'renew',
  handoff: 'contended hand-off, one name',
  read: 'linearizable read',
};

/** One operation of one client: resolves true when the system answered as expected. */
export type Op = () => Promise<boolean>;

/** A running system under test, ready for workloads. */
export interface DrivenSystem {
  /** Column label: 'tenure', 'etcd-http' or 'etcd-grpc'. */
  readonly label: string;
  /** Server process ids by node name (the leader's suffixed `-leader`), for CPU accounting. */
  pids(): ReadonlyMap<string, number>;
  /**
   * Sets up client `client` of a workload run tagged `tag` (unique per run: names never collide
   * across runs) and returns its loop body. Setup requests (e.g. granting the lease a renew loop
   * renews) are not measured.
   */
  prepare(workload: WorkloadId, client: number, tag: string): Promise<Op>;
  /**
   * Scrapes each server's stall metrics (stalls.ts), keyed like `pids()`; a node that does not
   * answer is left out. Absent when the product has no such metrics (etcd).
   */
  stalls?(): Promise<ReadonlyMap<string, StallReading>>;
  /** Releases client-side resources (connections). The cluster itself is stopped by its owner. */
  close(): Promise<void>;
}

/** A running cluster that can lose its leader: SIGKILL it and time the first write a survivor acknowledges. */
export interface FailoverCapable {
  /** Milliseconds from SIGKILL of the leader to the first acknowledged write; kills the leader. */
  failoverMs(deadlineMs: number): Promise<number>;
}

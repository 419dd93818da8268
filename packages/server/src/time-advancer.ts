/**
 * docs/concepts.md: "When a lease or candidacy is due, the leader proposes an entry that advances cluster
 * time (no periodic traffic when nothing is due)." One timer, armed on the leader, re-armed after every
 * applied entry and on every leader change, for the earlier of:
 * - `coord.nextDueMs()`: something falls due (a grant, a waiter's deadline, a candidacy);
 * - the *cluster-time checkpoint* (docs/architecture.md "Durable cluster time"): while anything is live
 *   (`nextDueMs()` is not null), the last applied entry's cluster time must not fall more than
 *   `checkpointMs` behind the leader's. Log entries are the only durable carrier of cluster time, so a
 *   restart of every node resumes from the newest committed stamp; the checkpoint bounds what such a
 *   restart loses to `checkpointMs` plus one commit's latency. When nothing is live there is no traffic
 *   (a restart then has nothing whose time matters).
 */
import assert from 'node:assert/strict';
import type { ApplyOutput, CoordState } from '@tenure/coord-state';
import type { RaftNodeApi } from '@tenure/raft';
import type { Logger } from 'pino';
import type { ChangeHub } from './change-hub.js';

/** Encoded `{v:1, command:{type:'time.advance'}, idempotency:null}`. */
export type TimeAdvanceEncoder = () => Uint8Array;

export interface TimeAdvancerOptions {
  readonly raft: RaftNodeApi<ApplyOutput>;
  readonly coord: CoordState;
  readonly hub: ChangeHub;
  readonly encodeTimeAdvance: TimeAdvanceEncoder;
  readonly logger: Logger;
  /** Deadline for one time.advance proposal. */
  readonly proposeTimeoutMs: number;
  /** Wait before retrying a failed proposal (still leader). */
  readonly retryMs: number;
  /**
   * Cluster-time checkpoint interval, ms (default CLUSTER_TIME_CHECKPOINT_MS): while anything is live, a
   * `time.advance` is proposed when the last applied entry is this much older (in cluster time).
   */
  readonly checkpointMs?: number;
}

/**
 * Default checkpoint interval: a quarter of the 1 s docs/concepts.md allows a restart of every node to
 * lose, leaving the rest for a late timer and the checkpoint's own commit on a loaded machine.
 */
export const CLUSTER_TIME_CHECKPOINT_MS = 250;

/** Proposes `time.advance` whenever something is due on the leader. `stop()` ends it. */
export class TimeAdvancer {
  readonly #o: TimeAdvancerOptions;
  #timer: NodeJS.Timeout | null = null;
  /** When #timer fires (cluster time), to avoid re-arming an identical timer on every apply. */
  #armedForMs: number | null = null;
  #inFlight = false;
  #stopped = false;
  readonly #unsubscribe: (() => void)[] = [];

  readonly #checkpointMs: number;

  constructor(o: TimeAdvancerOptions) {
    this.#o = o;
    this.#checkpointMs = o.checkpointMs ?? CLUSTER_TIME_CHECKPOINT_MS;
    assert.ok(this.#checkpointMs > 0, 'checkpointMs must be > 0');
    this.#unsubscribe.push(o.hub.onApply(() => this.#rearm()));
    this.#unsubscribe.push(o.raft.onLeaderChange(() => this.#rearm()));
    this.#rearm();
  }

  stop(): void {
    this.#stopped = true;
    this.#clear();
    for (const u of this.#unsubscribe) u();
  }

  #clear(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#armedForMs = null;
  }

  /**
   * When (cluster time, ms) the next `time.advance` is wanted: the earlier of the next due time and the
   * checkpoint; null when nothing is live.
   */
  #wantedAtMs(): number | null {
    const dueMs = this.#o.coord.nextDueMs();
    if (dueMs === null) return null;
    return Math.min(dueMs, this.#o.coord.lastAppliedTimeMs() + this.#checkpointMs);
  }

  #rearm(): void {
    if (this.#stopped || this.#inFlight) return;
    const status = this.#o.raft.leadership();
    const dueMs = this.#wantedAtMs();
    if (status.role !== 'leader' || dueMs === null) return this.#clear();
    if (this.#armedForMs === dueMs && this.#timer) return;
    this.#clear();
    const delayMs = Math.max(0, Math.ceil(dueMs - status.clusterTimeMs));
    this.#armedForMs = dueMs;
    this.#timer = setTimeout(() => this.#fire(), delayMs);
  }

  #fire(): void {
    this.#timer = null;
    this.#armedForMs = null;
    if (this.#stopped) return;
    const status = this.#o.raft.leadership();
    const dueMs = this.#wantedAtMs();
    if (status.role !== 'leader' || dueMs === null) return;
    if (dueMs > status.clusterTimeMs) return this.#rearm();
    this.#inFlight = true;
    this.#o.raft.propose(this.#o.encodeTimeAdvance(), { timeoutMs: this.#o.proposeTimeoutMs }).then(
      () => {
        this.#inFlight = false;
        this.#rearm();
      },
      (err: unknown) => {
        this.#inFlight = false;
        this.#o.logger.debug({ err }, 'time.advance proposal failed');
        if (this.#stopped) return;
        this.#timer = setTimeout(() => this.#rearm(), this.#o.retryMs);
      },
    );
  }
}

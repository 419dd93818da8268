/**
 * docs/concepts.md: "When a lease or candidacy is due, the leader proposes an entry that advances cluster
 * time (no periodic traffic when nothing is due)." One timer, armed for `coord.nextDueMs()` on the
 * leader, re-armed after every applied entry and on every leader change.
 */
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
}

/** Proposes `time.advance` whenever something is due on the leader. `stop()` ends it. */
export class TimeAdvancer {
  readonly #o: TimeAdvancerOptions;
  #timer: NodeJS.Timeout | null = null;
  /** When #timer fires (cluster time), to avoid re-arming an identical timer on every apply. */
  #armedForMs: number | null = null;
  #inFlight = false;
  #stopped = false;
  readonly #unsubscribe: (() => void)[] = [];

  constructor(o: TimeAdvancerOptions) {
    this.#o = o;
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

  #rearm(): void {
    if (this.#stopped || this.#inFlight) return;
    const status = this.#o.raft.status();
    const dueMs = this.#o.coord.nextDueMs();
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
    const status = this.#o.raft.status();
    const dueMs = this.#o.coord.nextDueMs();
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

/**
 * GrantClock: when each live grant began, in cluster time, so the metrics can observe how long a
 * grant was held when it ends (docs/operations.md, Monitoring). Fed with the change events of each
 * applied entry (coord-state's `ApplyOutput.events`); bounded: past `grantsTrackedMax` live grants
 * new ones are not tracked (their hold time is not observed).
 */
import type { ChangeEvent } from '@tenure/coord-state';

/** What a metrics sink learns from one applied entry's events. */
export interface GrantSink {
  /** A new grant of `kind` (lease, semaphore permit, leadership, session). */
  granted(kind: string): void;
  /** A grant ended for `reason`; `heldMs` when its start was tracked. */
  ended(kind: string, reason: string, heldMs: number | null): void;
}

/** Default bound of tracked live grants (each costs one map entry). */
export const GRANTS_TRACKED_MAX = 1_000_000;

export class GrantClock {
  /** `kind:name:holder:fencingToken` → cluster time of the grant, ms. Size ≤ grantsTrackedMax. */
  readonly #startedAtMs = new Map<string, number>();
  readonly #grantsTrackedMax: number;

  constructor(grantsTrackedMax = GRANTS_TRACKED_MAX) {
    this.#grantsTrackedMax = grantsTrackedMax;
  }

  /** Grants being timed. */
  get size(): number {
    return this.#startedAtMs.size;
  }

  /** Feeds one applied entry's events (in order) at its cluster time. */
  observe(events: readonly ChangeEvent[], clusterTimeMs: number, sink: GrantSink): void {
    for (const e of events) {
      if (e.type === 'granted' || e.type === 'elected') {
        sink.granted(e.kind);
        if (this.#startedAtMs.size < this.#grantsTrackedMax)
          this.#startedAtMs.set(grantKey(e), clusterTimeMs);
      } else if (e.endReason !== undefined) {
        const key = grantKey(e);
        const startMs = this.#startedAtMs.get(key);
        this.#startedAtMs.delete(key);
        sink.ended(e.kind, e.endReason, startMs === undefined ? null : clusterTimeMs - startMs);
      }
    }
  }
}

function grantKey(e: ChangeEvent): string {
  return `${e.kind}:${e.name}:${e.holder ?? e.candidate ?? ''}:${e.fencingToken ?? ''}`;
}

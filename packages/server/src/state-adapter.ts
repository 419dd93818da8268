/**
 * Raft ↔ coordination state adapter: a `StateMachine<ApplyOutput>` that decodes each committed
 * entry's envelope and applies it to the CoordState, then publishes the changed resource keys to
 * the ChangeHub (long-poll wake-ups) and the entry's change events (streaming watch). Leader no-ops
 * apply as `envelope = null` (time only).
 */
import type { AppliedEntry, StateMachine } from '@tenure/raft';
import {
  AUTH_CHANGE_KEY,
  type ApplyOutput,
  type CommandEnvelope,
  type CoordState,
} from '@tenure/coord-state';
import type { ChangeHub } from './change-hub.js';

/** Decoder of a log entry's bytes (coord-state's `decodeEnvelope`); throws on undecodable bytes. */
export type EnvelopeDecoder = (bytes: Uint8Array) => CommandEnvelope;

/** Wraps a CoordState for the Raft runtime. Deterministic: depends only on (state, entry). */
export class CoordStateAdapter implements StateMachine<ApplyOutput> {
  readonly #coord: CoordState;
  readonly #hub: ChangeHub;
  readonly #decode: EnvelopeDecoder;
  /** Metrics hook (metrics.ts), set after the start-up replay; null until then. */
  #observer: ((out: ApplyOutput, clusterTimeMs: number) => void) | null = null;

  constructor(coord: CoordState, hub: ChangeHub, decode: EnvelopeDecoder) {
    this.#coord = coord;
    this.#hub = hub;
    this.#decode = decode;
  }

  apply(entry: AppliedEntry): ApplyOutput {
    let envelope: CommandEnvelope | null = null;
    let undecodable = false;
    if (entry.type === 'command' && entry.data.length > 0) {
      try {
        envelope = this.#decode(entry.data);
      } catch {
        // Same bytes on every node → same decision everywhere: the entry only advances time.
        undecodable = true;
      }
    }
    // CoordState takes integer ms; flooring is monotonic and identical on every replica.
    const out = this.#coord.apply(entry.index, Math.floor(entry.clusterTimeMs), envelope);
    if (out.changed.length > 0 || !undecodable) this.#hub.publish(out.changed, entry.index);
    this.#hub.publishEvents(entry.index, out.events ?? []);
    this.#observer?.(out, Math.floor(entry.clusterTimeMs));
    if (undecodable) {
      return {
        result: {
          ok: false,
          error: { code: 'invalid_argument', message: 'undecodable command entry' },
        },
        changed: out.changed,
      };
    }
    return out;
  }

  /** Calls `observer` with every entry's output from now on (metrics); replaces any earlier one. */
  observeApplied(observer: (out: ApplyOutput, clusterTimeMs: number) => void): void {
    this.#observer = observer;
  }

  snapshot(): Uint8Array {
    return this.#coord.snapshot();
  }

  /** The snapshot in bounded steps (coord-state snapshotSlices); nothing is applied meanwhile. */
  snapshotSlices(): Iterator<Uint8Array, void, undefined> {
    return this.#coord.snapshotSlices();
  }

  restore(snapshot: Uint8Array): void {
    this.#coord.restore(snapshot);
    // Every resource may have changed: wake no one specifically; waiters re-check on their next
    // event. The tokens and roles may have changed too: open watches and long-polls re-check them.
    this.#hub.publish([AUTH_CHANGE_KEY], 0);
    this.#hub.publishRestore(this.#coord.lastAppliedIndex());
  }
}

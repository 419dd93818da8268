/**
 * Drives a step-wise encoder (an iterator whose every `next()` does bounded work, such as the
 * coordination state's `snapshotSlices`) with a turn of the event loop between steps, so timers,
 * sockets and the Raft ticker keep running while a large state is encoded (docs/operations.md
 * "Snapshots of a large state"). The caller keeps the encoded state still meanwhile
 * (RaftNodeApi.holdApplies).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** What `driveSlices` gathered: the bytes of every step, in order, and how many steps it took. */
export interface DrivenSlices {
  readonly parts: readonly Uint8Array[];
  readonly byteLength: number;
  /** Steps taken (`next()` calls that yielded), each followed by a turn of the event loop. */
  readonly steps: number;
}

/**
 * Takes every step of `slices`, yielding to the event loop (setImmediate) after each, and hands
 * each step's bytes to `onSlice` (e.g. a hash update) as well as keeping them. Rejects with what a
 * step throws. `signal` aborts between steps (rejects with its reason).
 */
export async function driveSlices(
  slices: Iterator<Uint8Array, void, undefined>,
  onSlice: (bytes: Uint8Array) => void = () => {},
  signal?: AbortSignal,
): Promise<DrivenSlices> {
  const parts: Uint8Array[] = [];
  let byteLength = 0;
  let steps = 0;
  for (let step = slices.next(); step.done !== true; step = slices.next()) {
    steps++;
    if (step.value.byteLength > 0) {
      parts.push(step.value);
      byteLength += step.value.byteLength;
      onSlice(step.value);
    }
    await nextTurn();
    signal?.throwIfAborted();
  }
  return { parts, byteLength, steps };
}

/** The parts as one array (one copy). */
export function joinSlices(driven: DrivenSlices): Uint8Array {
  const joined = new Uint8Array(driven.byteLength);
  let at = 0;
  for (const part of driven.parts) {
    joined.set(part, at);
    at += part.byteLength;
  }
  return joined;
}

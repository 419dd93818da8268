/**
 * How the simulator names and compares log entries and client commands.
 *
 * A simulated client command is 8 bytes: a unique command id (u32 LE, ≥ 1) then the client id
 * (u32 LE). Two entries are "the same entry" when index, term, type, cluster time and command id
 * agree — enough for the checkers, since each leader creates at most one entry per (index, term).
 */
import assert from 'node:assert/strict';
import type { Entry } from '../core/types.js';

/** Bytes of a simulated command. */
export const COMMAND_SIZE_BYTES = 8;

/** Encode a simulated client command. `commandId` ≥ 1 and unique per run. */
export function encodeCommand(commandId: number, clientId: number): Uint8Array {
  assert.ok(
    Number.isInteger(commandId) && commandId >= 1 && commandId < 2 ** 32,
    'commandId out of range',
  );
  const out = new Uint8Array(COMMAND_SIZE_BYTES);
  const view = new DataView(out.buffer);
  view.setUint32(0, commandId, true);
  view.setUint32(4, clientId, true);
  return out;
}

/** The command id carried by `data`; 0 for empty data (a leader no-op) or foreign data. */
export function commandIdOf(data: Uint8Array): number {
  if (data.length < 4) return 0;
  return (data[0]! | (data[1]! << 8) | (data[2]! << 16) | (data[3]! << 24)) >>> 0;
}

/** True when `a` and `b` are the same log entry (Raft's Log Matching sense). */
export function sameEntry(a: Entry, b: Entry): boolean {
  return (
    a.index === b.index &&
    a.term === b.term &&
    a.type === b.type &&
    a.clusterTimeMs === b.clusterTimeMs &&
    commandIdOf(a.data) === commandIdOf(b.data)
  );
}

/** Short text for reports, e.g. `7@t3 cmd#12 ct=1500`. */
export function describeEntry(e: Entry | undefined): string {
  if (e === undefined) return '(none)';
  const what = e.type === 'command' ? `cmd#${commandIdOf(e.data)}` : e.type;
  return `${e.index}@t${e.term} ${what} ct=${Math.round(e.clusterTimeMs)}`;
}

/**
 * The MessagePack settings of log entries and state snapshots (codec.ts, snapshot.ts): standard
 * maps, so any MessagePack reader can inspect them. Imports msgpackr only (the client's backup check
 * ships it, backup-check.ts).
 */
import { Packr } from 'msgpackr';

/** Shared codec settings for envelopes and snapshots: plain maps, 64-bit ints decoded as numbers. */
export function makePackr(): Packr {
  return new Packr({
    useRecords: false,
    mapsAsObjects: true,
    int64AsType: 'number',
    moreTypes: false,
  });
}

/**
 * The one msgpackr configuration used for the wire (TCP frames) and the disk (level values).
 * Plain maps, no records/structures (so every reader decodes without shared state); `Uint8Array`
 * values travel as msgpack `bin` and decode as Buffers, which validation copies to plain
 * Uint8Arrays (so a retained entry never pins a whole frame).
 */
import { Packr } from 'msgpackr';

/** Creates a Packr with Tenure's settings. One per component: Packr keeps internal buffers. */
export function createPackr(): Packr {
  return new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });
}

/**
 * Latency percentiles for tests, the chaos checker and the benches, all through one HDR histogram
 * library (hdr-histogram-js) rather than hand-rolled sorting.
 */
import * as hdr from 'hdr-histogram-js';

/**
 * An empty latency histogram in whole microseconds, 1 µs … 60 s, 3 significant digits (values are
 * reported within 0.1%). Record with `recordValue(µs)`; a value above 60 s throws.
 */
export function latencyHistogram(): hdr.Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60_000_000,
    numberOfSignificantValueDigits: 3,
  });
}

/** p50, p90, p99 and max of a sample; all null for an empty sample. */
export interface Percentiles {
  readonly p50: number | null;
  readonly p90: number | null;
  readonly p99: number | null;
  readonly max: number | null;
}

/** Values are recorded in thousandths of their unit, so 3 decimals survive (e.g. ms → µs). */
const SCALE = 1000;

/**
 * Percentiles of `values` (any unit, e.g. milliseconds; negative values allowed), within 0.1%
 * (3 significant digits) of their distance from the sample's minimum; `max` is exact.
 */
export function percentiles(values: readonly number[]): Percentiles {
  if (values.length === 0) return { p50: null, p90: null, p99: null, max: null };
  let min = Infinity;
  let max = -Infinity;
  for (const value of values) {
    min = Math.min(min, value);
    max = Math.max(max, value);
  }
  // HDR records only values ≥ 0: record each value's distance from the minimum.
  const histogram = hdr.build({ numberOfSignificantValueDigits: 3, autoResize: true });
  for (const value of values) histogram.recordValue(Math.round((value - min) * SCALE));
  const at = (p: number): number => Math.min(max, min + histogram.getValueAtPercentile(p) / SCALE);
  const result = { p50: at(50), p90: at(90), p99: at(99), max };
  histogram.destroy();
  return result;
}

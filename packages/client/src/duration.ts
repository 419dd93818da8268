/**
 * Human durations for the CLI: `500ms`, `10s`, `1.5s`, `1m`, `2h`, or a bare integer of milliseconds.
 */

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses `text` into integer milliseconds. Accepts `<number><unit>` with unit ms|s|m|h (number may
 * have a fraction) or a bare non-negative integer (ms). Throws RangeError naming the input when it is
 * malformed, negative, not a whole number of ms, or above Number.MAX_SAFE_INTEGER.
 */
export function parseDurationMs(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (match === null)
    throw new RangeError(`invalid duration "${text}": use e.g. 500ms, 10s, 1m, 2h`);
  const amount = Number(match[1]);
  const unit = match[2];
  if (unit === undefined && !Number.isInteger(amount))
    throw new RangeError(`invalid duration "${text}": a bare number is whole milliseconds`);
  const ms = amount * (UNIT_MS[unit ?? 'ms'] ?? 1);
  if (!Number.isInteger(ms))
    throw new RangeError(`invalid duration "${text}": not a whole number of milliseconds`);
  if (!Number.isSafeInteger(ms)) throw new RangeError(`invalid duration "${text}": too large`);
  return ms;
}

/** Formats milliseconds for humans: `850ms`, `12.5s`, `3m20s`. */
export function formatDurationMs(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(3))}s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds === 0 ? `${minutes}m` : `${minutes}m${seconds}s`;
}

/**
 * Parsers of the CLI's flag and argument values. Each throws UsageError (exit 2) naming the flag, so a
 * bad value never reaches the server.
 */
import type { JsonValue } from '../contract.js';
import { parseDurationMs } from '../duration.js';
import { UsageError } from './exit-codes.js';

/**
 * Parses a duration flag (`10s`, `500ms`, `1m`, `2h`) into ms; usage error naming the flag on bad
 * input. A unit is required (a bare `5` is ambiguous: 5 ms or 5 s?), except for a bare `0`.
 */
export function durationArg(flag: string): (value: string) => number {
  return (value) => {
    const bare = /^\s*(\d+(?:\.\d+)?)\s*$/.exec(value);
    if (bare !== null && Number(bare[1]) !== 0)
      throw new UsageError(
        `${flag}: "${value}" needs a unit, e.g. ${bare[1]}s or ${bare[1]}ms (units: ms, s, m, h)`,
      );
    try {
      return parseDurationMs(value);
    } catch (error) {
      throw new UsageError(`${flag}: ${(error as Error).message}`);
    }
  };
}

/** Parses a non-negative safe integer flag (`--token`, `--limit`); usage error naming the flag. */
export function integerArg(flag: string): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
      throw new UsageError(`${flag}: expected a non-negative integer, got "${value}"`);
    return Number(value);
  };
}

/** A value argument: JSON when it parses (`42`, `{"a":1}`, `"x"`), otherwise the raw string. */
export function parseValueArg(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/** Splits `--endpoints` / TENURE_ENDPOINTS (comma-separated, `host:port` or URLs). */
export function parseEndpoints(text: string): string[] {
  const endpoints = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e.length > 0)
    .map((e) => (e.includes('://') ? e : `http://${e}`));
  if (endpoints.length === 0)
    throw new UsageError('--endpoints: at least one endpoint is required');
  return endpoints;
}

/** Quotes `text` for a POSIX shell when it has characters a shell would treat specially. */
export function shellQuote(text: string): string {
  return /^[\w.:@%+=,/-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/** The client package's version, read once from its package.json (the one source of it). */
import { readFileSync } from 'node:fs';

/** `version` of @tenure/client's package.json (dist/cli/ → ../../package.json). */
export function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  const version = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === 'string' ? version : 'unknown';
}

/** The version of @tenure/server, for `--version` of tenure-server and the launcher. */
import { readFileSync } from 'node:fs';

/** `version` of packages/server/package.json (this file runs from dist/config/). */
export function serverVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

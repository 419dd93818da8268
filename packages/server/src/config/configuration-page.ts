/**
 * docs/configuration.md's generated tables: the server's and the launcher's settings. Run as a
 * script (`npm run docs:config`) it rewrites the page in place; `--check` exits 1 if it is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LAUNCHER_SETTINGS } from '../cluster/launcher-settings.js';
import { replaceGenerated, sameTables, settingsTable } from './docs-table.js';
import { SERVER_SETTINGS } from './server-settings.js';

/** docs/configuration.md of the repository (this file runs from packages/server/dist/config/). */
export const CONFIGURATION_PAGE = fileURLToPath(
  new URL('../../../../docs/configuration.md', import.meta.url),
);

/** `page` with both generated tables brought up to date. */
export function renderConfigurationPage(page: string): string {
  const withServer = replaceGenerated(page, 'server-settings', settingsTable(SERVER_SETTINGS));
  return replaceGenerated(withServer, 'launcher-settings', settingsTable(LAUNCHER_SETTINGS));
}

function run(): void {
  const page = readFileSync(CONFIGURATION_PAGE, 'utf8');
  const fresh = renderConfigurationPage(page);
  if (process.argv.includes('--check')) {
    if (!sameTables(fresh, page)) {
      process.stderr.write('docs/configuration.md is stale: run npm run docs:config\n');
      process.exit(1);
    }
    return;
  }
  writeFileSync(CONFIGURATION_PAGE, fresh);
  process.stdout.write(`wrote ${CONFIGURATION_PAGE}\n`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) run();

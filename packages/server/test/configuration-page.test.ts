// Proves docs/configuration.md carries exactly the settings tables generated from the code (run `npm run docs:config` after changing a setting).
import { readFileSync } from 'node:fs';
import t from 'tap';
import { LAUNCHER_SETTINGS } from '../src/cluster/launcher-settings.js';
import { CONFIGURATION_PAGE, renderConfigurationPage } from '../src/config/configuration-page.js';
import { sameTables } from '../src/config/docs-table.js';
import { SERVER_SETTINGS } from '../src/config/server-settings.js';

t.test('docs/configuration.md is up to date with the settings tables', async (t) => {
  const page = readFileSync(CONFIGURATION_PAGE, 'utf8');
  t.ok(
    sameTables(renderConfigurationPage(page), page),
    'committed page equals the generated one (else run npm run docs:config)',
  );
  for (const s of [...Object.values(SERVER_SETTINGS), ...Object.values(LAUNCHER_SETTINGS)])
    t.match(page, `\`--${s.flag}\``, `the page lists --${s.flag}`);
});

t.test('the comparison catches a changed default', async (t) => {
  const page = readFileSync(CONFIGURATION_PAGE, 'utf8');
  const changed = page.replace(/(`TENURE_HEARTBEAT_MS` *\| *)100 /, '$150 ');
  t.not(changed, page, 'the row is in the page');
  t.notOk(sameTables(renderConfigurationPage(changed), changed), 'a hand-edited default is caught');
});

/**
 * Markdown of a settings table, and the generated regions of docs/configuration.md: between
 * `<!-- generated:NAME -->` and `<!-- end:NAME -->` stands exactly `settingsTable(table)`.
 * `npm run docs:config` rewrites them; a test fails when the committed page differs (compared
 * with `sameTables`, so prettier's column padding does not count).
 */
import type { SettingsTable } from './read-settings.js';
import { SERVER_SETTINGS } from './server-settings.js';

/** One markdown table row per setting: flag, env, default, range, unit, meaning. */
export function settingsTable(table: SettingsTable = SERVER_SETTINGS): string {
  const cell = (text: string): string => text.replace(/\|/g, '\\|');
  const rows = Object.values(table).map((s) =>
    [
      `\`--${s.flag}\``,
      `\`${s.env}\``,
      cell(s.defaultText),
      cell(s.rangeText),
      s.unit ?? '',
      cell(s.doc),
    ].join(' | '),
  );
  return [
    '| flag | env | default | range | unit | meaning |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n');
}

/** `page` with the region `name` replaced by `body`. Throws if the markers are missing. */
export function replaceGenerated(page: string, name: string, body: string): string {
  const begin = `<!-- generated:${name} -->`;
  const end = `<!-- end:${name} -->`;
  const i = page.indexOf(begin);
  const j = page.indexOf(end);
  if (i < 0 || j < i) throw new Error(`markers ${begin} … ${end} not found`);
  return `${page.slice(0, i + begin.length)}\n\n${body}\n\n${page.slice(j)}`;
}

/** `text` with every markdown table row's cells trimmed and separator cells written `---`. */
function normalizeTables(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      if (!line.startsWith('|')) return line;
      const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
      return cells.map((c) => (/^:?-+:?$/.test(c) ? '---' : c)).join('|');
    })
    .join('\n');
}

/** Whether two pages are equal up to table padding. */
export function sameTables(a: string, b: string): boolean {
  return normalizeTables(a) === normalizeTables(b);
}

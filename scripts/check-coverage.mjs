#!/usr/bin/env node
// Checks the coverage of the last `npm test` (tap collects it into .tap/coverage) against a floor
// per package. Prints one line per package with its figures and exits 1 if any is below its floor.
//
//   npm run coverage:check        (after `npm test`; .ci/run does both)
//
// Each floor sits a few points below the figure measured when it was set, so a change that drops
// a package's coverage noticeably fails CI; raise a floor when the figure rises.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

/**
 * Minimum percentages per package (lines, branches, functions): the figures of a whole `npm test`
 * on a clean clone, minus about 3 points. Measured 2026-12-01: raft 97.8 / 93.3 / 95.1,
 * coord-state 99.2 / 95.8 / 97.9, server 97.1 / 88.9 / 92.9, client 97.2 / 90.8 / 96.3.
 */
const FLOORS = {
  'packages/raft': { lines: 94, branches: 90, functions: 92 },
  'packages/coord-state': { lines: 96, branches: 92, functions: 94 },
  'packages/server': { lines: 94, branches: 85, functions: 89 },
  'packages/client': { lines: 94, branches: 87, functions: 93 },
};
const METRICS = ['lines', 'branches', 'functions'];

const root = resolve(import.meta.dirname, '..');
// tap writes the summary from the raw V8 data of the last run; full files must be listed too.
execFileSync('npx', ['tap', 'report', 'json-summary', '--show-full-coverage'], {
  cwd: root,
  stdio: ['ignore', 'ignore', 'inherit'],
});
const summary = JSON.parse(
  readFileSync(resolve(root, '.tap/report/coverage-summary.json'), 'utf8'),
);

/** Sums the per-file counts of the sources (src/) of each package; test helpers do not count. */
function totalsByPackage() {
  const totals = new Map();
  for (const [file, counts] of Object.entries(summary)) {
    if (file === 'total') continue;
    const path = relative(root, file);
    const pkg = Object.keys(FLOORS).find((p) => path.startsWith(`${p}/src/`));
    if (pkg === undefined) continue;
    const sums =
      totals.get(pkg) ?? Object.fromEntries(METRICS.map((m) => [m, { total: 0, covered: 0 }]));
    for (const m of METRICS) {
      sums[m].total += counts[m].total;
      sums[m].covered += counts[m].covered;
    }
    totals.set(pkg, sums);
  }
  return totals;
}

const totals = totalsByPackage();
let failed = 0;
for (const [pkg, floor] of Object.entries(FLOORS)) {
  const sums = totals.get(pkg);
  if (sums === undefined && floor === null) {
    console.log(`coverage ${pkg}: no data (no floor set)`);
    continue;
  }
  if (sums === undefined) {
    console.log(`coverage ${pkg}: no data (did \`npm test\` run?) FAILED`);
    failed++;
    continue;
  }
  const parts = [];
  let below = false;
  for (const m of METRICS) {
    const pct = sums[m].total === 0 ? 100 : (100 * sums[m].covered) / sums[m].total;
    const low = floor !== null && pct < floor[m];
    below ||= low;
    const limit = floor === null ? 'no floor set' : `floor ${floor[m]}%`;
    parts.push(`${m} ${pct.toFixed(1)}% (${limit})${low ? ' BELOW' : ''}`);
  }
  console.log(`coverage ${pkg}: ${parts.join(', ')}${below ? ' FAILED' : ''}`);
  if (below) failed++;
}
process.exitCode = failed === 0 ? 0 : 1;

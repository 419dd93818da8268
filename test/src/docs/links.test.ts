// Proves the repository stands alone: every relative link in every tracked Markdown file resolves
// to a file inside the repository, and no tracked file points at documents outside it.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Files git tracks (plus untracked, not ignored), relative to the repository root. */
function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  return out.split('\n').filter((f) => f !== '' && existsSync(join(repoRoot, f)));
}

/** Relative link targets of a Markdown text: `[text](target)` minus URLs, anchors and mailto. */
function relativeLinks(markdown: string): string[] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const links: string[] = [];
  for (const m of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    links.push(target.split('#')[0]!);
  }
  return links;
}

t.test('relativeLinks finds relative targets and skips URLs, anchors and code', async (t) => {
  const md = '[a](docs/x.md#y) [b](https://e.com) [c](#top) `[d](no.md)`\n```\n[e](no2.md)\n```';
  t.same(relativeLinks(md), ['docs/x.md']);
});

t.test('every relative Markdown link resolves inside the repository', async (t) => {
  const files = trackedFiles().filter((f) => f.endsWith('.md'));
  t.ok(files.includes('README.md'), 'the README is among the checked files');
  const broken: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(repoRoot, file), 'utf8');
    for (const target of relativeLinks(text)) {
      const path = resolve(repoRoot, dirname(file), decodeURIComponent(target));
      const inside = !relative(repoRoot, path).startsWith('..');
      if (!inside || !existsSync(path)) broken.push(`${file} → ${target}`);
    }
  }
  t.same(broken, [], 'broken or outside links');
});

/** Citations of documents a clone does not have (the project's own contract lives in docs/). */
const OUTSIDE_CITATION = new RegExp(
  ['\\.\\./shared/', 'SPEC §', 'FAILURE-SCENARIOS', 'STYLE habit'].join('|'),
);

t.test('no tracked file points at documents outside the repository', async (t) => {
  const offenders: string[] = [];
  for (const file of trackedFiles()) {
    if (file === 'package-lock.json' || file === 'test/src/docs/links.test.ts') continue;
    const text = readFileSync(join(repoRoot, file), 'utf8');
    if (OUTSIDE_CITATION.test(text)) offenders.push(file);
  }
  t.same(offenders, [], 'files citing documents outside the repository');
});

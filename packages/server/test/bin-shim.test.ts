// Proves the committed `tenure-server` shim (what npm links onto the PATH at install time) is executable and, before a build, says to run `npm run build` instead of crashing.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const SHIM = fileURLToPath(new URL('../bin/tenure-server.js', import.meta.url));

t.test('the shim is executable and has a node shebang', async (t) => {
  t.ok((statSync(SHIM).mode & 0o111) !== 0, 'mode has x bits');
  const head = spawnSync('head', ['-1', SHIM], { encoding: 'utf8' }).stdout;
  t.equal(head.trim(), '#!/usr/bin/env node');
});

t.test('without dist/ the shim says to build first', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tenure-shim-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'bin'));
  // ESM like the package (type: module).
  copyFileSync(SHIM, join(dir, 'bin', 'tenure-server.mjs'));
  const r = spawnSync(process.execPath, [join(dir, 'bin', 'tenure-server.mjs'), '--help'], {
    encoding: 'utf8',
  });
  t.equal(r.status, 1);
  t.match(r.stderr, 'tenure-server: not built yet; run `npm run build` in the repository first');
});

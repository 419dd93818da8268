// Proves the committed `tenure` shim (bin/tenure.js) that npm links onto the PATH at install time:
// it is an executable node script, and before the build it says to build instead of crashing.
import t from 'tap';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SHIM = fileURLToPath(new URL('../bin/tenure.js', import.meta.url));

t.test('bin/tenure.js is an executable node script', async (t) => {
  t.ok((statSync(SHIM).mode & 0o111) === 0o111, 'mode has x for user, group and other');
  t.match(readFileSync(SHIM, 'utf8'), /^#!\/usr\/bin\/env node\n/);
});

t.test('without dist/ the shim exits 1 telling to run the build', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tenure-shim-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'bin'));
  copyFileSync(SHIM, join(dir, 'bin', 'tenure.js'));
  const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(dir, 'bin', 'tenure.js'), '--version'],
      (error, _out, stderr) =>
        resolve({ code: error === null ? 0 : (error.code as number), stderr }),
    );
  });
  t.equal(result.code, 1);
  t.match(result.stderr, /run npm run build first/);
});

#!/usr/bin/env node
// The `tenure-server` command: runs the built server (../dist/main.js). Committed so that npm can
// link it onto the PATH at install time, before anything is built.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(
    'tenure-server: not built yet; run `npm run build` in the repository first\n',
  );
  process.exit(1);
}
await import(main.href);

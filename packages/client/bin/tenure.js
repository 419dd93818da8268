#!/usr/bin/env node
// The `tenure` command. Committed (not built) so that npm can link it onto the PATH at install time,
// before dist/ exists; it runs the compiled CLI, or says how to build it.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write(
    'tenure: the CLI is not built yet (dist/cli/main.js is missing): run npm run build first\n',
  );
  process.exit(1);
}
await import(cli.href);

#!/usr/bin/env node
// `npm start` / `npm run node`: build the repository (tsc -b), then run the local launcher in THIS
// process. npm signals only its direct child; keeping build and launcher in one process (started
// with `exec`, no shell in between) means a SIGTERM to `npm start` reaches the launcher, which
// stops every node, exactly as Ctrl-C does. Arguments go to the launcher (see --help).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const root = new URL('..', import.meta.url);

const launcher = new URL('../packages/server/dist/cluster/launcher.js', import.meta.url);
const dashDash = process.argv.indexOf('--', 2);
// The launcher's own flags: what follows `--` goes to the nodes.
const args = process.argv.slice(2, dashDash < 0 ? undefined : dashDash);
// --help needs no fresh build when one exists (a fresh clone builds first: the help is built code).
if ((args.includes('--help') || args.includes('-h')) && existsSync(launcher)) {
  await import(launcher.href);
} else {
  startAfterBuild();
}

function startAfterBuild() {
  // tsc -b rebuilds only what changed: usually a few seconds; a first build takes about a minute.
  process.stdout.write(
    '[launcher] checking the build (tsc -b; a first build takes about a minute)…\n',
  );
  const build = spawn(process.execPath, [tsc, '-b'], { cwd: root, stdio: 'inherit' });
  const stopBuild = (signal) => {
    build.kill(signal);
    process.exitCode = 1;
  };
  process.on('SIGINT', stopBuild);
  process.on('SIGTERM', stopBuild);
  build.on('exit', (code, signal) => {
    process.off('SIGINT', stopBuild);
    process.off('SIGTERM', stopBuild);
    if (code !== 0 || process.exitCode === 1) {
      process.stderr.write(`[launcher] build ${signal ? `stopped by ${signal}` : 'failed'}\n`);
      process.exit(1);
    }
    void import(launcher.href);
  });
}

#!/usr/bin/env node
/**
 * Entry point of the `tenure` binary: wires process argv/streams/env and SIGINT/SIGTERM into `main`
 * (cli.ts) and exits with its code once stdout has drained.
 */
import { main } from './cli.js';

const interrupt = new AbortController();
const onSignal = (): void => interrupt.abort(new Error('interrupted'));
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);
// Hold the process open while a command waits for Ctrl-C (lease timers are unref'd by design).
const keepAlive = setInterval(() => undefined, 1 << 30);

const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  interrupt: interrupt.signal,
});
clearInterval(keepAlive);
process.stdout.write('', () => process.exit(code));

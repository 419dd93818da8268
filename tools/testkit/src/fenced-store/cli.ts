/**
 * Runs the fenced store as its own process: `node tools/testkit/dist/fenced-store/cli.js [--host H]
 * [--port P] [--log FILE]`. Prints one JSON line `{"url": ...}` once listening; stops on SIGINT /
 * SIGTERM (flushing the log). Times in the log are ms since this process started (monotonic), so
 * they are comparable with a run clock only when started together; the in-process store the
 * workload starts shares the run clock exactly.
 */
import { parseArgs } from 'node:util';
import { startFencedStore } from './server.js';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    log: { type: 'string' },
  },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be an integer 0-65535, got ${values.port}`);
  process.exit(2);
}
const originMs = performance.now();
const server = await startFencedStore({
  host: values.host,
  port,
  now: () => performance.now() - originMs,
  ...(values.log !== undefined ? { logPath: values.log } : {}),
});
console.log(JSON.stringify({ url: server.url }));
const stop = (): void => {
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

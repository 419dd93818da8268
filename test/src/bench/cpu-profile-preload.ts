/**
 * Preload for `api-bench --profile DIR` (loaded into server processes with NODE_OPTIONS=--import,
 * because `--cpu-prof` is not allowed in NODE_OPTIONS): starts the V8 CPU profiler at start-up and
 * writes `DIR/<TENURE_CPU_PROF_NAME or node>-<pid>.cpuprofile` when the process exits normally
 * (graceful stop; a SIGKILL writes nothing). DIR comes from env TENURE_CPU_PROF_DIR.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.TENURE_CPU_PROF_DIR;
if (dir !== undefined && dir.length > 0) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 200 });
  session.post('Profiler.start');
  process.on('exit', () => {
    // In-thread inspector sessions dispatch synchronously: the callback runs before post returns.
    session.post('Profiler.stop', (err, result) => {
      if (err === null)
        writeFileSync(
          join(
            dir,
            `${process.argv.includes('--id') ? process.argv[process.argv.indexOf('--id') + 1] : 'node'}-${process.pid}.cpuprofile`,
          ),
          JSON.stringify(result.profile),
        );
    });
  });
}

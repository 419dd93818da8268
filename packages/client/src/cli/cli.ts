/**
 * The `tenure` command line (docs/api.md describes the routes behind each command): leases,
 * elections, KV, cluster status, sessions and semaphores over TenureClient. `main(argv, io)` runs one invocation in-process
 * and resolves with the exit code (see exit-codes.ts), so tests drive it with injected argv, output
 * streams, env and an interrupt signal. Each command group lives in ./commands.
 */
import { Command, CommanderError } from 'commander';
import { durationArg } from './args.js';
import { addAuthCommands } from './commands/auth.js';
import { addClusterCommands } from './commands/cluster.js';
import { addElectionCommands } from './commands/elect.js';
import { addFenceCommands } from './commands/fence.js';
import { addKvCommands } from './commands/kv.js';
import { addLeaseCommands } from './commands/lease.js';
import { addSnapshotCommands } from './commands/snapshot.js';
import { addSemaphoreCommands } from './commands/sem.js';
import { addSessionCommands } from './commands/session.js';
import { addWatchCommands } from './commands/watch.js';
import { CliRun, DEFAULT_ENDPOINTS, type CliIo } from './context.js';
import { exitCodeFor, EXIT } from './exit-codes.js';
import { withFlagName } from './flag-names.js';
import { describeError, errorJson } from './format.js';
import { packageVersion } from './version.js';

export { durationArg, parseEndpoints, parseValueArg, shellQuote } from './args.js';
export { DEFAULT_ENDPOINTS, type CliIo, type TextSink } from './context.js';
export { withFlagName } from './flag-names.js';

/**
 * Runs one CLI invocation. `argv` excludes `node` and the script (process.argv.slice(2)).
 * Resolves with the exit code; never throws and never calls process.exit.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const run = new CliRun(io);
  const program = buildProgram(run);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return run.exitCode;
  } catch (thrown) {
    if (thrown instanceof CommanderError) return thrown.exitCode === 0 ? EXIT.ok : EXIT.usage;
    const error = withFlagName(thrown, run.valueFlag);
    if (argv.includes('--json')) run.err(JSON.stringify({ error: errorJson(error) }));
    else run.err(`error: ${describeError(error)}`);
    return exitCodeFor(error);
  }
}

/** The commander program of one invocation: global flags, then one group of commands per module. */
function buildProgram(run: CliRun): Command {
  const program = new Command('tenure')
    .description('Tenure coordination service client: leases, elections, fenced KV')
    .version(packageVersion(), '-V, --version', 'print the version of tenure')
    .helpOption('-h, --help', 'show help for tenure or a command (tenure lease --help)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void run.io.stdout.write(s),
      writeErr: (s) => void run.io.stderr.write(s),
    })
    .showHelpAfterError('(run with --help for usage)')
    .option(
      '--endpoints <list>',
      `comma-separated node URLs (env TENURE_ENDPOINTS; default ${DEFAULT_ENDPOINTS})`,
    )
    .option('--ca <file>', "CA certificate (PEM) of the cluster's HTTPS endpoints (env TENURE_CA)")
    .option(
      '--cert <file>',
      'client certificate (PEM) when the cluster requires one (env TENURE_CERT)',
    )
    .option('--key <file>', 'private key (PEM) of --cert (env TENURE_KEY)')
    .option('--json', 'machine-readable JSON output (one object per line)')
    .option('--timeout <duration>', 'deadline of each call, e.g. 5s', durationArg('--timeout'))
    .option(
      '--auth-token <token>',
      'bearer token for a cluster with auth on (env TENURE_TOKEN); --token is the fencing token',
    );
  addLeaseCommands(program, run);
  addElectionCommands(program, run);
  addKvCommands(program, run);
  addFenceCommands(program, run);
  addClusterCommands(program, run);
  addSnapshotCommands(program, run);
  addSessionCommands(program, run);
  addSemaphoreCommands(program, run);
  addWatchCommands(program, run);
  addAuthCommands(program, run);
  return program;
}

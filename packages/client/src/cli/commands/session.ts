/**
 * `tenure session …`: create (once, or `--hold` to keep it alive until Ctrl-C, then end it),
 * keepalive, get, end. docs/api.md (Sessions) describes the routes; docs/primitives.md when to
 * use a session.
 */
import { Option, type Command } from 'commander';
import { formatDurationMs } from '../../duration.js';
import { TenureError } from '../../errors.js';
import { durationArg } from '../args.js';
import { callOptions, type CliRun } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { formatSession } from '../format.js';
import { holdUntilInterrupt } from '../hold.js';

interface CreateFlags {
  ttl: number;
  name?: string;
  hold?: boolean;
}

/** Adds the `session` command group to `program`. */
export function addSessionCommands(program: Command, run: CliRun): void {
  const session = program
    .command('session')
    .description('sessions: one keepalive for many leases, permits and candidacies');
  session
    .command('create')
    .description(
      'create a session and print its id; --hold keeps it alive until Ctrl-C, then ends it (and every grant bound to it)',
    )
    .addOption(
      new Option('--ttl <duration>', 'session ttl')
        .argParser(durationArg('--ttl'))
        .default(30_000, '30s'),
    )
    .option('--name <label>', 'a label operators see in `tenure session get`')
    .option('--hold', 'keep the session alive until Ctrl-C, then end it')
    .action(async (opts: CreateFlags, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const s = await client.session({
        ttlMs: opts.ttl,
        ...(opts.name === undefined ? {} : { name: opts.name }),
        autoRenew: opts.hold === true,
        ...callOptions(timeoutMs),
      });
      run.emit(
        json,
        { event: 'created', ...s.toJSON() },
        `created session ${s.sessionId} ttl=${formatDurationMs(s.ttlMs)}`,
      );
      if (opts.hold !== true) {
        if (!json)
          run.err(
            `it ends in ${formatDurationMs(s.ttlMs)} unless kept alive: tenure session keepalive ${s.sessionId}`,
          );
        return;
      }
      run.exitCode = await holdUntilInterrupt(run, s, json);
      if (run.exitCode !== EXIT.ok) return;
      const ended = await s.close();
      run.emit(
        json,
        { event: 'ended', sessionId: s.sessionId, ended },
        ended ? `ended session ${s.sessionId}` : `session ${s.sessionId} had already ended`,
      );
    });
  session
    .command('keepalive <sessionId>')
    .description('keep a session alive once (exit 4 once it ended)')
    .action(async (sessionId: string, _opts: unknown, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const answer = await client.keepaliveSession(sessionId, callOptions(timeoutMs));
      run.emit(
        json,
        answer,
        `kept ${answer.sessionId} alive for ${formatDurationMs(answer.ttlMs)}`,
      );
    });
  session
    .command('get <sessionId>')
    .description('show a session and what is bound to it (exit 4 once it ended)')
    .action(async (sessionId: string, _opts: unknown, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const view = await client.getSession(sessionId, callOptions(timeoutMs));
      if (view === null)
        throw new TenureError(`session ${sessionId} not found`, { code: 'not_found', status: 404 });
      run.emit(json, view, formatSession(view));
    });
  session
    .command('end <sessionId>')
    .description('end a session: every grant bound to it ends at once (exit 4 once it ended)')
    .action(async (sessionId: string, _opts: unknown, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const answer = await client.endSession(sessionId, callOptions(timeoutMs));
      run.emit(json, answer, `ended session ${answer.sessionId}`);
    });
}

/**
 * `tenure sem …`: semaphore permits — acquire (once, or `--hold` until Ctrl-C), renew, release,
 * get, history, revoke. docs/api.md (Semaphores) describes the routes.
 */
import { Option, type Command } from 'commander';
import { formatDurationMs } from '../../duration.js';
import { TenureError } from '../../errors.js';
import { durationArg, integerArg } from '../args.js';
import { callOptions, type CliRun } from '../context.js';
import { formatSemaphore } from '../format.js';
import { addRenewRelease, holdThenRelease } from './grant-commands.js';
import { addHistoryRevoke } from './history-revoke.js';

interface AcquireFlags {
  limit: number;
  ttl?: number;
  session?: string;
  wait?: number;
  holder?: string;
  hold?: boolean;
}

/** Adds the `sem` command group to `program`. */
export function addSemaphoreCommands(program: Command, run: CliRun): void {
  const sem = program
    .command('sem')
    .description('semaphores: at most --limit holders at once, a fencing token per permit');
  addAcquire(sem, run);
  addRenewRelease(sem, run, { kind: 'semaphore', noun: 'permit' });
  sem
    .command('get <name>')
    .description('show the limit, live permits and waiters (exit 4 when nobody holds or waits)')
    .action(async (name: string, _opts: unknown, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const view = await client.getSemaphore(name, callOptions(timeoutMs));
      if (view === null)
        throw new TenureError(`semaphore ${name} is not held`, { code: 'not_found', status: 404 });
      run.emit(json, view, formatSemaphore(view));
    });
  addHistoryRevoke(sem, run, 'semaphore');
}

function addAcquire(sem: Command, run: CliRun): void {
  sem
    .command('acquire <name>')
    .description(
      'acquire one permit and print it; --hold keeps it renewed until Ctrl-C, then releases it',
    )
    .addOption(
      new Option('--limit <n>', 'most live permits of the name')
        .argParser(integerArg('--limit'))
        .makeOptionMandatory(),
    )
    .option('--ttl <duration>', 'permit ttl (default 10s; or --session)', durationArg('--ttl'))
    .option('--session <id>', 'bind the permit to this session instead of a ttl')
    .option('--wait <duration>', 'wait up to this long for a permit', durationArg('--wait'))
    .option(
      '--holder <id>',
      'holder id to renew/release with later (default: a generated unique id)',
    )
    .option('--hold', 'keep the permit renewed until Ctrl-C, then release it')
    .action(async (name: string, opts: AcquireFlags, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const permit = await client.semaphore(name, {
        limit: opts.limit,
        ...(opts.session === undefined
          ? { ttlMs: opts.ttl ?? 10_000 }
          : { session: opts.session, ...(opts.ttl === undefined ? {} : { ttlMs: opts.ttl }) }),
        ...(opts.wait === undefined ? {} : { waitMs: opts.wait }),
        ...(opts.holder === undefined ? {} : { holder: opts.holder }),
        autoRenew: opts.hold === true,
        ...callOptions(timeoutMs),
      } as Parameters<typeof client.semaphore>[1]);
      run.emit(
        json,
        { event: 'acquired', ...permit.toJSON() },
        `acquired ${permit.name} fencingToken=${permit.fencingToken} holder=${permit.holder} limit=${permit.limit} ` +
          (permit.session === null
            ? `ttl=${formatDurationMs(permit.ttlMs)}`
            : `session=${permit.session}`),
      );
      if (opts.hold === true) await holdThenRelease(run, permit, json);
    });
}

/**
 * `tenure lease …`: acquire (once, or `--hold` until Ctrl-C; `--shared`, `--session ID`), renew,
 * release, get, list, watch, history, revoke.
 * docs/api.md describes the routes behind each command.
 */
import { Option, type Command } from 'commander';
import type { TenureClient } from '../../client.js';
import { formatDurationMs } from '../../duration.js';
import { TenureError } from '../../errors.js';
import type { Lease } from '../../lease.js';
import { durationArg, shellQuote } from '../args.js';
import { callOptions, type CliRun, type GlobalOptions } from '../context.js';
import { formatLease, formatWatch } from '../format.js';
import { addRenewRelease, holdThenRelease } from './grant-commands.js';
import { addHistoryRevoke } from './history-revoke.js';
import { addListCommand } from './list.js';

interface AcquireFlags {
  ttl: number;
  session?: string;
  shared?: boolean;
  wait?: number;
  lockDelay?: number;
  maxHold?: number;
  holder?: string;
  hold?: boolean;
}

/** Adds the `lease` command group to `program`. */
export function addLeaseCommands(program: Command, run: CliRun): void {
  const lease = program
    .command('lease')
    .description('acquire, renew, release and inspect leases (locks)');
  addAcquire(lease, run);
  addRenewRelease(lease, run, { kind: 'lease', noun: 'grant' });
  addReadCommands(lease, run);
  addHistoryRevoke(lease, run, 'lease');
}

function addAcquire(lease: Command, run: CliRun): void {
  lease
    .command('acquire <name>')
    .description(
      'acquire a lease once and print the grant; --hold keeps it renewed until Ctrl-C, then releases it',
    )
    .addOption(
      new Option('--ttl <duration>', 'lease ttl')
        .argParser(durationArg('--ttl'))
        .default(10_000, '10s'),
    )
    .option('--session <id>', 'bind the lease to this session instead of --ttl')
    .option('--shared', 'take a shared (read) grant: any number of shared holders at once')
    .option('--wait <duration>', 'wait up to this long for the lease', durationArg('--wait'))
    .option('--lock-delay <duration>', 'lock-delay after expiry', durationArg('--lock-delay'))
    .option('--max-hold <duration>', 'cap on total hold time', durationArg('--max-hold'))
    .option(
      '--holder <id>',
      'holder id to renew/release with later (default: a generated unique id); pick a short one ' +
        'only if no other client uses it: an acquire by the current holder renews its grant',
    )
    .option('--hold', 'keep the lease renewed until Ctrl-C, then release it')
    .action(async (name: string, opts: AcquireFlags, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const held = await acquire(client, name, opts, json, timeoutMs);
      // What the server answered: a session-bound grant has no ttl of its own (ttlMs null).
      const life =
        held.session === null ? `ttl=${formatDurationMs(held.ttlMs)}` : `session=${held.session}`;
      run.emit(
        json,
        { event: 'acquired', ...held.toJSON(), ...(held.session === null ? {} : { ttlMs: null }) },
        `acquired ${held.name} fencingToken=${held.fencingToken} holder=${held.holder} ${life}` +
          (held.mode === 'shared' ? ' mode=shared' : ''),
      );
      if (opts.hold === true) await holdThenRelease(run, held, json);
      else if (!json) printNextCommands(run, command, held, opts.holder === undefined);
    });
}

async function acquire(
  client: TenureClient,
  name: string,
  opts: AcquireFlags,
  json: boolean,
  timeoutMs: number | undefined,
): Promise<Lease> {
  try {
    return await client.acquire(name, {
      ...(opts.session === undefined ? { ttlMs: opts.ttl } : { session: opts.session }),
      ...(opts.shared === true ? { mode: 'shared' as const } : {}),
      ...(opts.wait === undefined ? {} : { waitMs: opts.wait }),
      ...(opts.lockDelay === undefined ? {} : { lockDelayMs: opts.lockDelay }),
      ...(opts.maxHold === undefined ? {} : { maxHoldMs: opts.maxHold }),
      ...(opts.holder === undefined ? {} : { holder: opts.holder }),
      autoRenew: opts.hold === true,
      ...callOptions(timeoutMs),
    });
  } catch (error) {
    if (json || !(error instanceof TenureError) || error.code !== 'held') throw error;
    throw await describeHeld(client, name, error);
  }
}

/** Tells when the grant expires and prints paste-ready renew and release commands (stderr). */
function printNextCommands(run: CliRun, command: Command, held: Lease, generated: boolean): void {
  const globals = command.optsWithGlobals<GlobalOptions>();
  const prefix = [
    'tenure',
    ...(globals.endpoints === undefined ? [] : ['--endpoints', shellQuote(globals.endpoints)]),
    'lease',
  ].join(' ');
  const grant = `${shellQuote(held.name)} --holder ${shellQuote(held.holder)} --token ${held.fencingToken}`;
  run.err(
    (held.session === null
      ? `expires in ${formatDurationMs(held.ttlMs)} unless renewed`
      : `lives as long as session ${held.session}`) +
      (generated ? ' (choose a shorter holder id with --holder ID)' : ''),
  );
  run.err(`renew with:   ${prefix} renew ${grant}`);
  run.err(`release with: ${prefix} release ${grant}`);
}

function addReadCommands(lease: Command, run: CliRun): void {
  lease
    .command('get <name>')
    .description('show the current grant (exit 4 when free)')
    .option('--stale', 'read from the contacted node without a linearizable round')
    .action(async (name: string, opts: { stale?: boolean }, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const view = await client.getLease(name, {
        ...callOptions(timeoutMs),
        ...(opts.stale === true ? { consistency: 'stale' as const } : {}),
      });
      if (view === null)
        throw new TenureError(`lease ${name} is not held`, { code: 'not_found', status: 404 });
      run.emit(json, view, formatLease(view));
    });
  addListCommand(lease, run, { kind: 'leases', what: 'leases', format: formatLease });
  lease
    .command('watch <name>')
    .description('print the grant and every change until Ctrl-C')
    .action(async (name: string, _opts: unknown, command: Command) => {
      const { client, json } = run.context(command);
      for await (const view of client.watchLease(name, { signal: run.io.interrupt }))
        run.emit(json, view, formatWatch(view));
    });
}

/**
 * A text-mode `held` error for lease `name` that says who holds it: "lease L is held by H (token N,
 * expires in 3s)" — the token and remaining time from a best-effort stale read (≤ 1 s; omitted if it
 * fails or shows another holder) — or, with `holder: null`, "lease L is in lock-delay for 1.2s".
 * Code, status and details are kept, so the exit code stays 1.
 */
async function describeHeld(
  client: TenureClient,
  name: string,
  error: TenureError,
): Promise<TenureError> {
  const holder = error.details['holder'];
  const delayMs = error.details['lockDelayRemainingMs'];
  let message: string;
  if (typeof holder === 'string') {
    let grant = '';
    try {
      const view = await client.getLease(name, { consistency: 'stale', timeoutMs: 1000 });
      if (view !== null && !('holders' in view) && view.holder === holder)
        grant = ` (token ${view.fencingToken}, expires in ${formatDurationMs(view.remainingMs)})`;
    } catch {
      // Only decoration: the error itself is what matters.
    }
    message = `lease ${name} is held by ${holder}${grant}`;
  } else if (typeof delayMs === 'number') {
    message = `lease ${name} is in lock-delay for ${formatDurationMs(delayMs)} (its last holder's grant expired)`;
  } else return error;
  return new TenureError(message, {
    code: error.code,
    status: error.status,
    details: error.details,
    outcomeUnknown: error.outcomeUnknown,
    cause: error,
  });
}

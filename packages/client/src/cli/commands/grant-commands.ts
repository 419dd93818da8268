/**
 * What `tenure lease …` and `tenure sem …` share for one held grant: `renew <name>` and
 * `release <name>` by holder and token (docs/api.md: the lease and semaphore renew and release
 * routes take the same body and answer alike), and the end of `acquire --hold` (release after
 * Ctrl-C). One place, so the two command groups cannot drift apart.
 */
import type { Command } from 'commander';
import type { TenureClient } from '../../client.js';
import { formatDurationMs } from '../../duration.js';
import { integerArg } from '../args.js';
import { callOptions, type CliRun } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { holdUntilInterrupt, type Holdable } from '../hold.js';

/** A lease grant or a semaphore permit, as the `lease` and `sem` groups name them. */
export interface GrantNoun {
  readonly kind: 'lease' | 'semaphore';
  /** What the help calls one grant: `grant`, `permit`. */
  readonly noun: string;
}

interface GrantFlags {
  holder: string;
  token: number;
}

/**
 * Adds `renew <name>` and `release <name>` (both `--holder ID --token N`) to `group`. Text output:
 * `renewed NAME fencingToken=N ttl=…` (or `ttl=session ID`), `released NAME`; `--json`: the answer.
 */
export function addRenewRelease(group: Command, run: CliRun, grant: GrantNoun): void {
  const withGrantFlags = (command: Command): Command =>
    command
      .requiredOption('--holder <id>', `holder id of the ${grant.noun}`)
      .requiredOption('--token <n>', `fencing token of the ${grant.noun}`, integerArg('--token'));
  withGrantFlags(
    group
      .command('renew <name>')
      .description(`renew a ${grant.noun} once (holder and token from a previous acquire)`),
  ).action(async (name: string, opts: GrantFlags, command: Command) => {
    const { client, json, timeoutMs } = run.context(command);
    const g = await renew(client, grant.kind, name, opts, callOptions(timeoutMs));
    const ttl = g.ttlMs === null ? `session ${g.session}` : formatDurationMs(g.ttlMs);
    run.emit(json, g, `renewed ${g.name} fencingToken=${g.fencingToken} ttl=${ttl}`);
  });
  withGrantFlags(
    group.command('release <name>').description(`release a ${grant.noun} by holder and token`),
  ).action(async (name: string, opts: GrantFlags, command: Command) => {
    const { client, json, timeoutMs } = run.context(command);
    const call = callOptions(timeoutMs);
    const answer =
      grant.kind === 'lease'
        ? await client.releaseLease(name, opts.holder, opts.token, call)
        : await client.releaseSemaphore(name, opts.holder, opts.token, call);
    run.emit(json, answer, `released ${answer.name}`);
  });
}

function renew(
  client: TenureClient,
  kind: GrantNoun['kind'],
  name: string,
  opts: GrantFlags,
  call: { timeoutMs?: number },
): Promise<{ name: string; fencingToken: number; ttlMs: number | null; session?: string }> {
  return kind === 'lease'
    ? client.renewLease(name, opts.holder, opts.token, call)
    : client.renewSemaphore(name, opts.holder, opts.token, call);
}

/** A held lease or permit handle: holdable, with a name and a release. */
export interface ReleasableGrant extends Holdable {
  readonly name: string;
  readonly fencingToken: number;
  release(): Promise<boolean>;
}

/**
 * The end of `acquire --hold`: holds `held` until Ctrl-C (exit 0) or its loss (exit 1, nothing
 * more to do); after Ctrl-C releases it and prints `released NAME` (or that it was no longer held).
 */
export async function holdThenRelease(
  run: CliRun,
  held: ReleasableGrant,
  json: boolean,
): Promise<void> {
  run.exitCode = await holdUntilInterrupt(run, held, json);
  if (run.exitCode !== EXIT.ok) return;
  const released = await held.release();
  run.emit(
    json,
    { event: 'released', name: held.name, fencingToken: held.fencingToken, released },
    released ? `released ${held.name}` : `${held.name} was no longer held`,
  );
}

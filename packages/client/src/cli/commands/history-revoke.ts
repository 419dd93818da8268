/**
 * `tenure lease|sem history` and `… revoke`: holder history (who held it, when, why it ended) and
 * operator revoke (docs/api.md, Holder history and Operator revoke), shared by the lease and
 * semaphore command groups.
 */
import type { Command } from 'commander';
import type { GrantKind } from '../../client.js';
import { integerArg } from '../args.js';
import { callOptions, type CliRun } from '../context.js';
import { formatHistory } from '../format.js';

/** Adds `history <name>` and `revoke <name>` for `kind` to the command group `group`. */
export function addHistoryRevoke(group: Command, run: CliRun, kind: GrantKind): void {
  group
    .command('history <name>')
    .description(`show the last grants of a ${kind}, newest first, with why each ended`)
    .option('--limit <n>', 'at most this many (1-100, default 20)', integerArg('--limit'))
    .action(async (name: string, opts: { limit?: number }, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const grants = await client.history(name, {
        kind,
        ...(opts.limit === undefined ? {} : { limit: opts.limit }),
        ...callOptions(timeoutMs),
      });
      run.emit(json, { name, grants }, formatHistory(name, grants));
    });
  group
    .command('revoke <name>')
    .description(
      `operator revoke: end the ${kind} grant with --token (default: every live grant) as if it had expired; its token is fenced`,
    )
    .option('--token <n>', 'revoke only the grant with this fencing token', integerArg('--token'))
    .option('--reason <text>', "free text for the operator's log")
    .action(async (name: string, opts: { token?: number; reason?: string }, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const revoked = await client.revoke(name, {
        kind,
        ...(opts.token === undefined ? {} : { fencingToken: opts.token }),
        ...(opts.reason === undefined ? {} : { reason: opts.reason }),
        ...callOptions(timeoutMs),
      });
      run.emit(
        json,
        { name, revoked },
        revoked.length === 0
          ? `${name}: nothing was live`
          : `revoked ${name} fencingToken=${revoked.join(',')}`,
      );
    });
}

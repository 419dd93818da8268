/**
 * `tenure fence check`: whether a fencing token is still the current one of a lease or election
 * (docs/api.md, fence check). Exit 0 when valid, 1 (conflict) when stale.
 */
import type { Command } from 'commander';
import type { FenceSpec } from '../../contract.js';
import { TenureError } from '../../errors.js';
import { integerArg } from '../args.js';
import { callOptions, type CliRun } from '../context.js';
import { UsageError } from '../exit-codes.js';

interface CheckFlags {
  lease?: string;
  election?: string;
  semaphore?: string;
  token: number;
}

/** Adds the `fence` command group to `program`. */
export function addFenceCommands(program: Command, run: CliRun): void {
  program
    .command('fence')
    .description('fencing tokens')
    .command('check')
    .description('is --token still the current fencing token? (exit 0 valid, 1 stale)')
    .option('--lease <name>', 'the lease the token belongs to')
    .option('--election <group>', 'the election the token belongs to')
    .option('--semaphore <name>', 'the semaphore the permit token belongs to')
    .requiredOption('--token <n>', 'the fencing token to check', integerArg('--token'))
    .action(async (opts: CheckFlags, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const fence = fenceOf(opts);
      const result = await client.fenceCheck(fence, callOptions(timeoutMs));
      const resource =
        'lease' in fence
          ? `lease ${fence.lease}`
          : 'election' in fence
            ? `election ${fence.election}`
            : `semaphore ${fence.semaphore}`;
      const current = result.current === null ? 'none' : String(result.current);
      if (!result.valid)
        throw new TenureError(`token ${opts.token} of ${resource} is stale (current: ${current})`, {
          code: 'stale_token',
          status: 409,
          details: { current: result.current },
        });
      run.emit(json, result, `token ${opts.token} of ${resource} is current`);
    });
}

function fenceOf(opts: CheckFlags): FenceSpec {
  const named = [opts.lease, opts.election, opts.semaphore].filter((n) => n !== undefined);
  if (named.length !== 1)
    throw new UsageError(
      'fence check needs exactly one of --lease NAME, --election GROUP and --semaphore NAME',
    );
  const fencingToken = opts.token;
  if (opts.lease !== undefined) return { lease: opts.lease, fencingToken };
  if (opts.election !== undefined) return { election: opts.election, fencingToken };
  return { semaphore: opts.semaphore!, fencingToken };
}

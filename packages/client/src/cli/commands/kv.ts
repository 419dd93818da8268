/**
 * `tenure kv put|get|del|list`: key-value writes, optionally fenced by a lease or election token or
 * conditional on a revision (docs/api.md, fenced writes); reads of one key, or of the keys and
 * their revisions a page at a time (docs/api.md, Listings).
 */
import type { Command } from 'commander';
import type { FenceSpec } from '../../contract.js';
import { TenureError } from '../../errors.js';
import { integerArg, parseValueArg } from '../args.js';
import { callOptions, type CliRun } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { addListCommand } from './list.js';

/** The fence flags of `kv put` and `kv del`. */
interface FenceFlags {
  fenceLease?: string;
  fenceElection?: string;
  token?: number;
  ifRevision?: number;
}

/** Adds the `kv` command group to `program`. */
export function addKvCommands(program: Command, run: CliRun): void {
  const kv = program.command('kv').description('fenced key-value writes');
  withFenceFlags(
    kv.command('put <key> <value>').description('write a value (JSON or string)'),
  ).action(async (key: string, value: string, opts: FenceFlags, command: Command) => {
    const { client, json, timeoutMs } = run.context(command);
    const options = { ...writeOptions(opts), ...callOptions(timeoutMs) };
    const answer = await client.kv.put(key, parseValueArg(value), options);
    run.emit(json, answer, `${answer.key} revision=${answer.revision}`);
  });
  kv.command('get <key>')
    .description('read a value (exit 4 when absent)')
    .action(async (key: string, _opts: unknown, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const view = await client.kv.get(key, callOptions(timeoutMs));
      if (view === null)
        throw new TenureError(`key ${key} not found`, { code: 'not_found', status: 404 });
      run.emit(json, view, `${JSON.stringify(view.value)}\t(revision ${view.revision})`);
    });
  addListCommand(kv, run, {
    kind: 'kv',
    what: 'keys',
    format: (k) => `${k.key}\t(revision ${k.revision})`,
  });
  withFenceFlags(kv.command('del <key>').description('delete a key')).action(
    async (key: string, opts: FenceFlags, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const options = { ...writeOptions(opts), ...callOptions(timeoutMs) };
      const answer = await client.kv.delete(key, options);
      run.emit(json, answer, `deleted ${answer.key}`);
    },
  );
}

function withFenceFlags(command: Command): Command {
  return command
    .option('--fence-lease <name>', 'commit only while this lease carries --token')
    .option('--fence-election <group>', 'commit only while this election carries --token')
    .option(
      '--token <n>',
      'fencing token for --fence-lease / --fence-election',
      integerArg('--token'),
    )
    .option(
      '--if-revision <n>',
      'commit only if the key has this revision (0: absent)',
      integerArg('--if-revision'),
    );
}

/** The fence and ifRevision of a write; UsageError when the fence flags do not go together. */
function writeOptions(opts: FenceFlags): { fence?: FenceSpec; ifRevision?: number } {
  const fence = fenceOf(opts);
  return {
    ...(fence === undefined ? {} : { fence }),
    ...(opts.ifRevision === undefined ? {} : { ifRevision: opts.ifRevision }),
  };
}

function fenceOf(opts: FenceFlags): FenceSpec | undefined {
  const { fenceLease, fenceElection, token } = opts;
  if (fenceLease !== undefined && fenceElection !== undefined)
    throw new UsageError('use only one of --fence-lease and --fence-election');
  if (fenceLease !== undefined && token === undefined)
    throw new UsageError('--fence-lease needs --token N (the fencing token of the lease grant)');
  if (fenceElection !== undefined && token === undefined)
    throw new UsageError('--fence-election needs --token N (the fencing token of the leadership)');
  if (token === undefined) return undefined;
  if (fenceLease !== undefined) return { lease: fenceLease, fencingToken: token };
  if (fenceElection !== undefined) return { election: fenceElection, fencingToken: token };
  throw new UsageError(
    '--token needs --fence-lease NAME or --fence-election GROUP (the resource the token belongs to)',
  );
}

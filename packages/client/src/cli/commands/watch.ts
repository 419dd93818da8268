/**
 * `tenure watch`: print every committed change as it comes (docs/api.md, "Streaming watch"), one
 * line per change (`--json`: the event object), resuming by itself across node failures, until
 * Ctrl-C. A `compacted` end is an error (exit 5) naming the oldest revision to resume from.
 */
import type { Command } from 'commander';
import type { WatchEvent } from '../../change-watch.js';
import type { ChangeKind } from '../../contract.js';
import { integerArg } from '../args.js';
import type { CliRun } from '../context.js';
import { UsageError } from '../exit-codes.js';

/** Every `--kinds` word (docs/api.md). */
const KINDS: readonly ChangeKind[] = ['lease', 'semaphore', 'election', 'kv', 'session'];

interface WatchFlags {
  prefix?: string;
  kinds?: ChangeKind[];
  fromRevision?: number;
  renewals?: boolean;
}

/** Parses `--kinds lease,kv`; usage error naming an unknown word. */
function kindsArg(value: string): ChangeKind[] {
  const words = value.split(',').map((w) => w.trim());
  for (const w of words)
    if (!(KINDS as readonly string[]).includes(w))
      throw new UsageError(`--kinds: "${w}" is not one of ${KINDS.join(', ')}`);
  return words as ChangeKind[];
}

/** One human-readable line of a change. */
export function formatChange(e: WatchEvent): string {
  const fields: string[] = [];
  if (e.holder !== undefined) fields.push(`holder=${e.holder}`);
  if (e.candidate !== undefined) fields.push(`candidate=${e.candidate}`);
  if (e.fencingToken !== undefined) fields.push(`fencingToken=${e.fencingToken}`);
  if (e.mode !== undefined) fields.push(`mode=${e.mode}`);
  if (e.session !== undefined) fields.push(`session=${e.session}`);
  if (e.endReason !== undefined) fields.push(`endReason=${e.endReason}`);
  if (e.value !== undefined) fields.push(`value=${JSON.stringify(e.value)}`);
  return [`revision=${e.revision}`, e.kind, e.name, e.type, ...fields].join(' ');
}

/** Adds `watch` to `program`. */
export function addWatchCommands(program: Command, run: CliRun): void {
  program
    .command('watch')
    .description('print every change as it comes (streaming, resumes by itself) until Ctrl-C')
    .option('--prefix <prefix>', 'only names starting with this')
    .option('--kinds <list>', `comma-separated: ${KINDS.join(',')} (default all)`, kindsArg)
    .option(
      '--from-revision <n>',
      'start with every change after this revision (default: the next change)',
      integerArg('--from-revision'),
    )
    .option('--renewals', 'also print renewals')
    .action(async (opts: WatchFlags, command: Command) => {
      const { client, json } = run.context(command);
      const changes = client.watch({
        ...(opts.prefix === undefined ? {} : { prefix: opts.prefix }),
        ...(opts.kinds === undefined ? {} : { kinds: opts.kinds }),
        ...(opts.fromRevision === undefined ? {} : { fromRevision: opts.fromRevision }),
        renewals: opts.renewals === true,
        signal: run.io.interrupt,
      });
      for await (const change of changes) run.emit(json, change, formatChange(change));
    });
}

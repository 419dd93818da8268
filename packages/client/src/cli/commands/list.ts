/**
 * `tenure lease list`, `tenure election list` and `tenure kv list`: one page of a listing
 * (docs/api.md, Listings) with `--prefix/--after/--limit`, or with `--all` every page, following
 * `nextCursor`. Shared by the three command groups so the flags and output are the same everywhere.
 */
import type { Command } from 'commander';
import type { TenureClient } from '../../client.js';
import { listField, type ListItems, type ListKind, type ListQuery } from '../../listing.js';
import { integerArg } from '../args.js';
import { callOptions, type CliRun } from '../context.js';

interface ListFlags {
  prefix?: string;
  after?: string;
  limit?: number;
  all?: boolean;
}

/** How one listing is shown: what its items are called, and one text line per item. */
export interface ListingShape<K extends ListKind> {
  readonly kind: K;
  /** Plural noun of the items, for help and the empty answer: `leases`, `election groups`, `keys`. */
  readonly what: string;
  readonly format: (item: ListItems[K]) => string;
}

/**
 * Adds `list` (alias `ls`) to the command group `group`. Text output: one line per item, then on
 * stderr the `--after` of the next page when there is one; `--json`: one object
 * `{<field>: [...], nextCursor}` with the answer's own field name (`--all`: every item, cursor null).
 */
export function addListCommand<K extends ListKind>(
  group: Command,
  run: CliRun,
  shape: ListingShape<K>,
): void {
  group
    .command('list')
    .alias('ls')
    .description(`list ${shape.what} in name order, a page at a time (--all: every page)`)
    .option('--prefix <prefix>', 'only names starting with this')
    .option('--after <name>', 'only names after this one (the cursor a previous page printed)')
    .option('--limit <n>', 'page size, 1-1000 (server default 100)', integerArg('--limit'))
    .option('--all', 'follow the cursor through every page')
    .action(async (opts: ListFlags, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const query: ListQuery = {
        ...(opts.prefix === undefined ? {} : { prefix: opts.prefix }),
        ...(opts.after === undefined ? {} : { after: opts.after }),
        ...(opts.limit === undefined ? {} : { limit: opts.limit }),
      };
      const { items, nextCursor } = await fetchItems(
        client,
        shape.kind,
        query,
        opts.all,
        timeoutMs,
      );
      if (json) run.out(JSON.stringify({ [listField(shape.kind)]: items, nextCursor }));
      else if (items.length === 0) run.out(`no ${shape.what}`);
      else for (const item of items) run.out(shape.format(item));
      if (!json && nextCursor !== null)
        run.err(`more after ${nextCursor}: pass --after ${nextCursor}, or --all`);
    });
}

/** One page, or with `all` every item (and a null cursor). */
async function fetchItems<K extends ListKind>(
  client: TenureClient,
  kind: K,
  query: ListQuery,
  all: boolean | undefined,
  timeoutMs: number | undefined,
): Promise<{ items: ListItems[K][]; nextCursor: string | null }> {
  if (all !== true) return client.list(kind, query, callOptions(timeoutMs));
  const items: ListItems[K][] = [];
  for await (const item of client.listAll(kind, query, callOptions(timeoutMs))) items.push(item);
  return { items, nextCursor: null };
}

/**
 * `tenure elect` (campaign, hold leadership until Ctrl-C, resign), `tenure observe` (print an
 * election and its changes) and `tenure election list` (the groups with candidates). docs/api.md describes the election routes behind them.
 */
import { Option, type Command } from 'commander';
import type { TenureClient } from '../../client.js';
import type { ElectionLeader } from '../../contract.js';
import { TenureError } from '../../errors.js';
import type { Leadership } from '../../leadership.js';
import { durationArg, parseValueArg } from '../args.js';
import type { CliRun } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { formatElection } from '../format.js';
import { holdUntilInterrupt } from '../hold.js';
import { addListCommand } from './list.js';

interface ElectFlags {
  value?: string;
  ttl: number;
  candidate?: string;
}

/** Adds `elect`, `observe` and `election list` to `program`. */
export function addElectionCommands(program: Command, run: CliRun): void {
  const election = program.command('election').description('inspect elections');
  addListCommand(election, run, {
    kind: 'elections',
    what: 'election groups (those with candidates)',
    format: formatElection,
  });
  program
    .command('elect <group>')
    .description(
      'campaign in an election, hold leadership until Ctrl-C (printing changes), then resign',
    )
    .option('--value <value>', 'value to proclaim (JSON or string)')
    .addOption(
      new Option('--ttl <duration>', 'candidacy ttl')
        .argParser(durationArg('--ttl'))
        .default(10_000, '10s'),
    )
    .option('--candidate <id>', 'candidate id (default: unique per process)')
    .action(async (group: string, opts: ElectFlags, command: Command) => {
      const { client, json } = run.context(command);
      run.valueFlag = '--value';
      const leadership = await campaign(run, client, group, opts, json);
      if (leadership === null) return;
      run.emit(
        json,
        { event: 'elected', ...leadership.toJSON() },
        `elected leader of ${group} fencingToken=${leadership.fencingToken} candidate=${leadership.candidate}`,
      );
      await holdLeadership(run, client, leadership, json);
    });
  program
    .command('observe <group>')
    .description('print the election and every change of leader or value until Ctrl-C')
    .action(async (group: string, _opts: unknown, command: Command) => {
      const { client, json } = run.context(command);
      for await (const view of client.observe(group, { signal: run.io.interrupt }))
        run.emit(json, view, formatElection(view));
    });
}

/**
 * Campaigns until elected, telling the user whom it waits behind; null when Ctrl-C ended the
 * campaign (the candidacy is resigned by the client).
 */
async function campaign(
  run: CliRun,
  client: TenureClient,
  group: string,
  opts: ElectFlags,
  json: boolean,
): Promise<Leadership | null> {
  if (!json) run.err(`campaigning in ${group} ...`);
  const onWaiting = (leader: ElectionLeader): void =>
    json
      ? run.out(JSON.stringify({ event: 'waiting', group, leader }))
      : run.err(
          `waiting: ${leader.candidate} leads ${group} (fencingToken=${leader.fencingToken}); ` +
            'this candidate is elected when it resigns or its candidacy expires',
        );
  try {
    return await client.campaign(group, {
      ttlMs: opts.ttl,
      value: opts.value === undefined ? null : parseValueArg(opts.value),
      signal: run.io.interrupt,
      onWaiting,
      ...(opts.candidate === undefined ? {} : { candidate: opts.candidate }),
    });
  } catch (error) {
    if (error instanceof TenureError && error.code === 'aborted' && run.io.interrupt.aborted)
      return null;
    throw error;
  }
}

/** Prints changes of the election while holding leadership until Ctrl-C or loss; then resigns. */
async function holdLeadership(
  run: CliRun,
  client: TenureClient,
  leadership: Leadership,
  json: boolean,
): Promise<void> {
  const group = leadership.group;
  const watching = new AbortController();
  const stopWatching = (): void => watching.abort();
  run.io.interrupt.addEventListener('abort', stopWatching, { once: true });
  leadership.signal.addEventListener('abort', stopWatching, { once: true });
  const printer = (async () => {
    for await (const view of client.observe(group, { signal: watching.signal, initial: false }))
      run.emit(json, { event: 'changed', ...view }, `changed: ${formatElection(view)}`);
  })().catch(() => undefined);
  run.exitCode = await holdUntilInterrupt(run, leadership, json);
  watching.abort();
  await printer;
  if (run.exitCode !== EXIT.ok) return;
  const resigned = await leadership.resign();
  run.emit(json, { event: 'resigned', group, resigned }, `resigned leadership of ${group}`);
}

/** `tenure cluster status`: the leader's view of the cluster (docs/operations.md, monitoring). */
import type { Command } from 'commander';
import { callOptions, type CliRun } from '../context.js';
import { formatCluster } from '../format.js';

/** Adds the `cluster` command group to `program`. */
export function addClusterCommands(program: Command, run: CliRun): void {
  program
    .command('cluster')
    .description('cluster information')
    .command('status')
    .description(
      'show leader, term, indexes and members; asks the leader, which alone reports each ' +
        "member's replication progress (matchIndex, lastContact)",
    )
    .action(async (_opts: unknown, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const view = await client.cluster(callOptions(timeoutMs));
      run.emit(json, view, formatCluster(view));
      if (!json && view.leader !== null && view.leader !== view.id)
        run.err(
          `note: ${view.id} is not the leader and ${view.leader}'s endpoint is not in --endpoints, ` +
            'so replication progress is not shown',
        );
    });
}

/**
 * `tenure cluster status|members|add|promote|remove`: the leader's view of the cluster and the
 * membership changes (docs/operations.md: replace, grow, shrink, move a node).
 */
import type { Command } from 'commander';
import { callOptions, type CliRun } from '../context.js';
import { formatCluster, formatMembers } from '../format.js';

/** Adds the `cluster` command group to `program`. */
export function addClusterCommands(program: Command, run: CliRun): void {
  const cluster = program.command('cluster').description('cluster information and membership');
  cluster
    .command('status')
    .description(
      'show leader, term, indexes and members; asks the leader, which alone reports each ' +
        "member's reachability and replication progress (reachable, lag, matchIndex, lastContact)",
    )
    .action(async (_opts: unknown, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const view = await client.cluster(callOptions(timeoutMs));
      run.emit(json, view, formatCluster(view));
      if (!json && view.leader !== null && view.leader !== view.id)
        run.err(
          `note: ${view.id} is not the leader and ${view.leader}'s endpoint is not in --endpoints, ` +
            'so reachability and replication progress are not shown',
        );
    });
  cluster
    .command('members')
    .description("list the members (voters, then learners) in the leader's view")
    .action(async (_opts: unknown, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const view = await client.members(callOptions(timeoutMs));
      run.emit(json, view, formatMembers(view));
    });
  cluster
    .command('add <id>')
    .description('add a node as a learner (it must then catch up and be promoted)')
    .requiredOption('--raft <host:port>', "the node's Raft address")
    .requiredOption('--http <host:port>', "the node's HTTP address")
    .action(async (id: string, opts: { raft: string; http: string }, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const addresses = { raftAddress: opts.raft, httpAddress: opts.http };
      const view = await client.addMember(id, addresses, callOptions(timeoutMs));
      run.emit(json, view, formatMembers(view));
    });
  cluster
    .command('promote <id>')
    .description('make a caught-up learner a voter')
    .action(async (id: string, _opts: unknown, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const view = await client.promoteMember(id, callOptions(timeoutMs));
      run.emit(json, view, formatMembers(view));
    });
  cluster
    .command('remove <id>')
    .description('remove a member (a removed node exits; its data cannot rejoin)')
    .action(async (id: string, _opts: unknown, command: Command) => {
      const { client, json, timeoutMs } = run.context(command);
      const view = await client.removeMember(id, callOptions(timeoutMs));
      run.emit(json, view, formatMembers(view));
    });
}

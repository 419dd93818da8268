/**
 * How the harness starts one node process: a `NodeCommandBuilder` turns a node's place in the
 * topology into argv and env. The default builds `node packages/server/dist/main.js` with the
 * flags of packages/server/src/config.ts (`--id --peers --http --raft --data-dir …`); tests of the
 * topology pass a trivial HTTP server instead.
 */
import { join } from 'node:path';
import type { NodeId } from '../types.js';

/** One member as the node sees it. */
export interface MemberAddress {
  readonly id: NodeId;
  /** `host:port` of the Raft listener. */
  readonly raftAddress: string;
  /** `host:port` of the HTTP listener. */
  readonly httpAddress: string;
}

/** Everything needed to start one node. */
export interface NodeLaunchSpec {
  readonly id: NodeId;
  readonly httpAddress: string;
  readonly raftAddress: string;
  /** All voters, including this node, in node order. */
  readonly members: readonly MemberAddress[];
  /** The node's own data directory (survives restarts within a run). */
  readonly dataDir: string;
  /**
   * The HTTP URL of a member to join through (`--join`, docs/operations.md) instead of naming
   * the voters with `--peers`; absent on an ordinary start.
   */
  readonly join?: string;
}

/** What to exec (inside the node's namespace for the netns backend). */
export interface NodeCommand {
  readonly file: string;
  readonly args: readonly string[];
  /** Added to the harness's environment. */
  readonly env: Readonly<Record<string, string>>;
}

/** Builds a node's command. Must be pure (called again on every restart). */
export type NodeCommandBuilder = (spec: NodeLaunchSpec) => NodeCommand;

/** Cluster timing passed to every Tenure server (docs/api.md defaults unless changed). */
export interface ServerTimingOptions {
  readonly heartbeatMs?: number;
  readonly electionTimeoutMs?: number;
  readonly logLevel?: string;
  /** More server flags appended as given (e.g. `--snapshot-entries 100`, BC-25). */
  readonly extraArgs?: readonly string[];
}

/** `--peers` text: `id=raftHost:port@httpHost:port,…` (packages/server/src/config.ts). */
export function peersFlag(members: readonly MemberAddress[]): string {
  return members.map((m) => `${m.id}=${m.raftAddress}@${m.httpAddress}`).join(',');
}

/**
 * The real server: `node <repoRoot>/packages/server/dist/main.js` with flags. `repoRoot` is the
 * checkout (the folder holding packages/). `--http` and `--raft` are always given, so a start with
 * `spec.join` has what `--join` needs.
 */
export function tenureServerCommand(
  repoRoot: string,
  timing: ServerTimingOptions = {},
): NodeCommandBuilder {
  return (spec) => {
    const args = [
      join(repoRoot, 'packages/server/dist/main.js'),
      '--id',
      spec.id,
      ...(spec.join !== undefined ? ['--join', spec.join] : ['--peers', peersFlag(spec.members)]),
      '--http',
      spec.httpAddress,
      '--raft',
      spec.raftAddress,
      '--data-dir',
      spec.dataDir,
      // The replica-hash route the checkers compare replicas with (off by default on a node).
      '--state-hash-route',
      'on',
    ];
    if (timing.heartbeatMs !== undefined) args.push('--heartbeat-ms', String(timing.heartbeatMs));
    if (timing.electionTimeoutMs !== undefined)
      args.push('--election-timeout-ms', String(timing.electionTimeoutMs));
    if (timing.logLevel !== undefined) args.push('--log-level', timing.logLevel);
    if (timing.extraArgs !== undefined) args.push(...timing.extraArgs);
    return { file: process.execPath, args, env: {} };
  };
}

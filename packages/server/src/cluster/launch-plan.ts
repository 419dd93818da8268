/**
 * What the launcher will start, from its argv and env (settings: launcher-settings.ts): the node
 * layout, the node flags, and the command that restarts one node of exactly this layout.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ConfigError } from '../config/config-error.js';
import { commandFor, parseFlags, readSettings } from '../config/read-settings.js';
import { serverVersion } from '../config/version.js';
import { LAUNCHER_SETTINGS, RAFT_PORT_OFFSET } from './launcher-settings.js';
import { localNodes, type LocalNodeSpec } from './local-nodes.js';

/** The launch, resolved. */
export interface LaunchPlan {
  readonly host: string;
  readonly httpPort: number;
  /** `--raft-port`, or `--http-port` + RAFT_PORT_OFFSET. */
  readonly raftPort: number;
  /** Absolute data directory; node nK's data is in `<dataDir>/nK`. */
  readonly dataDir: string;
  /** The whole layout n1..nN. */
  readonly nodes: readonly LocalNodeSpec[];
  /** The nodes this launch starts: all, or the one of `--only`. */
  readonly selected: readonly LocalNodeSpec[];
  readonly only: string | undefined;
  /** Flags after `--`, for every node. */
  readonly extra: readonly string[];
  /** `--restore`: absolute path of a backup file every node is seeded from (a new cluster). */
  readonly restore: string | undefined;
  /** `--secure` (or TENURE_LAUNCH_SECURE=on): generated certificates, TLS on both sides (secure.ts). */
  readonly secure: boolean;
}

/** The launcher's commander Command (`--help`, `--version`, one option per setting). */
export function launcherCommand(): Command {
  return commandFor(LAUNCHER_SETTINGS, {
    name: 'npm start --',
    description:
      'Start a local Tenure cluster (n1..nN on one host), or one node of it with --only. ' +
      'Every setting is a flag or a TENURE_LAUNCH_* env var (flag wins); flags after -- go to ' +
      'every node (see tenure-server --help).',
    version: serverVersion(),
    helpAfter: [
      'Examples:',
      '  npm start                                   # HTTP 7001-7003, Raft 7101-7103, data ./data',
      '  npm start -- --http-port 8001               # HTTP 8001-8003, Raft 8101-8103',
      '  npm run node -- n2 --data-dir ./data        # restart n2 alone (same layout flags)',
      '  npm start -- -- --log-level debug           # node flags after --',
      '  npm start -- --data-dir ./new --restore b.tenure-snapshot  # a new cluster from a backup',
      `  npm start -- --secure                       # TLS with a generated CA (env ${LAUNCHER_SETTINGS.secure.env}=on)`,
    ].join('\n'),
  });
}

/** Resolve argv (without node and script) and env; throws ConfigError naming flag or env var. */
export function launchPlan(argv: readonly string[], env: NodeJS.ProcessEnv): LaunchPlan {
  const dash = argv.indexOf('--');
  const own = dash < 0 ? argv : argv.slice(0, dash);
  const extra = dash < 0 ? [] : argv.slice(dash + 1);
  const r = readSettings(LAUNCHER_SETTINGS, parseFlags(launcherCommand(), own), env);
  const v = r.values;
  const raftPort = v.raftPort ?? v.httpPort + RAFT_PORT_OFFSET;
  const dataDir = resolve(v.dataDir);
  const layout = { host: v.host, httpPort: v.httpPort, raftPort, nodes: v.nodes, dataDir };
  const nodes = localNodes(layout);
  const selected = v.only === undefined ? nodes : nodes.filter((n) => n.id === v.only);
  if (selected.length === 0)
    throw r.error('only', `no node ${v.only} (have ${nodes.map((n) => n.id).join(', ')})`);
  if (v.raftPort === undefined && raftPort + v.nodes - 1 > 65535)
    throw new ConfigError('raft-port', `--http-port + ${RAFT_PORT_OFFSET} is beyond 65535`);
  const restore = v.restore === undefined ? undefined : resolve(v.restore);
  return { ...layout, nodes, selected, only: v.only, extra, restore, secure: v.secure };
}

/** tenure-server flags of node `n` in plan `p` (before the user's extra flags). */
export function nodeArgs(p: LaunchPlan, n: LocalNodeSpec, clusterId: string): string[] {
  const peers = p.nodes.map((m) => `${m.id}=${m.raftAddress}@${m.httpAddress}`).join(',');
  const own = ['--id', n.id, '--peers', peers, '--data-dir', n.dataDir, '--cluster-id', clusterId];
  return p.restore === undefined ? own : [...own, '--restore', p.restore];
}

/** `arg` quoted for a POSIX shell when it needs it. */
function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** `extra` node flags without `--token-floor` (it applies only to the first, restoring start). */
function withoutRestoreFlags(extra: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < extra.length; i++) {
    if (extra[i] === '--token-floor') i++;
    else if (!extra[i]!.startsWith('--token-floor=')) kept.push(extra[i]!);
  }
  return kept;
}

/**
 * The command that restarts node `id` alone against the same layout and data: `npm run node --
 * <id>` plus the ports and absolute data directory in use, host/nodes when not the defaults, and
 * the node flags after `--`.
 */
export function restartCommand(id: string, p: LaunchPlan): string {
  const args = [id];
  if (p.secure) args.push(`--${LAUNCHER_SETTINGS.secure.flag}`);
  if (p.host !== LAUNCHER_SETTINGS.host.defaultValue) args.push('--host', p.host);
  if (p.nodes.length !== LAUNCHER_SETTINGS.nodes.defaultValue)
    args.push('--nodes', String(p.nodes.length));
  args.push('--http-port', String(p.httpPort), '--raft-port', String(p.raftPort));
  args.push('--data-dir', p.dataDir);
  // A restart continues from the node's own data: the one-time restore flags would be refused.
  const extra = withoutRestoreFlags(p.extra);
  if (extra.length > 0) args.push('--', ...extra);
  return `npm run node -- ${args.map((a) => (a === '<id>' ? a : shellQuote(a))).join(' ')}`;
}

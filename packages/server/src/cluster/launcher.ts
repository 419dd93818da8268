#!/usr/bin/env node
/**
 * The local-cluster launcher behind `npm start` (SPEC §3 Local cluster processes): starts three
 * nodes on loopback, each its own OS process (`node dist/main.js ...`), prints the endpoints and a
 * first curl command. One node's death does not stop the others (it is logged with the command to
 * restart it, flags included); Ctrl-C / SIGTERM stops all of them gracefully and quickly: the nodes
 * get SIGUSR2 ("whole-cluster shutdown": no leadership transfer, which could only fail with every
 * node stopping), while a single node (`--only`) gets SIGTERM and hands leadership over first;
 * data stays under ./data/<id>.
 * `--only n1` (`npm run node -- n1`) starts just that node with the same configuration and data.
 *
 * Flags (env): --host (TENURE_LAUNCH_HOST, 127.0.0.1), --http-port (TENURE_LAUNCH_HTTP_PORT, 7001),
 * --raft-port (TENURE_LAUNCH_RAFT_PORT, 7101), --nodes (TENURE_LAUNCH_NODES, 3),
 * --data-dir (TENURE_LAUNCH_DATA_DIR, ./data), --only <id>; anything after `--` goes to every node.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLUSTER_STOP_SIGNAL } from '../stop-signals.js';
import { localNodes } from './local-nodes.js';

interface LaunchOptions {
  host: string;
  httpPort: number;
  raftPort: number;
  nodes: number;
  dataDir: string;
  only: string | null;
  extra: string[];
}

function fail(message: string): never {
  process.stderr.write(`launcher: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv: string[]): LaunchOptions {
  const env = process.env;
  const o: LaunchOptions = {
    host: env.TENURE_LAUNCH_HOST ?? '127.0.0.1',
    httpPort: Number(env.TENURE_LAUNCH_HTTP_PORT ?? 7001),
    raftPort: Number(env.TENURE_LAUNCH_RAFT_PORT ?? 7101),
    nodes: Number(env.TENURE_LAUNCH_NODES ?? 3),
    dataDir: env.TENURE_LAUNCH_DATA_DIR ?? 'data',
    only: null,
    extra: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      o.extra = argv.slice(i + 1);
      break;
    }
    const next = (): string => argv[++i] ?? fail(`${a} needs a value`);
    if (a === '--host') o.host = next();
    else if (a === '--http-port') o.httpPort = Number(next());
    else if (a === '--raft-port') o.raftPort = Number(next());
    else if (a === '--nodes') o.nodes = Number(next());
    else if (a === '--data-dir') o.dataDir = next();
    else if (a === '--only') o.only = next();
    else fail(`unknown argument ${a}`);
  }
  for (const [k, v] of [
    ['--http-port', o.httpPort],
    ['--raft-port', o.raftPort],
  ] as const) {
    if (!Number.isInteger(v) || v < 1 || v > 65535 - o.nodes) fail(`${k} must be a port number`);
  }
  if (!Number.isInteger(o.nodes) || o.nodes < 1 || o.nodes > 9) fail('--nodes must be 1..9');
  o.dataDir = resolve(o.dataDir);
  return o;
}

/** `arg` quoted for a POSIX shell when it needs it. */
function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command that restarts node `id` alone against the same layout and data: `npm run node --
 * <id>` plus the ports and (absolute) data directory in use, host/nodes when not the defaults, and
 * the node flags after `--`.
 */
function restartCommand(id: string, o: LaunchOptions): string {
  const args = [id];
  if (o.host !== '127.0.0.1') args.push('--host', o.host);
  if (o.nodes !== 3) args.push('--nodes', String(o.nodes));
  args.push(
    '--http-port',
    String(o.httpPort),
    '--raft-port',
    String(o.raftPort),
    '--data-dir',
    o.dataDir,
  );
  if (o.extra.length > 0) args.push('--', ...o.extra);
  return `npm run node -- ${args.map(shellQuote).join(' ')}`;
}

async function waitForLeader(httpAddress: string, timeoutMs: number): Promise<string | null> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      const res = await fetch(`http://${httpAddress}/v1/cluster`, {
        signal: AbortSignal.timeout(1000),
      });
      const body = (await res.json()) as { leader?: string | null };
      if (body.leader) return body.leader;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return null;
}

function main(): void {
  const o = parseArgs(process.argv.slice(2));
  const nodes = localNodes(o);
  const peers = nodes.map((n) => `${n.id}=${n.raftAddress}@${n.httpAddress}`).join(',');
  const selected = o.only === null ? nodes : nodes.filter((n) => n.id === o.only);
  if (selected.length === 0)
    fail(`--only ${o.only}: no such node (have ${nodes.map((n) => n.id).join(', ')})`);
  const mainJs = join(dirname(fileURLToPath(import.meta.url)), '..', 'main.js');
  const children = new Map<string, ChildProcess>();
  let stopping = false;

  const log = (msg: string): void => {
    process.stdout.write(`[launcher] ${msg}\n`);
  };

  for (const n of selected) {
    mkdirSync(n.dataDir, { recursive: true });
    // Own process group: Ctrl-C reaches only the launcher, which then stops each node once.
    const child = spawn(
      process.execPath,
      [mainJs, '--id', n.id, '--peers', peers, '--data-dir', n.dataDir, ...o.extra],
      { stdio: 'inherit', detached: true },
    );
    children.set(n.id, child);
    log(
      `started ${n.id} (pid ${child.pid}) http ${n.httpAddress} raft ${n.raftAddress} data ${n.dataDir}`,
    );
    child.on('exit', (code, signal) => {
      children.delete(n.id);
      if (!stopping) {
        log(
          `${n.id} exited (${signal ?? `code ${code}`}); the other nodes keep running. Restart it with: ${restartCommand(n.id, o)}`,
        );
      }
      if (children.size === 0) {
        log(stopping ? 'all nodes stopped' : 'no node is running; exiting');
        process.exit(stopping ? 0 : 1);
      }
    });
  }

  const stopAll = (signal: NodeJS.Signals): void => {
    if (stopping) {
      for (const c of children.values()) c.kill('SIGKILL');
      return;
    }
    stopping = true;
    // Whole cluster: SIGUSR2 tells each node to skip the leadership transfer (its targets are
    // stopping too). One node alone: SIGTERM, the graceful stop that hands leadership over first.
    const nodeSignal: NodeJS.Signals = o.only === null ? CLUSTER_STOP_SIGNAL : 'SIGTERM';
    log(`${signal}: stopping ${[...children.keys()].join(', ')}`);
    for (const c of children.values()) c.kill(nodeSignal);
  };
  process.on('SIGINT', stopAll);
  process.on('SIGTERM', stopAll);
  process.on('exit', () => {
    for (const c of children.values()) c.kill('SIGKILL');
  });

  if (o.only === null) {
    void waitForLeader(selected[0]!.httpAddress, 20_000).then((leader) => {
      if (stopping) return;
      if (leader === null) return log('no leader elected yet; check the logs above');
      const a = nodes[0]!.httpAddress;
      log(`Tenure local cluster is up; leader ${leader}`);
      for (const n of nodes)
        log(`  ${n.id}: http://${n.httpAddress}   raft ${n.raftAddress}   data ${n.dataDir}`);
      log(`  OpenAPI: http://${a}/docs`);
      log('Try:');
      log(
        `  curl -s -X POST http://${a}/v1/leases/demo/acquire -H 'content-type: application/json' -d '{"holder":"me","ttlMs":30000}'`,
      );
    });
  }
}

main();

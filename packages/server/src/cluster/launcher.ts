#!/usr/bin/env node
/**
 * The local-cluster launcher behind `npm start` (docs/configuration.md, Launcher): starts n1..nN on
 * one host, each its own OS process (`node dist/main.js ...`), and prints the endpoints and a first
 * curl command once every node it started answers as itself (node id and this cluster's id) and a
 * leader is known. Before starting anything it checks that the HTTP and Raft port ranges do not
 * overlap and that every port is free, and fails saying which are not.
 * One node's death does not stop the others (it is logged with the command that restarts it);
 * Ctrl-C / SIGTERM stop all of them gracefully: the nodes get SIGUSR2 ("whole-cluster shutdown":
 * no leadership transfer, which could only fail with every node stopping), while a single node
 * (`--only`) gets SIGTERM and hands leadership over first. A second signal kills them at once.
 * Settings: cluster/launcher-settings.ts; anything after `--` goes to every node.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CommanderError } from 'commander';
import { ConfigError } from '../config/config-error.js';
import { CLUSTER_STOP_SIGNAL } from '../stop-signals.js';
import { checkBackupFile, RestoreError } from '../restore.js';
import { localClusterId } from './cluster-id.js';
import { isEmptyDir } from './membership-startup.js';
import { hasRemovedMark } from './removed-mark.js';
import type { LocalNodeSpec } from './local-nodes.js';
import { launchPlan, nodeArgs, restartCommand, type LaunchPlan } from './launch-plan.js';
import { layoutProblems, takenPorts } from './port-check.js';
import { prepareSecureLaunch, type SecureLaunch } from './secure.js';
import { waitUntilUp } from './wait-up.js';

/** How long the launcher waits for its nodes and a leader before saying so (ms). */
const UP_TIMEOUT_MS = 60_000;

const log = (msg: string): void => {
  process.stdout.write(`[launcher] ${msg}\n`);
};

function fail(message: string): never {
  process.stderr.write(`launcher: ${message}\n`);
  process.exit(2);
}

/** The plan from argv and env, or exit 2 naming the bad flag / env var (0 after --help). */
function planOrExit(argv: readonly string[]): LaunchPlan {
  try {
    return launchPlan(argv, process.env);
  } catch (err) {
    if (err instanceof ConfigError) fail(`${err.message} (see --help)`);
    if (err instanceof CommanderError) process.exit(err.exitCode);
    throw err;
  }
}

/** Fail before starting anything if the layout or a port is unusable. */
async function checkPortsOrExit(p: LaunchPlan): Promise<void> {
  const layout = { httpPort: p.httpPort, raftPort: p.raftPort, nodes: p.nodes.length };
  const problems = [...layoutProblems(layout), ...(await takenPorts(p.selected))];
  if (problems.length === 0) return;
  const hint =
    'Is another cluster running? Stop it, or choose other ports with --http-port (Raft ports ' +
    'follow it unless --raft-port is given).';
  fail(`cannot start: ${problems.join('; ')}. ${hint}`);
}

/**
 * Fail before creating any directory if the `--restore` file would be refused by every node, or
 * before starting any node if one of their data directories already has data.
 */
async function checkBackupOrExit(file: string, nodes: readonly LocalNodeSpec[]): Promise<void> {
  const full = [];
  for (const n of nodes) if (!(await isEmptyDir(n.dataDir))) full.push(n.dataDir);
  if (full.length > 0)
    fail(
      `restore refused: data directories ${full.join(', ')} are not empty (already restored? ` +
        'start the cluster without --restore, or wipe them to restore again)',
    );
  try {
    const header = await checkBackupFile(file);
    log(`backup ${file}: cluster ${header.clusterId}, index ${header.index}, checksum ok`);
  } catch (err) {
    if (err instanceof RestoreError) fail(`restore refused: ${err.message}`);
    throw err;
  }
}

function printUp(
  p: LaunchPlan,
  clusterId: string,
  leader: string,
  secure: SecureLaunch | null,
): void {
  const a = p.nodes[0]!.httpAddress;
  const scheme = secure === null ? 'http' : 'https';
  log(`Tenure local cluster is up; leader ${leader}; cluster id ${clusterId}`);
  for (const n of p.nodes)
    log(`  ${n.id}: ${scheme}://${n.httpAddress}   raft ${n.raftAddress}   data ${n.dataDir}`);
  log(`  OpenAPI: ${scheme}://${a}/docs`);
  if (secure !== null) {
    log(`  TLS on the API and between peers; CA certificate: ${secure.caFile}`);
    for (const note of secure.notes) log(`  ${note}`);
  }
  const tokenFile = join(p.dataDir, 'root.token');
  const cacert =
    secure === null
      ? ''
      : ` --cacert ${secure.caFile} -H "authorization: Bearer $(cat ${tokenFile})"`;
  log('Try:');
  log(
    `  curl -s${cacert} -X POST ${scheme}://${a}/v1/leases/demo/acquire -H 'content-type: application/json' -d '{"holder":"me","ttlMs":30000}'`,
  );
  if (secure !== null) {
    const endpoints = p.nodes.map((n) => `https://${n.httpAddress}`).join(',');
    log(
      `  TENURE_TOKEN=$(cat ${tokenFile}) TENURE_CA=${secure.caFile} TENURE_ENDPOINTS=${endpoints} npx tenure cluster status`,
    );
  }
  log(`Restart one node after it stops: ${restartCommand('<id>', p)}`);
  log('Stop the cluster: Ctrl-C (or SIGTERM)');
}

/** The node processes of this launch and whether a stop was asked for. */
interface Running {
  readonly children: Map<string, ChildProcess>;
  stopping: boolean;
}

/**
 * What to tell after node `n` exited on its own: code 0 with the removal mark in its data
 * directory is a removed member, code 2 a refused start (its log says why; restarting it the same
 * way is refused again); anything else (a crash, a signal, a stop) is restarted with the launcher's
 * own flags.
 */
function afterExit(n: LocalNodeSpec, p: LaunchPlan, code: number | null): string {
  if (code === 0 && hasRemovedMark(n.dataDir))
    return 'it was removed from the cluster (see its log); the others keep running';
  if (code === 2)
    return 'it refused to start (its log says why and what to do); the others keep running';
  return `the other nodes keep running. Restart it with: ${restartCommand(n.id, p)}`;
}

/** Start node `n` in its own process group (Ctrl-C reaches only the launcher, which stops it). */
function startNode(
  p: LaunchPlan,
  n: LocalNodeSpec,
  clusterId: string,
  r: Running,
  secure: SecureLaunch | null,
): void {
  const mainJs = join(dirname(fileURLToPath(import.meta.url)), '..', 'main.js');
  mkdirSync(n.dataDir, { recursive: true });
  const tlsArgs = secure?.argsOf(n.id) ?? [];
  const args = [mainJs, ...nodeArgs(p, n, clusterId), ...tlsArgs, ...p.extra];
  const env = { ...process.env, ...secure?.env };
  const child = spawn(process.execPath, args, { stdio: 'inherit', detached: true, env });
  r.children.set(n.id, child);
  log(
    `started ${n.id} (pid ${child.pid}) http ${n.httpAddress} raft ${n.raftAddress} data ${n.dataDir}`,
  );
  child.on('exit', (code, signal) => {
    r.children.delete(n.id);
    if (!r.stopping) log(`${n.id} exited (${signal ?? `code ${code}`}); ${afterExit(n, p, code)}`);
    if (r.children.size === 0) {
      log(r.stopping ? 'all nodes stopped' : 'no node is running; exiting');
      // One node alone (--only) exits as its node did (0 removed, 2 refused); a cluster that
      // lost every node on its own is a failure.
      process.exit(r.stopping ? 0 : p.only !== undefined ? (code ?? 1) : 1);
    }
  });
}

/**
 * First signal: stop every node gracefully. Whole cluster: SIGUSR2 tells each node to skip the
 * leadership transfer (its targets are stopping too); one node alone: SIGTERM, the graceful stop
 * that hands leadership over first. Second signal: SIGKILL.
 */
function stopOnSignals(p: LaunchPlan, r: Running): void {
  const stopAll = (signal: NodeJS.Signals): void => {
    if (r.stopping) {
      for (const c of r.children.values()) c.kill('SIGKILL');
      return;
    }
    r.stopping = true;
    const nodeSignal: NodeJS.Signals = p.only === undefined ? CLUSTER_STOP_SIGNAL : 'SIGTERM';
    log(`${signal}: stopping ${[...r.children.keys()].join(', ')}`);
    for (const c of r.children.values()) c.kill(nodeSignal);
  };
  process.on('SIGINT', stopAll);
  process.on('SIGTERM', stopAll);
  process.on('exit', () => {
    for (const c of r.children.values()) c.kill('SIGKILL');
  });
}

/**
 * The nodes to start first and those to start once the first answer: with some data directories
 * holding data and others empty (`--nodes 5` on a three-node cluster's data, a wiped member), the
 * empty ones start last, so their start-up check reaches members that can tell whether they belong
 * (docs/operations.md). Otherwise (a new cluster, a restart, a restore) all start together.
 */
async function startOrder(
  p: LaunchPlan,
): Promise<{ first: LocalNodeSpec[]; later: LocalNodeSpec[] }> {
  if (p.restore !== undefined) return { first: [...p.selected], later: [] };
  const first: LocalNodeSpec[] = [];
  const later: LocalNodeSpec[] = [];
  for (const n of p.selected) ((await isEmptyDir(n.dataDir)) ? later : first).push(n);
  return first.length === 0 || later.length === 0
    ? { first: [...p.selected], later: [] }
    : { first, later };
}

async function main(): Promise<void> {
  const p = planOrExit(process.argv.slice(2));
  // The backup first: it reads files only, so its answer does not depend on who holds a port.
  if (p.restore !== undefined) await checkBackupOrExit(p.restore, p.selected);
  await checkPortsOrExit(p);
  const clusterId = localClusterId(p.dataDir);
  const r: Running = { children: new Map(), stopping: false };
  log(`pid ${process.pid}; cluster id ${clusterId}; data ${p.dataDir}`);
  const secure = p.secure ? prepareSecureLaunch(p, log) : null;
  stopOnSignals(p, r);
  const reach = secure === null ? {} : { reach: { scheme: 'https' as const, fetch: secure.fetch } };
  const { first, later } = await startOrder(p);
  for (const n of first) startNode(p, n, clusterId, r, secure);
  if (later.length > 0) {
    // An empty node asks the others whether the cluster knows it (a wiped member, or a node the
    // stored membership does not have, refuses): they must be up to answer.
    log(`${later.map((n) => n.id).join(', ')}: no data yet; starting once the others answer`);
    await waitUntilUp(
      first.map((n) => ({ ...n, clusterId })),
      new Set(p.nodes.map((n) => n.id)),
      {
        running: (id) => r.children.has(id),
        timeoutMs: UP_TIMEOUT_MS,
        needLeader: false,
        ...reach,
      },
    );
    if (r.stopping) return;
    for (const n of later) startNode(p, n, clusterId, r, secure);
  }

  const own = p.selected.map((n) => ({ ...n, clusterId }));
  const up = await waitUntilUp(own, new Set(p.nodes.map((n) => n.id)), {
    running: (id) => r.children.has(id),
    timeoutMs: UP_TIMEOUT_MS,
    needLeader: p.only === undefined,
    ...reach,
  });
  if (r.stopping) return;
  if (up.kind === 'up' && p.only !== undefined) log(`${p.only} is up (cluster id ${clusterId})`);
  else if (up.kind === 'up') printUp(p, clusterId, up.leader, secure);
  else if (up.kind === 'foreign')
    log(`NOT up: ${up.node}'s address answers as another node or cluster: ${up.answer}`);
  else if (up.kind === 'exited') log(`NOT up: ${up.node} exited while starting`);
  else log(`not up after ${UP_TIMEOUT_MS / 1000} s: still waiting for ${up.waitingFor}`);
}

void main();

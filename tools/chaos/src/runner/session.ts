/**
 * One harness session: run folder, backend (netns or compose) with its nodes up, leader sampler,
 * run clock, seeded random, history, fault context, and the exit handlers that tear everything
 * down when the process is interrupted. `finish` runs the checkers and writes the artefacts:
 * history.jsonl, faults.jsonl, leader-samples.jsonl, verdicts.json, summary.md, timeline.html
 * (node logs are already under nodes/).
 */
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ChaosBackend } from '../topology/backend.js';
import { ComposeCluster } from '../topology/compose-cluster.js';
import { NetnsCluster } from '../topology/netns-cluster.js';
import { tenureServerCommand, type NodeCommandBuilder } from '../topology/node-command.js';
import { BlockSet, type ActiveFault, type FaultContext } from '../faults/fault.js';
import type {
  Checker,
  CheckerFactory,
  ClusterHandle,
  FaultEvent,
  FaultKind,
  HistoryFactory,
  HistorySink,
  NodeId,
  Random,
  RunClock,
  RunRecord,
  RunTiming,
  WorkloadFactory,
} from '../types.js';
import { createRandom } from '../util/random.js';
import { createRunClock } from '../util/clock.js';
import { LeaderSampler } from './leader-sampler.js';
import { createFallbackHistory } from './fallback-history.js';
import { leaderSampleChecker } from './leader-check.js';
import { renderSummary, renderTimeline, type Verdict } from './report.js';

/** Options shared by mixed runs and scenarios. */
export interface SessionOptions {
  readonly backend: 'netns' | 'compose';
  readonly seed: number;
  /** Parent folder of run folders (e.g. `<repo>/chaos-runs`). */
  readonly outRoot: string;
  /** The checkout (holds packages/ and docker-compose.yml). */
  readonly repoRoot: string;
  /** `mixed` or a scenario name; part of the run folder name. */
  readonly scenario: string;
  readonly log: (line: string) => void;
  /** Overrides the node command (tests use a trivial server). */
  readonly nodeCommand?: NodeCommandBuilder;
  readonly heartbeatMs?: number;
  readonly electionTimeoutMs?: number;
  /** Run nodes under libfaketime with a timestamp file (wall-clock step faults). */
  readonly wallClockFaults?: boolean;
  /** Extra server flags for every node (ignored when `nodeCommand` is given). */
  readonly serverArgs?: readonly string[];
  /** How long `open` waits for the first leader, ms. Default 30,000. */
  readonly firstLeaderWaitMs?: number;
  /** Passed to `createCheckers` as the per-checker search bound, ms. Default 60,000. */
  readonly searchBudgetMs?: number;
}

/** A checker verdict bundle plus where the artefacts are. */
export interface SessionResult {
  readonly runDir: string;
  readonly ok: boolean;
  readonly verdicts: readonly Verdict[];
  readonly record: RunRecord;
}

/** What the session found in workload/ and check/ (or null when the module is missing). */
export interface LoadedModules {
  readonly createWorkload: WorkloadFactory | null;
  readonly createHistory: HistoryFactory | null;
  readonly createCheckers: CheckerFactory | null;
  readonly notes: readonly string[];
}

/**
 * Loads workload/index.js and check/index.js by dynamic import (absent modules are reported in
 * `notes`, not thrown), so the harness builds and runs before the other halves exist.
 */
export async function loadModules(): Promise<LoadedModules> {
  const notes: string[] = [];
  const load = async (relative: string): Promise<Record<string, unknown> | null> => {
    const here = new URL('.', import.meta.url);
    // Compiled runs load .js; tap runs the .ts sources through tsx, which maps .js to .ts.
    const url = new URL(relative, here);
    try {
      return (await import(url.href)) as Record<string, unknown>;
    } catch (error) {
      // Only the module itself missing counts as absent (node: ERR_MODULE_NOT_FOUND; tsx: plain
      // Error); a module that exists but fails to load is a real error and is rethrown.
      const missing = fileURLToPath(url);
      if (String((error as Error).message).includes(`Cannot find module '${missing}'`)) {
        notes.push(`${relative} not found: using the harness fallback`);
        return null;
      }
      throw error;
    }
  };
  const workload = await load('../workload/index.js');
  const check = await load('../check/index.js');
  const fn = <T>(mod: Record<string, unknown> | null, name: string): T | null => {
    const value = mod?.[name];
    if (mod !== null && typeof value !== 'function')
      notes.push(`${name} not exported: using the harness fallback`);
    return typeof value === 'function' ? (value as T) : null;
  };
  return {
    createWorkload: fn<WorkloadFactory>(workload, 'createWorkload'),
    createHistory: fn<HistoryFactory>(workload, 'createHistory'),
    createCheckers: fn<CheckerFactory>(check, 'createCheckers'),
    notes,
  };
}

/** Timing of the run (docs/api.md defaults; Δmax per docs/failure-scenarios.md). */
export function runTiming(heartbeatMs = 100, electionTimeoutMs = 1000): RunTiming {
  return {
    heartbeatMs,
    electionTimeoutMinMs: electionTimeoutMs,
    electionTimeoutMaxMs: electionTimeoutMs * 2,
    maxDriftRatio: 0.01,
    expiryLatenessMaxMs: 2 * electionTimeoutMs * 2 + 1000,
  };
}

/** Folder name `<iso-ish timestamp>-<scenario>-<seed>`. */
function runFolderName(scenario: string, seed: number): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return `${stamp}-${scenario}-${seed}`;
}

/** A live session. Make with `openSession`; end with `finish` (or `abort`). */
export class Session {
  readonly runDir: string;
  readonly backend: ChaosBackend;
  readonly sampler: LeaderSampler;
  readonly clock: RunClock;
  readonly random: Random;
  readonly timing: RunTiming;
  readonly history: HistorySink;
  readonly cluster: ClusterHandle;
  readonly faults: FaultContext;
  readonly modules: LoadedModules;
  readonly options: SessionOptions;
  readonly notes: string[] = [];
  readonly #faultEvents: FaultEvent[] = [];
  readonly #active = new Map<number, ActiveFault>();
  readonly #cleanupHandlers: (() => void)[] = [];
  #closed = false;

  constructor(
    options: SessionOptions,
    runDir: string,
    backend: ChaosBackend,
    modules: LoadedModules,
    clock: RunClock,
  ) {
    this.options = options;
    this.runDir = runDir;
    this.backend = backend;
    this.modules = modules;
    this.notes.push(...modules.notes);
    this.clock = clock;
    this.random = createRandom(options.seed);
    this.timing = runTiming(options.heartbeatMs, options.electionTimeoutMs);
    this.sampler = new LeaderSampler({
      endpoints: () => backend.endpoints(),
      incarnation: (id) => backend.incarnation(id),
      dataGeneration: (id) => backend.dataGeneration(id),
      clock,
    });
    this.history = modules.createHistory?.(clock) ?? createFallbackHistory(clock);
    const sampler = this.sampler;
    this.cluster = {
      nodeIds: backend.nodeIds,
      endpoints: () => backend.endpoints(),
      endpoint: (id) => backend.endpoint(id),
      clientAddresses: backend.clientAddresses,
      clock,
      leaderSamples: () => sampler.samples(),
      currentLeader: () => sampler.currentLeader(),
      waitForLeader: (timeoutMs, signal) => sampler.waitForLeader(timeoutMs, signal),
      nodeState: (id) => backend.nodeState(id),
    };
    let nextFaultId = 1;
    const faultsPath = join(runDir, 'faults.jsonl');
    this.faults = {
      backend,
      clock,
      random: this.random.fork('faults'),
      timing: this.timing,
      currentLeader: () => sampler.currentLeader(),
      waitForLeader: (timeoutMs) => sampler.waitForLeader(timeoutMs),
      nextFaultId: () => nextFaultId++,
      network: new BlockSet(backend),
      record: (event) => {
        const full: FaultEvent = { timeMs: clock.now(), ...event };
        this.#faultEvents.push(full);
        appendFileSync(faultsPath, `${JSON.stringify(full)}\n`);
        options.log(
          `[${(full.timeMs / 1000).toFixed(1).padStart(6)}s] ${full.action === 'inject' ? 'INJECT' : 'heal  '} ${full.kind}: ${full.detail}`,
        );
        return full;
      },
    };
    writeFileSync(faultsPath, '');
  }

  /** Injects through the registry-free path: keeps `fault` so `healAll` can undo it on abort. */
  track(fault: ActiveFault): ActiveFault {
    this.#active.set(fault.faultId, fault);
    return fault;
  }

  /** Heals `fault` and forgets it. */
  async heal(fault: ActiveFault): Promise<void> {
    await fault.heal();
    this.#active.delete(fault.faultId);
  }

  /**
   * Heals every tracked fault, clears all blocks and link degradation, and starts or resumes every
   * node that is not running. Never throws (errors are logged).
   */
  async healAll(): Promise<void> {
    for (const fault of [...this.#active.values()]) {
      await fault
        .heal()
        .catch((error: Error) =>
          this.options.log(`heal #${fault.faultId} failed: ${error.message}`),
        );
      this.#active.delete(fault.faultId);
    }
    await this.faults.network
      .clear()
      .catch((error: Error) => this.options.log(`clear blocks failed: ${error.message}`));
    for (const id of this.backend.nodeIds) {
      await this.backend.setNetem(id, null).catch(() => undefined);
      if (this.backend.nodeState(id) === 'paused')
        await this.backend.resumeNode(id).catch(() => undefined);
      if (this.backend.nodeState(id) === 'stopped')
        await this.backend
          .startNode(id)
          .catch((error: Error) => this.options.log(`restart ${id} failed: ${error.message}`));
    }
  }

  /** Fault events so far. */
  faultEvents(): readonly FaultEvent[] {
    return [...this.#faultEvents];
  }

  /**
   * Installs SIGINT/SIGTERM/SIGHUP/exit handlers that tear the backend down synchronously. A
   * repeated signal during teardown is ignored (a terminal sends SIGINT to the whole foreground
   * group, and a default-action second signal would kill the teardown half way).
   */
  installExitHandlers(): void {
    let tearingDown = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (tearingDown) return;
      tearingDown = true;
      this.options.log(`${signal}: tearing down ${this.runDir}`);
      this.backend.downSync();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    };
    const onExit = (): void => this.backend.downSync();
    const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
    for (const signal of signals) process.on(signal, onSignal);
    process.once('exit', onExit);
    this.#cleanupHandlers.push(() => {
      for (const signal of signals) process.removeListener(signal, onSignal);
      process.removeListener('exit', onExit);
    });
  }

  /**
   * Stops sampling, runs the checkers (harness + check/ + `extra`), writes the artefacts, tears
   * the backend down. `extraVerdicts` are scenario-specific results. Never throws for a failed
   * checker (it becomes a FAIL verdict).
   */
  async finish(
    extraCheckers: readonly Checker[] = [],
    extraVerdicts: readonly Verdict[] = [],
    options: { keepData?: boolean } = {},
  ): Promise<SessionResult> {
    this.sampler.stop();
    const durationMs = this.clock.now();
    const events = this.history.events();
    const record: RunRecord = {
      runDir: this.runDir,
      seed: this.options.seed,
      scenario: this.options.scenario,
      nodeIds: this.backend.nodeIds,
      durationMs,
      timing: this.timing,
      history: events,
      ops: this.history.ops(),
      faults: this.faultEvents(),
      leaderSamples: this.sampler.samples(),
    };
    await this.close();
    writeFileSync(
      join(this.runDir, 'history.jsonl'),
      events.map((e) => JSON.stringify(e)).join('\n') + (events.length > 0 ? '\n' : ''),
    );
    writeFileSync(
      join(this.runDir, 'leader-samples.jsonl'),
      record.leaderSamples.map((s) => JSON.stringify(s)).join('\n') + '\n',
    );
    const checkers: Checker[] = [
      leaderSampleChecker(),
      ...(this.modules.createCheckers?.({
        timing: this.timing,
        searchBudgetMs: this.options.searchBudgetMs ?? 60_000,
      }) ?? []),
      ...extraCheckers,
    ];
    const verdicts: Verdict[] = [...extraVerdicts];
    for (const checker of checkers) {
      const startMs = performance.now();
      try {
        const result = await checker.check(record);
        verdicts.push({
          checker: checker.name,
          ...result,
          ok: result.ok && result.violations.length === 0,
          elapsedMs: performance.now() - startMs,
        });
      } catch (error) {
        verdicts.push({
          checker: checker.name,
          ok: false,
          violations: [],
          stats: {},
          error: (error as Error).message,
          elapsedMs: performance.now() - startMs,
        });
      }
    }
    const ok = verdicts.every((v) => v.ok);
    writeFileSync(join(this.runDir, 'verdicts.json'), JSON.stringify(verdicts, null, 2) + '\n');
    const title = `Tenure chaos run ${this.options.scenario} seed ${this.options.seed}: ${ok ? 'PASS' : 'FAIL'}`;
    const facts: [string, string][] = [
      ['backend', this.backend.kind],
      ['seed', String(this.options.seed)],
      ['scenario', this.options.scenario],
      ['duration', `${(durationMs / 1000).toFixed(1)} s`],
      ['operations', String(record.ops.length)],
      ['faults injected', String(record.faults.filter((f) => f.action === 'inject').length)],
      [
        'replay',
        `npm run chaos -- ${this.options.scenario === 'mixed' ? '' : `--scenario ${this.options.scenario} `}--seed ${this.options.seed} --backend ${this.backend.kind}`,
      ],
    ];
    writeFileSync(
      join(this.runDir, 'summary.md'),
      renderSummary({ title, facts, notes: this.notes }, record, verdicts),
    );
    writeFileSync(join(this.runDir, 'timeline.html'), renderTimeline(title, record));
    if (ok && options.keepData !== true)
      rmSync(join(this.runDir, 'data'), { recursive: true, force: true });
    return { runDir: this.runDir, ok, verdicts, record };
  }

  /** Heals, stops the sampler, tears the backend down, removes exit handlers. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.sampler.stop();
    await this.backend.down();
    for (const remove of this.#cleanupHandlers) remove();
  }
}

/**
 * Makes the run folder and backend, starts the nodes and the sampler, and waits for the first
 * leader. Throws (after tearing down) when the cluster does not elect one in time.
 */
export async function openSession(options: SessionOptions): Promise<Session> {
  const runDir = resolve(options.outRoot, runFolderName(options.scenario, options.seed));
  mkdirSync(runDir, { recursive: true });
  const modules = await loadModules();
  const clock = createRunClock();
  const log = (line: string): void => options.log(line);
  const command =
    options.nodeCommand ??
    tenureServerCommand(options.repoRoot, {
      heartbeatMs: options.heartbeatMs ?? 100,
      electionTimeoutMs: options.electionTimeoutMs ?? 1000,
      ...(options.serverArgs !== undefined ? { extraArgs: options.serverArgs } : {}),
    });
  const backend: ChaosBackend =
    options.backend === 'netns'
      ? await NetnsCluster.create({
          runDir,
          command,
          wallClockFaults: options.wallClockFaults ?? false,
          log,
        })
      : await ComposeCluster.create({ runDir, repoRoot: options.repoRoot, log });
  const session = new Session(options, runDir, backend, modules, clock);
  session.installExitHandlers();
  try {
    await backend.up();
    session.sampler.start();
    const leader: NodeId = await session.sampler.waitForLeader(
      options.firstLeaderWaitMs ?? 30_000,
      undefined,
      true,
    );
    log(
      `[${(clock.now() / 1000).toFixed(1).padStart(6)}s] cluster up, leader ${leader} (run folder ${runDir})`,
    );
  } catch (error) {
    await session.close();
    throw error;
  }
  return session;
}

/** File URL helper for the CLI's "see timeline" line. */
export function fileUrl(path: string): string {
  return pathToFileURL(path).href;
}

/** Kinds used when `--faults` is absent. */
export const defaultFaultKinds: readonly FaultKind[] = [
  'crash',
  'pause',
  'partition',
  'netem',
  'clock',
  'membership',
];

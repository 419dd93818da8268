/**
 * Join bench (`npm run bench:join`): how long a new node takes to join a cluster whose state holds
 * N live leases (default 1,000,000; `--leases N`), and what sending it the snapshot costs the
 * leader (docs/operations.md "Membership changes"); and, at N, the memory per live lease, a backup
 * from the leader and a follower's restart (steps 4-6).
 *
 * 1. Fills the state. `--fill restore` (the default, and the only way to a million leases in
 *    minutes): the bench applies N `lease.acquire` commands (TTL `--ttl-ms`, default the maximum
 *    of one hour) to Tenure's own state machine, writes the state as a backup file (the format
 *    `tenure snapshot save` writes), and starts a local three-node cluster of real processes with
 *    `--restore FILE` (docs/operations.md "Restoring into a new cluster"): every node checks and
 *    loads the file, the grants stay live with the time they had left, and the restored state is a
 *    Raft snapshot the leader's log starts after, so a new node can only catch up through
 *    InstallSnapshot. `--fill http`: `--fill-clients` kept-alive clients acquire the N leases on
 *    the leader of a new cluster (one replicated write each), then the bench waits for the leader's
 *    periodic snapshot (`--server-args "--snapshot-entries N"`).
 * 2. Starts `--writers` clients renewing one lease each against the leader, for
 *    `--baseline-seconds` before the join (the baseline) and through the join, the backup and the
 *    restart (steps 3, 5, 6).
 * 3. Starts a fourth node with `--join` and measures, from its start: the time to `/healthz` 200
 *    (process start), to the snapshot installed (its log), to `/readyz` 200, and until
 *    `POST /v1/cluster/members/n4/promote` (tried every 250 ms) answers 200 rather than 409
 *    `not_caught_up`; the snapshot size it installed. From /proc every 100 ms: the leader's CPU
 *    and RSS (median, peak) before the join (writers only), while sending (from n4 serving HTTP,
 *    just before it asks to join, to n4 logging the installed snapshot) and over the whole join;
 *    the joining node's peak RSS and CPU. The writers' latency and errors before and during the
 *    join. Checks the new node ends holding the N leases.
 * 4. Memory per lease: the RSS of n1..n3 holding the N leases at the end of the baseline (just
 *    before n4 starts; the leader's is `leaderRssBeforeJoinMiB` in the JSON), and n4's RSS read the
 *    moment its `/healthz` first answers 200 — an empty node: it asks to join only once it serves
 *    HTTP, and the leader sends the snapshot only once the join is committed. The table says how
 *    long after n4 logged serving HTTP, and before it installed the snapshot, the reading was
 *    taken, and whether the leader, asked just after it, did not list n4 as a member yet (then it
 *    had sent n4 nothing); when it did, also n4's RSS at its last /proc sample before it logged
 *    serving HTTP (surely before it asked to join). RSS per live lease = (leader's RSS − n4's
 *    empty RSS) / N, in bytes.
 * 5. Backup: once n4 is promoted, `GET /v1/cluster/snapshot` from the leader (an admin route; the
 *    bench's cluster runs without `--auth`, so no token), read to the end: ms from the request to
 *    the last byte, and its bytes (checked against its Content-Length). The writers' renewals
 *    meanwhile (the leader's writes wait for the encoding; docs/operations.md).
 * 6. Restart at N: then SIGTERMs the first of n1..n3 that is not the leader (ms until it exited,
 *    its exit code) and starts it again on its data (without `--restore`): ms from the start of
 *    its process to `/healthz` 200 and to `/readyz` 200, and its peak RSS over that time (from
 *    /proc every 100 ms). The writers keep renewing through it; their latency and errors (with up
 *    to five error messages) are reported.
 *
 * Prints the machine's load average at start and end, and writes the figures to
 * bench-results/join-bench-<time>.json. `--help` lists the options.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command, Option } from 'commander';
import {
  CoordStateMachine,
  encodeSnapshotFileHeader,
  STATE_SNAPSHOT_FORMAT,
} from '@tenure/coord-state';
import { latencyHistogram, percentiles, pollUntil } from '@tenure/testkit';
import { LocalCluster, REPO_ROOT, type ClusterOptions } from '../support/cluster.js';
import { UsageSampler, usage, usageBetween, type UsageSample } from '../support/proc-usage.js';

/** Bounds a broken cluster only: a million leases on a loaded 2-core machine take minutes. */
const UNTIL_MS = 45 * 60_000;
/** Cluster time (ms) the built state starts at; any positive value works. */
const FILL_START_MS = 1_000;
const MIB = 2 ** 20;
/** The nodes the cluster starts with (n4 joins them). */
const BOOTSTRAP_IDS = ['n1', 'n2', 'n3'] as const;

interface JoinBenchOptions {
  readonly leases: number;
  readonly fill: 'restore' | 'http';
  readonly fillClients: number;
  readonly ttlMs: number;
  readonly writers: number;
  readonly baselineSeconds: number;
  readonly electionTimeoutMs: number;
  readonly serverArgs: readonly string[];
  readonly nodeOptions: string;
  readonly keepFiles: boolean;
}

/** The bench's command line (commander): one option per setting, `--help`. */
function benchCommand(): Command {
  return new Command('join-bench')
    .description(
      'Time a fourth node joining (snapshot, /readyz, promote) a local three-node cluster holding N live leases; RSS per lease, a backup and a restart at N.',
    )
    .addOption(new Option('--leases <n>', 'live leases in the state').default('1000000'))
    .addOption(
      new Option('--fill <how>', 'how the leases get into the state')
        .choices(['restore', 'http'])
        .default('restore'),
    )
    .option('--fill-clients <n>', 'concurrent clients of --fill http', '64')
    .option('--ttl-ms <ms>', 'TTL of every lease (must outlive the bench; max 3600000)', '3600000')
    .option('--writers <n>', 'clients renewing a lease against the leader throughout', '4')
    .option('--baseline-seconds <s>', 'seconds the writers run before the join starts', '5')
    .option('--election-timeout-ms <ms>', 'election timeout of every node', '3000')
    .option('--server-args <args>', 'extra tenure-server flags (space separated)', '')
    .option(
      '--node-options <flags>',
      'NODE_OPTIONS of the server processes (e.g. --max-old-space-size=8192)',
      '',
    )
    .option('--keep-files', 'keep the data directories, logs and backup file (printed)')
    .addHelpText(
      'after',
      '\nPrints join and promote times, snapshot size, leader CPU and RSS, joiner RSS, RSS per live\n' +
        'lease, a backup from the leader (ms, bytes), a follower restart (ms to /healthz and /readyz,\n' +
        "peak RSS) and the writers' latency, and writes them to bench-results/join-bench-<time>.json.",
    );
}

interface JoinBenchFlags {
  leases: string;
  fill: 'restore' | 'http';
  fillClients: string;
  ttlMs: string;
  writers: string;
  baselineSeconds: string;
  electionTimeoutMs: string;
  serverArgs: string;
  nodeOptions: string;
  keepFiles?: boolean;
}

/** Parse argv; commander prints usage and exits on --help or a bad option (exit code 2). */
function parseOptions(argv: readonly string[]): JoinBenchOptions {
  const cmd = benchCommand();
  cmd.parse([...argv], { from: 'user' });
  const v = cmd.opts<JoinBenchFlags>();
  const int = (flag: string, text: string, min: number): number => {
    const n = Number(text);
    if (!Number.isSafeInteger(n) || n < min)
      cmd.error(`error: ${flag} must be an integer ≥ ${min}`, { exitCode: 2 });
    return n;
  };
  return {
    leases: int('--leases', v.leases, 1),
    fill: v.fill,
    fillClients: int('--fill-clients', v.fillClients, 1),
    ttlMs: int('--ttl-ms', v.ttlMs, 60_000),
    writers: int('--writers', v.writers, 0),
    baselineSeconds: int('--baseline-seconds', v.baselineSeconds, 0),
    electionTimeoutMs: int('--election-timeout-ms', v.electionTimeoutMs, 100),
    serverArgs: v.serverArgs.split(' ').filter((a) => a.length > 0),
    nodeOptions: v.nodeOptions,
    keepFiles: v.keepFiles === true,
  };
}

/**
 * Writes a backup file holding `leases` live leases (distinct names, 1,000 holders) granted by
 * Tenure's own state machine, as `GET /v1/cluster/snapshot` would write it. Returns its size.
 */
function writeLeaseBackup(file: string, leases: number, ttlMs: number): { payloadBytes: number } {
  const sm = new CoordStateMachine();
  for (let i = 0; i < leases; i++) {
    sm.apply(i + 1, FILL_START_MS + Math.floor(i / 1_000), {
      v: 1,
      command: {
        type: 'lease.acquire',
        name: `joinbench.${i}.lock`,
        holder: `holder-${i % 1_000}`,
        ttlMs,
        waitMs: 0,
        lockDelayMs: 0,
        maxHoldMs: null,
      },
      idempotency: null,
    });
  }
  if (sm.counts().leases !== leases)
    throw new Error(`built ${sm.counts().leases} live leases, not ${leases}`);
  const parts: Uint8Array[] = [];
  const hash = createHash('sha256');
  let payloadBytes = 0;
  for (let it = sm.snapshotSlices(), r = it.next(); r.done !== true; r = it.next()) {
    parts.push(r.value);
    hash.update(r.value);
    payloadBytes += r.value.byteLength;
  }
  const head = encodeSnapshotFileHeader({
    clusterId: 'join-bench-source',
    nodeId: 'join-bench',
    index: sm.lastAppliedIndex(),
    term: 1,
    clusterTimeMs: sm.lastAppliedTimeMs(),
    stateFormat: STATE_SNAPSHOT_FORMAT,
    payloadBytes,
    sha256: hash.digest('hex'),
    createdAt: new Date().toISOString(),
  });
  writeFileSync(file, Buffer.concat([head, ...parts]));
  return { payloadBytes };
}

/** Latency (ms) and errors of the writers' renewals in one phase. */
class PhaseStats {
  readonly #hist = latencyHistogram();
  ops = 0;
  errors = 0;
  readonly errorSamples: string[] = [];

  record(ms: number, error: string | null): void {
    this.#hist.recordValue(Math.min(60_000_000, Math.max(1, Math.round(ms * 1000))));
    if (error === null) this.ops++;
    else {
      this.errors++;
      if (this.errorSamples.length < 5) this.errorSamples.push(error);
    }
  }

  summary(): { ops: number; errors: number; p50Ms: number; p99Ms: number; maxMs: number } {
    const ms = (us: number): number => Math.round(us / 10) / 100;
    return {
      ops: this.ops,
      errors: this.errors,
      p50Ms: ms(this.#hist.getValueAtPercentile(50)),
      p99Ms: ms(this.#hist.getValueAtPercentile(99)),
      maxMs: ms(this.#hist.maxValue),
    };
  }
}

/**
 * `count` clients, each holding one lease on the leader and renewing it back to back until
 * `stop()`; each renewal is recorded in the phase current when it started.
 */
async function startWriters(
  c: LocalCluster,
  leaderId: string,
  count: number,
): Promise<{ phase: (p: PhaseStats) => void; stop: () => Promise<void> }> {
  let current = new PhaseStats();
  let running = true;
  const loops = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const path = `/v1/leases/joinbench-writer-${i}`;
      const holder = `writer-${i}`;
      const a = await c.request(leaderId, 'POST', `${path}/acquire`, { holder, ttlMs: 60_000 });
      if (a.status !== 200) throw new Error(`writer ${i}: acquire ${a.status}`);
      const fencingToken = (a.body as { fencingToken: number }).fencingToken;
      return async () => {
        while (running) {
          const phase = current;
          const t0 = performance.now();
          let error: string | null = null;
          try {
            const r = await c.request(
              leaderId,
              'POST',
              `${path}/renew`,
              { holder, fencingToken },
              {},
              30_000,
            );
            if (r.status !== 200) error = `${r.status} ${JSON.stringify(r.body)}`;
          } catch (err) {
            error = (err as Error).message;
          }
          phase.record(performance.now() - t0, error);
        }
      };
    }),
  );
  const done = Promise.all(loops.map((loop) => loop()));
  return {
    phase: (p) => (current = p),
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/** The `tenure_live_leases` gauge of one node (null when it does not answer). */
async function liveLeases(c: LocalCluster, id: string): Promise<number | null> {
  const r = await c.request<string>(id, 'GET', '/metrics', undefined, {}, 30_000);
  const m = /^tenure_live_leases (\d+)/m.exec(String(r.body));
  return m === null ? null : Number(m[1]);
}

const loadAverage = (): string =>
  readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const mib = (bytes: number | null | undefined): number | null =>
  bytes == null ? null : Math.round(bytes / MIB);
const secondsSince = (startMs: number): number => Math.round(performance.now() - startMs) / 1000;
const msSince = (startMs: number): number => Math.round(performance.now() - startMs);
/** Peak RSS (MiB) of some samples (null: none). */
const peakRssMiB = (samples: readonly UsageSample[]): number | null =>
  samples.length === 0 ? null : mib(Math.max(...samples.map((s) => s.rssBytes)));

/** Epoch ms of the first line of a node log whose message is `msg` (null: none). */
function logTimeMs(logFile: string, msg: string): number | null {
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes(`"msg":"${msg}`)) continue;
    const time = /"time":(\d+)/.exec(line);
    if (time !== null) return Number(time[1]);
  }
  return null;
}

/** CPU (ms and % of one core) and RSS (median, peak; MiB) of one process over [fromMs, toMs]. */
function usageWindow(samples: readonly UsageSample[], fromMs: number | null, toMs: number | null) {
  if (fromMs === null || toMs === null) return null;
  const w = usageBetween(samples, fromMs, toMs);
  const rss = percentiles(w.samples.map((s) => s.rssBytes));
  return {
    seconds: Math.round(w.spanMs) / 1000,
    samples: w.samples.length,
    cpuMs: Math.round(w.cpuMs),
    cpuPercentOfCore: w.spanMs === 0 ? null : Math.round((w.cpuMs / w.spanMs) * 100),
    rssMedianMiB: mib(rss.p50),
    rssPeakMiB: mib(rss.max),
  };
}

/** A started cluster holding the leases, its leader, and how the leases got there. */
interface Filled {
  readonly c: LocalCluster;
  readonly leaderId: string;
  readonly fill: Record<string, string | number>;
}

/** The cluster options every fill uses (`extra`: per-node flags). */
function clusterOptions(o: JoinBenchOptions, nodeArgs: ClusterOptions['nodeArgs']): ClusterOptions {
  return {
    logLevel: 'info',
    electionTimeoutMs: o.electionTimeoutMs,
    extraArgs: o.serverArgs,
    startTimeoutMs: UNTIL_MS,
    keepFiles: o.keepFiles,
    ...(nodeArgs === undefined ? {} : { nodeArgs }),
    ...(o.nodeOptions === '' ? {} : { env: { NODE_OPTIONS: o.nodeOptions } }),
  };
}

/** Waits until node `id` reports exactly `leases` live leases. */
async function holding(c: LocalCluster, id: string, leases: number): Promise<void> {
  await pollUntil(
    `${id} to hold ${leases} live leases`,
    async () => (await liveLeases(c, id)) === leases,
    { timeoutMs: UNTIL_MS, intervalMs: 500 },
  );
}

/**
 * `--fill restore`: a backup file of the leases (writeLeaseBackup) seeds n1..n3 through
 * `--restore`; the state is then a Raft snapshot the leader's log starts after.
 */
async function filledByRestore(o: JoinBenchOptions, dir: string): Promise<Filled> {
  const backup = join(dir, 'leases.tenure-snapshot');
  const buildStart = performance.now();
  const { payloadBytes } = writeLeaseBackup(backup, o.leases, o.ttlMs);
  const backupBuildSeconds = secondsSince(buildStart);
  console.log(`backup of ${o.leases} leases: ${mib(payloadBytes)} MiB in ${backupBuildSeconds} s`);
  const restoreStart = performance.now();
  const bootstrap = new Set<string>(BOOTSTRAP_IDS);
  // --restore seeds an empty data directory only: a node restarted later starts on its data.
  const c = await LocalCluster.start(
    clusterOptions(o, (n) =>
      bootstrap.has(n.id) && !existsSync(n.dataDir) ? ['--restore', backup] : [],
    ),
  );
  const leaderId = await c.waitForLeader(UNTIL_MS);
  await holding(c, leaderId, o.leases);
  const restoreSeconds = secondsSince(restoreStart);
  console.log(`3 nodes restored, leader ${leaderId} holds the leases (${restoreSeconds} s)`);
  return {
    c,
    leaderId,
    fill: {
      how: 'backup built by the bench, restored with --restore into n1..n3',
      backupBytes: payloadBytes,
      backupBuildSeconds,
      restoreSeconds,
    },
  };
}

/**
 * `--fill http`: `--fill-clients` concurrent kept-alive clients acquire the leases on the leader,
 * one `POST /v1/leases/{name}/acquire` each; then waits for the leader to take a periodic snapshot
 * (every `--snapshot-entries`, default 10,000 entries), so its log no longer starts at index 1.
 */
async function filledOverHttp(o: JoinBenchOptions): Promise<Filled> {
  const c = await LocalCluster.start(clusterOptions(o, undefined));
  const leaderId = await c.waitForLeader(UNTIL_MS);
  const fillStart = performance.now();
  let next = 0;
  let retries = 0;
  await Promise.all(
    Array.from({ length: o.fillClients }, async () => {
      for (let i = next++; i < o.leases; i = next++) {
        const path = `/v1/leases/joinbench.${i}.lock/acquire`;
        const body = { holder: `holder-${i % 1_000}`, ttlMs: o.ttlMs };
        for (;;) {
          const r = await c.request(leaderId, 'POST', path, body).catch(() => null);
          if (r?.status === 200) break;
          if (++retries > 1_000)
            throw new Error(`acquire ${i}: ${r?.status} ${JSON.stringify(r?.body)}`);
        }
        if (i % 50_000 === 0) console.log(`${i} leases acquired (${secondsSince(fillStart)} s)`);
      }
    }),
  );
  const fillSeconds = secondsSince(fillStart);
  await holding(c, leaderId, o.leases);
  await pollUntil(
    'the leader to take a snapshot',
    () => readFileSync(c.node(leaderId).logFile, 'utf8').includes('"msg":"took snapshot'),
    { timeoutMs: UNTIL_MS, intervalMs: 500 },
  );
  console.log(`${o.leases} leases acquired over HTTP in ${fillSeconds} s (${retries} retries)`);
  return {
    c,
    leaderId,
    fill: {
      how: `${o.fillClients} kept-alive HTTP clients acquiring on the leader`,
      fillSeconds,
      acquiresPerSecond: Math.round(o.leases / fillSeconds),
      retries,
    },
  };
}

/** What the writers' renewals saw in one phase: a PhaseStats summary (with its first errors). */
type WriterSummary = ReturnType<PhaseStats['summary']> & { errorSamples?: readonly string[] };

/** A phase's summary with its first error messages. */
const withErrors = (p: PhaseStats): WriterSummary => ({
  ...p.summary(),
  errorSamples: p.errorSamples,
});

/** RSS (bytes) of each node now, by id (null: not running). */
function rssNow(c: LocalCluster, ids: readonly string[]): Record<string, number | null> {
  return Object.fromEntries(
    ids.map((id) => {
      const pid = c.pid(id);
      return [id, pid === null ? null : usage(pid).rssBytes];
    }),
  );
}

/** What joinFourth measured; times in seconds from n4's start, epoch ms otherwise. */
interface JoinTimes {
  readonly n4Pid: number;
  readonly joinStartMs: number;
  readonly joinEndMs: number;
  readonly healthySeconds: number;
  readonly readySeconds: number;
  readonly promotedSeconds: number;
  readonly promoteAnswers: Record<string, number>;
  /** n4's usage when its /healthz first answered 200 (an empty node). */
  readonly emptyUsage: UsageSample;
  /** The leader did not list n4 as a member just after that reading (so had sent it nothing). */
  readonly emptyBeforeAdded: boolean;
}

/**
 * Starts n4 with `--join` the leader (`sampler` samples it), reads its usage once /healthz answers
 * 200, then waits for its /readyz 200 and for the promote to answer 200.
 */
async function joinFourth(
  c: LocalCluster,
  leaderId: string,
  sampler: UsageSampler,
): Promise<JoinTimes> {
  await c.addNode('n4');
  console.log(`starting n4 with --join ${c.node(leaderId).url}`);
  const joinStartMs = Date.now();
  const joinStart = performance.now();
  const started = c.restart('n4', UNTIL_MS, { join: c.node(leaderId).url });
  const n4Pid = c.pid('n4')!;
  sampler.add(n4Pid);
  await started;
  const emptyUsage = { atMs: Date.now(), ...usage(n4Pid) };
  const healthySeconds = secondsSince(joinStart);
  // Asked after the reading: not yet a member then, so the leader had sent n4 nothing.
  const view = await c.clusterView(leaderId, 5_000);
  const emptyBeforeAdded = view !== null && !view.members.some((m) => m.id === 'n4');
  const promoteAnswers = new Map<string, number>();
  const [readySeconds, promotedSeconds] = await Promise.all([
    pollUntil(
      'n4 /readyz 200',
      async () =>
        (await c.request('n4', 'GET', '/readyz', undefined, {}, 5_000)).status === 200 &&
        secondsSince(joinStart),
      { timeoutMs: UNTIL_MS, intervalMs: 100 },
    ),
    pollUntil(
      'promote of n4 answered 200',
      async () => {
        const r = await c.request(leaderId, 'POST', '/v1/cluster/members/n4/promote');
        const body = r.body as { error?: { code?: string } };
        const answer = r.status === 200 ? '200' : `${r.status} ${body.error?.code ?? ''}`;
        promoteAnswers.set(answer, (promoteAnswers.get(answer) ?? 0) + 1);
        return r.status === 200 && secondsSince(joinStart);
      },
      { timeoutMs: UNTIL_MS, intervalMs: 250 },
    ),
  ]);
  return {
    n4Pid,
    joinStartMs,
    joinEndMs: Date.now(),
    healthySeconds,
    readySeconds,
    promotedSeconds,
    promoteAnswers: Object.fromEntries(promoteAnswers),
    emptyUsage,
    emptyBeforeAdded,
  };
}

/** The join's figures: from n4's log, the /proc samples (by pid) and n4's live leases. */
async function joinFigures(
  c: LocalCluster,
  leases: number,
  j: JoinTimes,
  samples: Map<number, readonly UsageSample[]>,
  leader: { readonly pid: number; readonly baselineStartMs: number },
) {
  const logFile = c.node('n4').logFile;
  const installed = /"sizeBytes":(\d+)[^\n]*installed snapshot/.exec(readFileSync(logFile, 'utf8'));
  const n4ServingMs = logTimeMs(logFile, 'node started');
  const installedMs = logTimeMs(logFile, 'installed snapshot');
  const joinerLeases = await pollUntil(
    'n4 to hold the leases',
    async () => {
      const n = await liveLeases(c, 'n4');
      return n !== null && n >= leases ? n : undefined;
    },
    { timeoutMs: UNTIL_MS, intervalMs: 500 },
  );
  const leaderSamples = samples.get(leader.pid) ?? [];
  const joiner = samples.get(j.n4Pid) ?? [];
  return {
    snapshotBytes: installed === null ? null : Number(installed[1]),
    joinedThroughSnapshot: installed !== null,
    healthySeconds: j.healthySeconds,
    snapshotInstalledSeconds:
      installedMs === null ? null : Math.round(installedMs - j.joinStartMs) / 1000,
    readySeconds: j.readySeconds,
    promotedSeconds: j.promotedSeconds,
    promoteAnswers: j.promoteAnswers,
    leaderBeforeJoin: usageWindow(leaderSamples, leader.baselineStartMs, j.joinStartMs),
    leaderWhileSending: usageWindow(leaderSamples, n4ServingMs, installedMs),
    leaderWholeJoin: usageWindow(leaderSamples, j.joinStartMs, j.joinEndMs),
    joinerRssPeakMiB: peakRssMiB(joiner),
    joinerCpuMs: Math.round((joiner.at(-1)?.cpuMs ?? 0) - (joiner[0]?.cpuMs ?? 0)),
    joinerLeases,
    joinerEmptyRssBeforeAdded: j.emptyBeforeAdded,
    joinerRssBeforeServingMiB: mib(joiner.findLast((s) => s.atMs <= (n4ServingMs ?? 0))?.rssBytes),
    joinerEmptyRssAfterServingMs: n4ServingMs === null ? null : j.emptyUsage.atMs - n4ServingMs,
    joinerEmptyRssBeforeInstallMs: installedMs === null ? null : installedMs - j.emptyUsage.atMs,
  };
}

/** n1..n3's RSS holding the leases, n4's empty RSS, and (leader − empty) / N in bytes. */
function memoryFigures(
  leases: number,
  leaderId: string,
  rssBytes: Record<string, number | null>,
  emptyRssBytes: number,
) {
  const leaderRss = rssBytes[leaderId] ?? null;
  return {
    rssHoldingLeasesMiB: Object.fromEntries(
      Object.entries(rssBytes).map(([id, bytes]) => [id, mib(bytes)]),
    ),
    leaderRssBeforeJoinMiB: mib(leaderRss),
    joinerEmptyRssMiB: mib(emptyRssBytes),
    rssPerLeaseBytes: leaderRss === null ? null : Math.round((leaderRss - emptyRssBytes) / leases),
  };
}

/**
 * `GET /v1/cluster/snapshot` of node `id` read to its last byte (the bench's cluster runs without
 * --auth: no token): ms from the request to the last byte, and the bytes (= its Content-Length).
 */
async function timeBackup(c: LocalCluster, id: string): Promise<{ ms: number; bytes: number }> {
  console.log(`backup from ${id}`);
  const start = performance.now();
  const r = await fetch(`${c.node(id).url}/v1/cluster/snapshot`, {
    signal: AbortSignal.timeout(UNTIL_MS),
  });
  if (r.status !== 200 || r.body === null)
    throw new Error(`backup from ${id}: ${r.status} ${await r.text()}`);
  let bytes = 0;
  for await (const chunk of r.body) bytes += chunk.byteLength;
  const ms = msSince(start);
  const length = Number(r.headers.get('content-length'));
  if (bytes !== length)
    throw new Error(`backup from ${id}: ${bytes} bytes, Content-Length ${length}`);
  return { ms, bytes };
}

/**
 * SIGTERMs node `id` and starts it again on its data: ms until it exited (and its exit code), ms
 * from the start of its process to /healthz 200 and to /readyz 200, its peak RSS over that time.
 */
async function restartNode(c: LocalCluster, id: string) {
  console.log(`restarting ${id}`);
  const stopStart = performance.now();
  const exitCode = await c.stop(id);
  const stopMs = msSince(stopStart);
  const start = performance.now();
  const started = c.restart(id, UNTIL_MS);
  const pid = c.pid(id)!;
  const sampler = new UsageSampler([pid], 100);
  await started;
  const healthyMs = msSince(start);
  await pollUntil(
    `${id} /readyz 200`,
    async () => (await c.request(id, 'GET', '/readyz', undefined, {}, 5_000)).status === 200,
    { timeoutMs: UNTIL_MS, intervalMs: 100 },
  );
  const readyMs = msSince(start);
  const samples = sampler.stop().get(pid) ?? [];
  return { node: id, stopMs, exitCode, healthyMs, readyMs, rssPeakMiB: peakRssMiB(samples) };
}

/**
 * With the writers renewing throughout: the baseline, n1..n3's RSS, n4's join, a backup from the
 * leader, then the restart of a follower. Every figure of the result but the run's context.
 */
async function measure(c: LocalCluster, leaderId: string, o: JoinBenchOptions) {
  const leaderPid = c.pid(leaderId)!;
  const writers = await startWriters(c, leaderId, o.writers);
  const baseline = new PhaseStats();
  const duringJoin = new PhaseStats();
  const duringBackup = new PhaseStats();
  const duringRestart = new PhaseStats();
  writers.phase(baseline);
  const sampler = new UsageSampler([leaderPid], 100);
  const baselineStartMs = Date.now();
  await sleep(o.baselineSeconds * 1000);
  const rssHoldingLeases = rssNow(c, BOOTSTRAP_IDS);
  writers.phase(duringJoin);
  const join = await joinFourth(c, leaderId, sampler);
  const samples = sampler.stop();
  writers.phase(duringBackup);
  const backup = await timeBackup(c, leaderId);
  writers.phase(duringRestart);
  const follower = BOOTSTRAP_IDS.find((id) => id !== leaderId)!;
  const restart = await restartNode(c, follower);
  writers.phase(new PhaseStats());
  await writers.stop();
  return {
    ...(await joinFigures(c, o.leases, join, samples, { pid: leaderPid, baselineStartMs })),
    ...memoryFigures(o.leases, leaderId, rssHoldingLeases, join.emptyUsage.rssBytes),
    backupFromLeaderMs: backup.ms,
    backupFromLeaderBytes: backup.bytes,
    restart,
    writers: o.writers,
    writesBeforeJoin: baseline.summary(),
    writesDuringJoin: withErrors(duringJoin),
    writesDuringBackup: withErrors(duringBackup),
    writesDuringRestart: withErrors(duringRestart),
  };
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const loadAtStart = loadAverage();
  console.log(
    `join bench: ${o.leases} leases, ${cpus().length} CPUs, load average at start ${loadAtStart}`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'tenure-join-bench-'));
  const { c, leaderId, fill } =
    o.fill === 'restore' ? await filledByRestore(o, dir) : await filledOverHttp(o);
  process.on('SIGINT', () => void c.teardown().then(() => process.exit(130)));
  try {
    const result = {
      leases: o.leases,
      fill,
      leader: leaderId,
      ...(await measure(c, leaderId, o)),
      cpus: cpus().length,
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loadAverage(),
      serverArgs: o.serverArgs,
      nodeOptions: o.nodeOptions,
    };
    printResult(result);
    const outDir = join(REPO_ROOT, 'bench-results');
    mkdirSync(outDir, { recursive: true });
    const file = join(outDir, `join-bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2));
    console.log(`\nwritten ${file}`);
    if (o.keepFiles) console.log(`cluster files in ${c.baseDir}, backup in ${dir}`);
  } finally {
    await c.teardown();
    if (!o.keepFiles) rmSync(dir, { recursive: true, force: true });
  }
}

/** What printResult prints. */
type Result = Awaited<ReturnType<typeof measure>> & {
  readonly leases: number;
  readonly leader: string;
  readonly loadAverageAtStart: string;
  readonly loadAverageAtEnd: string;
};

/** One row of the writers' renewals in a phase. */
const writerRow = (s: WriterSummary): string =>
  `${s.ops} ok, ${s.errors} errors, p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, max ${s.maxMs} ms` +
  (s.errorSamples === undefined || s.errorSamples.length === 0
    ? ''
    : `; first errors: ${s.errorSamples.join(' | ')}`);

/** The rows of the join: times, snapshot, leader and joiner usage, the writers. */
function joinRows(r: Result): [string, string][] {
  const cpu = (x: ReturnType<typeof usageWindow>): string =>
    x === null
      ? 'n/a'
      : `${x.cpuMs} ms CPU in ${x.seconds} s (${x.cpuPercentOfCore} % of a core), RSS median ${x.rssMedianMiB} / peak ${x.rssPeakMiB} MiB`;
  return [
    ['live leases', String(r.leases)],
    ['snapshot installed by n4', `${mib(r.snapshotBytes)} MiB (${r.snapshotBytes} bytes)`],
    ['n4 start → /healthz 200', `${r.healthySeconds} s`],
    ['n4 start → snapshot installed', `${r.snapshotInstalledSeconds} s`],
    ['n4 start → /readyz 200', `${r.readySeconds} s`],
    ['n4 start → promote 200', `${r.promotedSeconds} s`],
    ['promote answers', JSON.stringify(r.promoteAnswers)],
    ['leader before the join', cpu(r.leaderBeforeJoin)],
    ['leader while sending', cpu(r.leaderWhileSending)],
    ['leader, start → promoted', cpu(r.leaderWholeJoin)],
    ['n4 RSS peak, CPU start → promoted', `${r.joinerRssPeakMiB} MiB, ${r.joinerCpuMs} ms`],
    [`renewals before the join (${r.writers} writers)`, writerRow(r.writesBeforeJoin)],
    ['renewals during the join', writerRow(r.writesDuringJoin)],
  ];
}

/** Whether n4's "empty" reading could already include part of the snapshot, and the check then. */
function emptyReadingNote(r: Result): string {
  if (r.joinerEmptyRssBeforeAdded) return 'not yet a member then';
  return `already a member then (the snapshot may have begun; ${r.joinerRssBeforeServingMiB} MiB before it served HTTP)`;
}

/** The rows of memory, backup and restart at N. */
function scaleRows(r: Result): [string, string][] {
  const rss = Object.entries(r.rssHoldingLeasesMiB).map(([id, m]) => `${id} ${m}`);
  const rs = r.restart;
  return [
    ['RSS holding the leases, before the join', `${rss.join(', ')} MiB (leader ${r.leader})`],
    [
      'n4 RSS at /healthz 200 (empty node)',
      `${r.joinerEmptyRssMiB} MiB, read ${r.joinerEmptyRssAfterServingMs} ms after n4 served HTTP, ${r.joinerEmptyRssBeforeInstallMs} ms before it installed the snapshot; ${emptyReadingNote(r)}`,
    ],
    ['RSS per live lease, (leader − empty) / N', `${r.rssPerLeaseBytes} bytes`],
    [
      'backup from the leader',
      `${mib(r.backupFromLeaderBytes)} MiB (${r.backupFromLeaderBytes} bytes), ${r.backupFromLeaderMs} ms to the last byte`,
    ],
    ['renewals during the backup', writerRow(r.writesDuringBackup)],
    [`${rs.node} SIGTERM → exited`, `${rs.stopMs} ms (exit code ${rs.exitCode})`],
    [`${rs.node} restart → /healthz 200`, `${rs.healthyMs} ms`],
    [`${rs.node} restart → /readyz 200`, `${rs.readyMs} ms`],
    [`${rs.node} RSS peak, restart → /readyz 200`, `${rs.rssPeakMiB} MiB`],
    ['renewals during the restart', writerRow(r.writesDuringRestart)],
  ];
}

/** The figures as one table: one row per measure. */
function printResult(r: Result): void {
  const rows: [string, string][] = [
    ...joinRows(r),
    ...scaleRows(r),
    ['load average start → end', `${r.loadAverageAtStart} → ${r.loadAverageAtEnd}`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log('');
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
}

void main();

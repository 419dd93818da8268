/**
 * CONTRACT of the chaos harness (read by the workload and checker authors; owned by the harness).
 *
 * Three parties meet here:
 * - the harness (topology/, faults/, runner/, cli.ts) makes the cluster, injects faults and samples
 *   `/v1/cluster`; it hands the workload a `ClusterHandle` and a `HistorySink`;
 * - the workload (workload/**) drives client operations and records every one as an invoke event
 *   and a complete event (Jepsen-style history);
 * - the checkers (check/**) judge a finished `RunRecord` and return a `CheckResult`.
 *
 * Time: every timestamp in a run is `RunMs` — milliseconds on the harness process's monotonic
 * clock (`performance.now()`), counted from the run's start. Faults, leader samples and history use
 * the same clock, so a checker may order events from different sources (docs/concepts.md: only monotonic
 * durations are compared; never wall clocks across machines).
 *
 * Module contract (the runner loads these with a dynamic import, so either may be missing):
 * - `tools/chaos/src/workload/index.ts` exports `createWorkload: WorkloadFactory` and
 *   `createHistory: HistoryFactory`;
 * - `tools/chaos/src/check/index.ts` exports `createCheckers: CheckerFactory`.
 * When a module is missing the runner uses its own fallback (a plain in-memory history, no checkers)
 * and says so in summary.md.
 */

/** Milliseconds since the run's start on the harness's monotonic clock (`performance.now()`). */
export type RunMs = number;

/** A node id as in docs/api.md (`n1`, `n2`, `n3`). */
export type NodeId = string;

/** A JSON value as written to history.jsonl. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON object (operation arguments, results). */
export type JsonObject = { [key: string]: Json };

/** The run's clock: one instance per run, shared by harness, workload and history. */
export interface RunClock {
  /** Milliseconds since the run's start (monotonic, non-decreasing). */
  now(): RunMs;
}

/** A seeded pseudo-random source (every run replays from its seed; TigerBeetle-style). */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [minInclusive, maxInclusive]. Throws RangeError when max < min. */
  int(minInclusive: number, maxInclusive: number): number;
  /** One element of a non-empty array. Throws RangeError when empty. */
  pick<T>(items: readonly T[]): T;
  /** A new independent stream derived from this one and `label` (for per-process streams). */
  fork(label: string): Random;
}

// ---------------------------------------------------------------------------------------------
// Cluster

/** How a client reaches one node. */
export interface NodeEndpoint {
  readonly id: NodeId;
  /** Base URL for the HTTP API, e.g. `http://10.77.3.11:7001` (no trailing slash). */
  readonly httpUrl: string;
  /** `host:port` of the HTTP listener (as in docs/api.md `members[].httpAddress`). */
  readonly httpAddress: string;
  /** `host:port` of the Raft listener (peer traffic only). */
  readonly raftAddress: string;
}

/** What the harness believes a node process is doing (it made it so). */
export type NodeProcessState = 'running' | 'paused' | 'stopped';

/** One poll of `GET /v1/cluster` on one node (the sampler polls every node every 200 ms). */
export interface LeaderSample {
  readonly timeMs: RunMs;
  readonly node: NodeId;
  /** False when the node did not answer within the poll's deadline (paused, killed, cut off). */
  readonly reachable: boolean;
  /** `leader` field of the answer (null when it knows none, or unreachable). */
  readonly leader: NodeId | null;
  readonly term: number | null;
  readonly commitIndex: number | null;
  readonly appliedIndex: number | null;
  /**
   * Which process lifetime of the node answered: the backend's start count, or null when the
   * node was (re)started while the poll was in flight (either lifetime may have answered).
   */
  readonly incarnation: number | null;
  /**
   * Which data directory answered: the backend's wipe count (`ChaosBackend.dataGeneration`), null
   * when unknown (with `incarnation`). A wiped node that rejoined is a new Raft identity under the
   * old id (term and commit index start again from 0). Absent in runs recorded before membership
   * faults existed: read as 0.
   */
  readonly dataGeneration?: number | null;
}

/**
 * A client source address. With the netns backend clients live in the root namespace on the
 * run's bridge, and each logical client process can send from its own address, so a fault can cut
 * one client off (BC-01, BC-11, BC-22). Binding is optional: a workload that ignores this sends
 * from the bridge's primary address (`clientAddresses[0]`).
 */
export interface ClientAddress {
  /** Label used in fault logs, e.g. `c1`. */
  readonly id: string;
  /** Local IPv4 address to bind (`http.request({ localAddress })`), or null for the default. */
  readonly localAddress: string | null;
}

/**
 * The workload's view of the cluster (read-only: faults are the harness's business).
 * Errors: `waitForLeader` rejects with an Error whose message says which nodes were polled when
 * `timeoutMs` passes, and with the signal's reason when aborted.
 */
export interface ClusterHandle {
  readonly nodeIds: readonly NodeId[];
  /** Client-reachable endpoints of all nodes, in `nodeIds` order. */
  endpoints(): readonly NodeEndpoint[];
  /** One node's endpoint. Throws when `id` is unknown. */
  endpoint(id: NodeId): NodeEndpoint;
  /** Client source addresses the workload may bind (at least one). */
  readonly clientAddresses: readonly ClientAddress[];
  /** The run clock (same as the history's). */
  readonly clock: RunClock;
  /** All leader samples so far, oldest first (a snapshot copy). */
  leaderSamples(): readonly LeaderSample[];
  /** The leader named by the latest sample round in which a majority agreed, else null. */
  currentLeader(): NodeId | null;
  /** Resolves with the leader once a majority of reachable nodes name the same one. */
  waitForLeader(timeoutMs: number, signal?: AbortSignal): Promise<NodeId>;
  /** What the harness last did to the node's process. */
  nodeState(id: NodeId): NodeProcessState;
}

// ---------------------------------------------------------------------------------------------
// History (Jepsen-style: one invoke and at most one complete per operation)

/** Operation kinds (docs/api.md routes; `fs.*` is the test-owned fenced store of docs/failure-scenarios.md). */
export type OpKind =
  | 'lease.acquire'
  | 'lease.renew'
  | 'lease.release'
  | 'lease.get'
  | 'lease.watch'
  /** Operator revoke (docs/api.md Operator revoke): ends the grant, fences its token. */
  | 'lease.revoke'
  /** Holder history read (docs/api.md Holder history): `{name, grants: [...]}`, newest first. */
  | 'lease.history'
  | 'election.campaign'
  | 'election.renew'
  | 'election.resign'
  | 'election.proclaim'
  | 'election.get'
  | 'election.observe'
  | 'kv.put'
  | 'kv.get'
  | 'kv.delete'
  | 'fence.check'
  | 'fs.read'
  | 'fs.write'
  // docs/primitives.md: kept apart from `lease.*` so the plain-lease models never see them.
  | 'sem.acquire'
  | 'sem.renew'
  | 'sem.release'
  | 'sem.get'
  | 'rw.acquire'
  | 'rw.renew'
  | 'rw.release'
  | 'rw.get'
  | 'session.create'
  | 'session.keepalive'
  | 'session.get'
  | 'session.end'
  /** A KV put fenced by a semaphore permit or a shared-lock grant (`args.fence`). */
  | 'prim.write'
  /** Streaming watch: an iterator opened, one change seen, the iterator ended. */
  | 'watch.open'
  | 'watch.event'
  | 'watch.end';

/**
 * How an operation ended.
 * - `ok`: 2xx — it took effect (docs/concepts.md: committed); `value` is the response body.
 * - `fail`: a definite refusal — it did NOT take effect (4xx, 503 `no_leader`); `code` is the docs/api.md
 *   error code, `httpStatus` the status.
 * - `unknown`: may or may not have taken effect (504 `timeout`, connection reset, client deadline,
 *   the run stopped while in flight). Checkers must allow both.
 */
export type OpOutcome =
  | { readonly status: 'ok'; readonly httpStatus: number; readonly value: Json }
  | {
      readonly status: 'fail';
      readonly httpStatus: number;
      readonly code: string;
      readonly value?: Json;
    }
  | { readonly status: 'unknown'; readonly reason: string };

/** The request side of an operation. `opId` is unique in the run. */
export interface HistoryInvoke {
  readonly type: 'invoke';
  readonly opId: number;
  /** Logical client process (a lease holder / candidate identity lives in `args`). */
  readonly process: string;
  /** Node the request was sent to (null when the client library chose). */
  readonly node: NodeId | null;
  readonly kind: OpKind;
  readonly args: JsonObject;
  readonly timeMs: RunMs;
}

/** The response side of an operation. */
export interface HistoryComplete {
  readonly type: 'complete';
  readonly opId: number;
  readonly process: string;
  /** Node that answered (may differ from the invoke's after redirects); null when none did. */
  readonly node: NodeId | null;
  readonly kind: OpKind;
  readonly timeMs: RunMs;
  readonly outcome: OpOutcome;
}

/** One line of history.jsonl. */
export type HistoryEvent = HistoryInvoke | HistoryComplete;

/**
 * An operation with both sides paired (what most checkers want). `completeMs` is null (and
 * `outcome` is `unknown`) when no complete event was recorded before the run ended.
 */
export interface HistoryOp {
  readonly opId: number;
  readonly process: string;
  readonly node: NodeId | null;
  readonly kind: OpKind;
  readonly args: JsonObject;
  readonly invokeMs: RunMs;
  readonly completeMs: RunMs | null;
  readonly outcome: OpOutcome;
}

/**
 * Where the workload records operations. Implementations stamp `timeMs` from the run clock.
 * Contract: `invoke` returns a fresh opId; `complete` is called at most once per opId (a second
 * call throws); `events()` returns the events in recording order; `ops()` pairs them.
 */
export interface HistorySink {
  invoke(process: string, kind: OpKind, args: JsonObject, node: NodeId | null): number;
  complete(opId: number, outcome: OpOutcome, node: NodeId | null): void;
  events(): readonly HistoryEvent[];
  ops(): readonly HistoryOp[];
}

/** `createHistory` of workload/index.ts. */
export type HistoryFactory = (clock: RunClock) => HistorySink;

// ---------------------------------------------------------------------------------------------
// Workload

/** Options the runner passes to `createWorkload`. Extra fields are the workload's own. */
export interface WorkloadOptions {
  readonly seed: number;
  readonly random: Random;
  /** Logical client processes to run (default chosen by the workload). */
  readonly processCount?: number;
  /** Lease TTL for the workload's grants (docs/failure-scenarios.md default 3000). */
  readonly ttlMs?: number;
  /** Where the workload may write its own artefacts (the run folder). */
  readonly runDir: string;
  /** Progress lines (one line each, no trailing newline). */
  readonly log: (line: string) => void;
}

/**
 * A workload: `start` begins issuing operations (resolves once started, not when finished);
 * it stops issuing when `signal` aborts or `stop` is called. `stop` resolves when every in-flight
 * operation has completed or been recorded as `unknown`; it never rejects.
 */
export interface Workload {
  readonly name: string;
  start(cluster: ClusterHandle, history: HistorySink, signal: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}

/** `createWorkload` of workload/index.ts. */
export type WorkloadFactory = (options: WorkloadOptions) => Workload;

// ---------------------------------------------------------------------------------------------
// Faults

/** Fault families the runner can schedule (`--faults` names). */
export type FaultKind =
  | 'crash'
  | 'pause'
  | 'partition'
  | 'netem'
  | 'clock'
  | 'restart-all'
  | 'rolling-restart'
  | 'membership';

/** One line of faults.jsonl: a fault being injected or healed. */
export interface FaultEvent {
  readonly timeMs: RunMs;
  readonly kind: FaultKind;
  readonly action: 'inject' | 'heal';
  /** Nodes (or client ids) the fault acts on. */
  readonly targets: readonly string[];
  /** Human-readable detail, e.g. `SIGKILL leader n2`, `peer-only isolate n1`, `delay 50ms±20ms`. */
  readonly detail: string;
  /** Correlates an inject with its heal (same id). */
  readonly faultId: number;
}

// ---------------------------------------------------------------------------------------------
// Checkers

/** Cluster timing the checkers may rely on (docs/concepts.md and §3 defaults unless the run changed them). */
export interface RunTiming {
  readonly heartbeatMs: number;
  readonly electionTimeoutMinMs: number;
  readonly electionTimeoutMaxMs: number;
  readonly maxDriftRatio: number;
  /** docs/failure-scenarios.md Δmax = 2 × election timeout + 1 s (allowed lateness of an expiry). */
  readonly expiryLatenessMaxMs: number;
}

/** Everything a checker sees about a finished run (also written to the run folder). */
export interface RunRecord {
  readonly runDir: string;
  readonly seed: number;
  /** Scenario name (`BC-08`) or `mixed`. */
  readonly scenario: string;
  readonly nodeIds: readonly NodeId[];
  readonly durationMs: RunMs;
  readonly timing: RunTiming;
  readonly history: readonly HistoryEvent[];
  readonly ops: readonly HistoryOp[];
  readonly faults: readonly FaultEvent[];
  readonly leaderSamples: readonly LeaderSample[];
}

/** One broken property, with the operations that show it. */
export interface Violation {
  /** Short property name, e.g. `linearizability`, `fencing-monotonic`, `one-leader-per-term`. */
  readonly property: string;
  readonly message: string;
  readonly opIds?: readonly number[];
  readonly timeMs?: RunMs;
  readonly details?: Json;
}

/** A checker's verdict. `ok` is true iff `violations` is empty; `stats` are counts for summary.md. */
export interface CheckResult {
  readonly ok: boolean;
  readonly violations: readonly Violation[];
  readonly stats: Readonly<Record<string, number | string>>;
}

/** A checker: pure function of the run record (may be async for heavy searches). */
export interface Checker {
  readonly name: string;
  check(run: RunRecord): CheckResult | Promise<CheckResult>;
}

/** Options the runner passes to `createCheckers`. */
export interface CheckerOptions {
  readonly timing: RunTiming;
  /** Upper bound on a single checker's search (e.g. linearizability), in ms of CPU time. */
  readonly searchBudgetMs?: number;
}

/** `createCheckers` of check/index.ts. */
export type CheckerFactory = (options: CheckerOptions) => readonly Checker[];

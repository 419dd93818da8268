/**
 * Prometheus metrics (prom-client), one Registry per app (no global singleton). The names, their
 * meaning and the alerts built on them: docs/operations.md, Monitoring. Gauges read the Raft status
 * and the state counts at scrape time; counters and histograms are fed by the node: applied
 * change events (grants, ends, hold times), the Raft observer (persist/fsync and snapshot
 * timings), lease waits, HTTP requests, proposals and leader changes.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ApplyOutput, CoordState } from '@tenure/coord-state';
import type { RaftNodeApi, RaftObserver } from '@tenure/raft';
import { GrantClock } from './grant-clock.js';
import { leaderView } from './member-view.js';

/** The state counts the gauges read (CoordStateMachine; `primitiveCounts` when it has them). */
export type CountedState = Pick<CoordState, 'counts'> & {
  primitiveCounts?(): {
    sessions: number;
    semaphores: number;
    permits: number;
    semaphoreWaiters: number;
  };
};

export interface ServerMetrics {
  readonly registry: Registry;
  readonly proposalSeconds: Histogram<'type'>;
  readonly httpSeconds: Histogram<'method' | 'route' | 'status'>;
  readonly forwarded: Counter;
  /** HTTP connections closed at arrival, by reason (`per_address`, `node`). */
  readonly connectionsRefused: Counter<'reason'>;
  /** Time a queued acquire waited before it settled, by `kind` and `outcome`. */
  readonly waitSeconds: Histogram<'kind' | 'outcome'>;
  /** Timings RaftNode reports (pass as RaftNodeOptions.observer). */
  readonly raftObserver: RaftObserver;
  /** Feed one applied entry's output (after start-up replay) at its cluster time, ms. */
  observeApplied(out: ApplyOutput, clusterTimeMs: number): void;
  /** Feed every leader notification; counts only a new known leader (id or term differs). */
  noteLeader(leaderId: string | null, term: number): void;
}

const LATENCY_BUCKETS = [
  0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];
/** Hold and wait times: from a tenth of a second to an hour. */
const HOLD_BUCKETS = [0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 1800, 3600, 14400];
const WAIT_BUCKETS = [0.001, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60];

type Status = ReturnType<RaftNodeApi<ApplyOutput>['status']>;

/** Options of createMetrics. */
export interface MetricsOptions {
  /** The reachability rule's bound (member-view.ts); default 1000 ms (the default election timeout). */
  readonly electionTimeoutMs?: number;
}

/** Create the registry; gauges read `raft.status()` and the state counts at scrape time. */
export function createMetrics(
  raft: () => RaftNodeApi<ApplyOutput> | null,
  coord: () => CountedState | null,
  opts: MetricsOptions = {},
): ServerMetrics {
  const registry = new Registry();
  const status = () => raft()?.status() ?? null;
  stateGauges(registry, status, coord);
  peerGauges(registry, status, opts.electionTimeoutMs ?? 1000);
  const histogram = <L extends string>(
    name: string,
    help: string,
    labelNames: L[],
    buckets: number[],
  ) => new Histogram<L>({ name, help, labelNames, buckets, registers: [registry] });
  const counter = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });

  const grants = counter(
    'tenure_grants_total',
    'Grants made, by kind (lease, semaphore, election, session)',
    ['kind'],
  );
  const ends = counter(
    'tenure_grant_ends_total',
    'Grants ended, by kind and reason (released, expired, max_hold, revoked, session_ended, resigned)',
    ['kind', 'reason'],
  );
  const hold = histogram(
    'tenure_grant_hold_seconds',
    'Cluster time a grant was held when it ended',
    ['kind', 'reason'],
    HOLD_BUCKETS,
  );
  const clock = new GrantClock();
  const sink = {
    granted: (kind: string) => grants.inc({ kind }),
    ended: (kind: string, reason: string, heldMs: number | null) => {
      ends.inc({ kind, reason });
      if (heldMs !== null) hold.observe({ kind, reason }, heldMs / 1000);
    },
  };
  const leaderChanges = counter(
    'tenure_leader_changes_total',
    'Changes of the known Raft leader (a new leader or a new term of leadership)',
  );
  let lastLeader: { id: string; term: number } | null = null;
  return {
    registry,
    proposalSeconds: histogram(
      'tenure_proposal_seconds',
      'Propose-to-apply latency',
      ['type'],
      LATENCY_BUCKETS,
    ),
    httpSeconds: histogram(
      'tenure_http_request_seconds',
      'HTTP request latency by route and status',
      ['method', 'route', 'status'],
      LATENCY_BUCKETS,
    ),
    forwarded: counter('tenure_forwarded_requests_total', 'Requests forwarded to the leader'),
    connectionsRefused: counter(
      'tenure_http_connections_refused_total',
      'HTTP connections closed at arrival: over the per-address or the node bound',
      ['reason'],
    ),
    waitSeconds: histogram(
      'tenure_wait_seconds',
      'Time a queued acquire waited before it settled, by kind and outcome',
      ['kind', 'outcome'],
      WAIT_BUCKETS,
    ),
    raftObserver: raftObserver(registry),
    observeApplied: (out, clusterTimeMs) => {
      if (out.events !== undefined && out.events.length > 0)
        clock.observe(out.events, clusterTimeMs, sink);
    },
    noteLeader: (leaderId, term) => {
      if (leaderId === null) return;
      if (lastLeader !== null && lastLeader.id === leaderId && lastLeader.term === term) return;
      lastLeader = { id: leaderId, term };
      leaderChanges.inc();
    },
  };
}

/** Scrape-time gauges of the Raft status and the state counts. */
function stateGauges(
  registry: Registry,
  status: () => Status | null,
  coord: () => CountedState | null,
): void {
  const gauge = (name: string, help: string, read: () => number | null | undefined): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const v = read();
        if (v !== null && v !== undefined) this.set(v);
      },
    });
  };
  const s = status;
  const counts = () => coord()?.counts() ?? null;
  const primitive = () => coord()?.primitiveCounts?.() ?? null;
  gauge('tenure_raft_term', 'Current Raft term', () => s()?.term);
  gauge('tenure_raft_commit_index', 'Raft commit index', () => s()?.commitIndex);
  gauge('tenure_raft_applied_index', 'Raft applied index', () => s()?.appliedIndex);
  gauge(
    'tenure_raft_snapshot_index',
    'Last log index covered by the newest snapshot in this node (taken, installed or recovered at start; 0 without one)',
    () => s()?.snapshotIndex,
  );
  gauge(
    'tenure_raft_snapshot_bytes',
    'Size of the newest snapshot in this node (0 without one)',
    () => s()?.snapshotBytes,
  );
  gauge(
    'tenure_raft_last_log_index',
    'Index of the last entry in the Raft log',
    () => s()?.lastLogIndex,
  );
  gauge('tenure_raft_is_leader', '1 when this node is the leader', () =>
    s() === null ? null : s()!.role === 'leader' ? 1 : 0,
  );
  gauge('tenure_raft_has_leader', '1 when this node knows a leader', () =>
    s() === null ? null : s()!.leaderId === null ? 0 : 1,
  );
  gauge('tenure_live_leases', 'Live lease grants', () => counts()?.leases);
  gauge('tenure_lease_waiters', 'Queued lease waiters', () => counts()?.waiters);
  gauge('tenure_election_candidates', 'Live election candidates', () => counts()?.candidates);
  gauge('tenure_elections', 'Election groups', () => counts()?.elections);
  gauge('tenure_kv_keys', 'KV keys', () => counts()?.keys);
  gauge('tenure_live_sessions', 'Live sessions', () => primitive()?.sessions);
  gauge('tenure_live_permits', 'Live semaphore permits', () => primitive()?.permits);
  gauge(
    'tenure_semaphore_waiters',
    'Queued semaphore waiters',
    () => primitive()?.semaphoreWaiters,
  );
}

/** Leader-only per-peer gauges: replication lag (entries), last contact, reachability. */
function peerGauges(
  registry: Registry,
  status: () => Status | null,
  electionTimeoutMs: number,
): void {
  const perPeer = (
    name: string,
    help: string,
    read: (s: Status, m: Status['members'][number]) => number | null,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['peer'],
      registers: [registry],
      collect() {
        this.reset(); // a follower (or a removed peer) reports nothing
        const s = status();
        if (s === null || s.role !== 'leader') return;
        for (const m of s.members) {
          if (m.id === s.id) continue;
          const v = read(s, m);
          if (v !== null) this.set({ peer: m.id }, v);
        }
      },
    });
  perPeer(
    'tenure_raft_peer_lag_entries',
    'Leader only: entries a peer is behind the leader log',
    (s, m) => leaderView(s, m.id, electionTimeoutMs).lagEntries ?? null,
  );
  perPeer(
    'tenure_raft_peer_reachable',
    'Leader only: 1 when the leader heard from the peer within an election timeout',
    (s, m) => (leaderView(s, m.id, electionTimeoutMs).reachable === true ? 1 : 0),
  );
  perPeer(
    'tenure_raft_peer_last_contact_seconds',
    'Leader only: time since the peer last answered',
    (_s, m) => (m.lastContactMs === undefined ? null : m.lastContactMs / 1000),
  );
}

/** Histograms and counters of the Raft runtime's persist and snapshot timings. */
function raftObserver(registry: Registry): RaftObserver {
  const persist = new Histogram({
    name: 'tenure_raft_persist_seconds',
    help: 'Duration of one durable (fsynced) write of the Raft log and hard state',
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const persistedEntries = new Counter({
    name: 'tenure_raft_persisted_entries_total',
    help: 'Log entries written durably',
    registers: [registry],
  });
  const snapshots = new Counter({
    name: 'tenure_raft_snapshots_total',
    help: 'Snapshots taken locally or installed from the leader',
    labelNames: ['origin'],
    registers: [registry],
  });
  const snapshotSeconds = new Histogram({
    name: 'tenure_raft_snapshot_seconds',
    help: 'Duration of taking (and saving) or installing a snapshot',
    labelNames: ['origin'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  // Every series exists from the start (0 snapshots, 0 seconds observed), so a dashboard shows a
  // value before the first snapshot instead of no data.
  for (const origin of ['taken', 'installed'] as const) {
    snapshots.inc({ origin }, 0);
    snapshotSeconds.zero({ origin });
  }
  const snapshot = (origin: 'taken' | 'installed') => (info: { durationMs: number }) => {
    snapshots.inc({ origin });
    snapshotSeconds.observe({ origin }, info.durationMs / 1000);
  };
  return {
    persisted: (durationMs, entries) => {
      persist.observe(durationMs / 1000);
      persistedEntries.inc(entries);
    },
    snapshotTaken: snapshot('taken'),
    snapshotInstalled: snapshot('installed'),
  };
}

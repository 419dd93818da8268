/**
 * Prometheus metrics (prom-client), one Registry per app (no global singleton): Raft term,
 * commit/applied index, leader changes, proposal latency, live leases/candidates/waiters and an
 * HTTP request histogram by route and status.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ApplyOutput, CoordState } from '@tenure/coord-state';
import type { RaftNodeApi } from '@tenure/raft';

export interface ServerMetrics {
  readonly registry: Registry;
  readonly proposalSeconds: Histogram<'type'>;
  readonly httpSeconds: Histogram<'method' | 'route' | 'status'>;
  readonly forwarded: Counter;
  readonly leaderChanges: Counter;
}

const LATENCY_BUCKETS = [
  0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

/** Create the registry; gauges read `raft.status()` and `coord.counts()` at scrape time. */
export function createMetrics(
  raft: () => RaftNodeApi<ApplyOutput> | null,
  coord: () => CoordState | null,
): ServerMetrics {
  const registry = new Registry();
  const status = () => raft()?.status() ?? null;
  const gauge = (name: string, help: string, read: () => number | null): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const v = read();
        if (v !== null) this.set(v);
      },
    });
  };
  gauge('tenure_raft_term', 'Current Raft term', () => status()?.term ?? null);
  gauge('tenure_raft_commit_index', 'Raft commit index', () => status()?.commitIndex ?? null);
  gauge('tenure_raft_applied_index', 'Raft applied index', () => status()?.appliedIndex ?? null);
  gauge('tenure_raft_is_leader', '1 when this node is the leader', () =>
    status() === null ? null : status()!.role === 'leader' ? 1 : 0,
  );
  gauge('tenure_live_leases', 'Live leases', () => coord()?.counts().leases ?? null);
  gauge('tenure_lease_waiters', 'Queued lease waiters', () => coord()?.counts().waiters ?? null);
  gauge(
    'tenure_election_candidates',
    'Live election candidates',
    () => coord()?.counts().candidates ?? null,
  );
  gauge('tenure_elections', 'Election groups', () => coord()?.counts().elections ?? null);
  gauge('tenure_kv_keys', 'KV keys', () => coord()?.counts().keys ?? null);
  return {
    registry,
    proposalSeconds: new Histogram({
      name: 'tenure_proposal_seconds',
      help: 'Propose-to-apply latency',
      labelNames: ['type'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    httpSeconds: new Histogram({
      name: 'tenure_http_request_seconds',
      help: 'HTTP request latency by route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    forwarded: new Counter({
      name: 'tenure_forwarded_requests_total',
      help: 'Requests forwarded to the leader',
      registers: [registry],
    }),
    leaderChanges: new Counter({
      name: 'tenure_leader_changes_total',
      help: 'Observed changes of the known leader',
      registers: [registry],
    }),
  };
}

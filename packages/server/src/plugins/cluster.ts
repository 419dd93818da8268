/**
 * Cluster and operations routes (docs/api.md): /v1/cluster, leadership transfer, /healthz, /readyz,
 * /metrics; plus the read-only debug route /v1/cluster/state (this replica's applied index and
 * state hash, for replica comparison in chaos tests, docs/failure-scenarios.md BC-25).
 */
import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { driveSlices } from '@tenure/raft';
import { HttpError, noLeader } from '../http-error.js';
import { emptyBodyAsObject } from '../json-body.js';
import { remainingMs } from '../request-context.js';
import * as R from '../response-schemas.js';
import { routeSchema } from '../route-schema.js';
import type { RoutePluginOptions } from './leases.js';

import { memberViews } from '../member-view.js';

/** This replica's applied index and the sha256 hex of its state snapshot at that index. */
interface StateHash {
  readonly appliedIndex: number;
  readonly stateHash: string;
}

export const clusterRoutes: FastifyPluginAsyncTypebox<RoutePluginOptions> = async (app, opts) => {
  const { deps, gateway: gw } = opts;
  const { raft, config } = deps;
  const { headers: H, body: B } = opts.schemas;

  const clusterSchema = routeSchema(
    {
      tags: ['cluster'],
      summary: 'Cluster status',
      description:
        "This node's view: the leader, term, commit and applied index, cluster time and every member with its role " +
        '(and, on the leader, replication progress).',
      response: { 200: R.cluster },
      errors: [400],
    },
    H,
  );
  app.get('/v1/cluster', { schema: clusterSchema }, async () => {
    const s = raft.status();
    const members = memberViews(s, config.peers, config.electionTimeoutMs);
    return {
      id: s.id,
      leader: s.leaderId,
      term: s.term,
      commitIndex: s.commitIndex,
      appliedIndex: s.appliedIndex,
      clusterTimeMs: Math.floor(s.clusterTimeMs),
      members,
    };
  });

  /**
   * `GET /v1/cluster/state` → `{id, appliedIndex, stateHash}`: this node's own replica, never
   * forwarded. stateHash = sha256 hex of the coord-state snapshot bytes, which are deterministic
   * (same state ⇒ same bytes), so two replicas at the same appliedIndex must report the same hash.
   * Encoded in slices with event-loop turns between them while applies are held
   * (RaftNodeApi.holdApplies), so the hash is of the state at exactly appliedIndex and the node
   * stays responsive meanwhile (docs/operations.md "Snapshots of a large state").
   */
  const stateSchema = routeSchema(
    {
      tags: ['cluster'],
      summary: 'Replica state hash',
      description:
        "This node's applied index and the sha256 of its state at that index (never forwarded): two replicas at " +
        'the same applied index must report the same hash. Off (404) unless the node runs with --state-hash-route on.',
      response: { 200: R.clusterState },
      errors: [400, 404],
    },
    H,
  );
  // The hash of the state at one applied index, computed once per index (repeated asks are free);
  // asks while one is being computed share it (one encoding at a time).
  let hashed: StateHash | null = null;
  let hashing: Promise<StateHash> | null = null;
  app.get('/v1/cluster/state', { schema: stateSchema }, async () => {
    if (config.stateHashRoute !== 'on')
      throw new HttpError(
        'not_found',
        'GET /v1/cluster/state is off on this node (start it with --state-hash-route on)',
      );
    if (hashed === null || hashed.appliedIndex !== raft.status().appliedIndex) {
      hashing ??= hashState().finally(() => {
        hashing = null;
      });
      hashed = await hashing;
    }
    return { id: config.nodeId, ...hashed };
  });

  /** Holds applies and hashes the state slice by slice at the applied index. */
  async function hashState(): Promise<StateHash> {
    const release = raft.holdApplies();
    try {
      const appliedIndex = raft.status().appliedIndex;
      const hash = createHash('sha256');
      await driveSlices(deps.coord.snapshotSlices(), (bytes) => hash.update(bytes));
      return { appliedIndex, stateHash: hash.digest('hex') };
    } finally {
      release();
    }
  }

  app.post(
    '/v1/cluster/transfer-leadership',
    {
      schema: routeSchema(
        {
          tags: ['cluster'],
          summary: 'Transfer leadership',
          description:
            'The leader hands leadership to `to` (default: the most caught-up follower) and answers the new leader. ' +
            'The body is optional.',
          body: B.transfer,
          bodyOptional: true,
          response: { 200: R.transferred },
          errors: [400, 413, 415, 503, 504],
        },
        H,
      ),
      preValidation: emptyBodyAsObject,
    },
    async (request, reply) => {
      const b = request.body;
      if (b.to !== undefined && !raft.status().members.some((m) => m.id === b.to))
        throw new HttpError('invalid_argument', `body.to: no member named ${b.to}`, {
          field: 'body.to',
        });
      return gw.onLeader(request, reply, 0, async () => {
        const from = raft.status().id;
        if (b.to === from) return { from, leader: from, term: raft.status().term };
        await raft.transferLeadership(b.to, { timeoutMs: remainingMs(request.tenure) });
        const s = raft.status();
        return { from, leader: s.leaderId, term: s.term };
      });
    },
  );

  const healthzSchema = routeSchema(
    {
      tags: ['operations'],
      summary: 'Liveness',
      description: 'The process serves HTTP.',
      response: { 200: R.healthz },
      errors: [400],
    },
    H,
  );
  app.get('/healthz', { schema: healthzSchema }, async () => ({
    status: 'ok' as const,
    id: config.nodeId,
    clusterId: config.clusterId,
  }));

  const readyzSchema = routeSchema(
    {
      tags: ['operations'],
      summary: 'Readiness',
      description:
        'Ready when this node is a member, a leader is known, and it has applied the commit index it heard from ' +
        'a leader `--ready-lag-ms` ago (the first one it heard, while none is that old); else 503 no_leader.',
      response: { 200: R.readyz },
      errors: [400, 503],
    },
    H,
  );
  app.get('/readyz', { schema: readyzSchema }, async () => {
    const s = raft.status();
    if (s.leaderId === null) throw noLeader('not ready: no leader known');
    // A node outside the membership (joining, not yet added) serves nothing of its own.
    if (!s.members.some((m) => m.id === s.id))
      throw noLeader('not ready: not a member of the cluster (yet)');
    // A follower cut off (paused, partitioned) still knows its old leader: ready only while it hears
    // from it, as a follower that hears nothing for an election timeout would campaign.
    if (s.leaderHeardAgoMs === null || s.leaderHeardAgoMs > config.electionTimeoutMs)
      throw noLeader(
        `not ready: leader ${s.leaderId} not heard from within the election timeout ` +
          `(${config.electionTimeoutMs} ms)`,
      );
    // The target is what the leader announced --ready-lag-ms ago, not what it announced last: a
    // follower hears a commit together with entries it must fsync before applying it, so the newest
    // would flap under steady writes; an emptied or lagging node hears a commit far above what it
    // holds and stays not ready (docs/architecture.md, Readiness).
    if (s.appliedIndex < s.caughtUpIndex) {
      throw new HttpError(
        'no_leader',
        `not ready: applied ${s.appliedIndex} < commit ${s.caughtUpIndex} heard ${config.readyLagMs} ms ago`,
        { appliedIndex: s.appliedIndex, commitIndex: s.caughtUpIndex },
        { 'retry-after': '1' },
      );
    }
    return {
      status: 'ready' as const,
      id: s.id,
      leader: s.leaderId,
      term: s.term,
      commitIndex: s.commitIndex,
      appliedIndex: s.appliedIndex,
    };
  });

  const metricsSchema = routeSchema(
    {
      tags: ['operations'],
      summary: 'Prometheus metrics',
      description: 'Metrics in the Prometheus text format.',
      response: { 200: R.metricsText },
      errors: [400],
      hide: true,
    },
    H,
  );
  app.get('/metrics', { schema: metricsSchema }, async (request, reply) => {
    void reply.header('content-type', deps.metrics.registry.contentType);
    // A HEAD (a probe) is not a scrape: reading the registry would restart the stall window.
    if (request.method === 'HEAD') return '';
    return deps.metrics.registry.metrics();
  });
};

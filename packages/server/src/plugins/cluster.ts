/**
 * Cluster and operations routes (SPEC §3): /v1/cluster, leadership transfer, /healthz, /readyz,
 * /metrics; plus the read-only debug route /v1/cluster/state (this replica's applied index and
 * state hash, for replica comparison in chaos tests, FAILURE-SCENARIOS BC-25).
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { HttpError, noLeader } from '../http-error.js';
import { remainingMs } from '../request-context.js';
import { bodySchemas } from '../schemas.js';
import type { RoutePluginOptions } from './leases.js';

/** SPEC §3 member roles. */
type MemberRole = 'leader' | 'follower' | 'candidate' | 'learner';

export async function clusterRoutes(app: FastifyInstance, opts: RoutePluginOptions): Promise<void> {
  const { deps, gateway: gw } = opts;
  const { raft, config } = deps;
  const S = bodySchemas(config.limits);

  app.get('/v1/cluster', { schema: { tags: ['cluster'] } }, async () => {
    const s = raft.status();
    const byId = new Map(s.members.map((m) => [m.id, m]));
    const members = config.peers.map((p) => {
      const m = byId.get(p.id);
      let role: MemberRole = 'follower';
      if (p.id === s.leaderId) role = 'leader';
      else if (p.id === s.id)
        role = s.role === 'leader' ? 'leader' : s.role === 'follower' ? 'follower' : 'candidate';
      else if (m && (m.role === 'candidate' || m.role === 'precandidate')) role = 'candidate';
      return {
        id: p.id,
        role,
        httpAddress: p.httpAddress,
        raftAddress: p.raftAddress,
        ...(m?.matchIndex !== undefined ? { matchIndex: m.matchIndex } : {}),
        ...(m?.lastContactMs !== undefined ? { lastContactMs: Math.floor(m.lastContactMs) } : {}),
      };
    });
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
   * Read in one synchronous step, so the hash is of the state at exactly appliedIndex.
   */
  app.get('/v1/cluster/state', { schema: { tags: ['cluster'] } }, async () => {
    const appliedIndex = raft.status().appliedIndex;
    const stateHash = createHash('sha256').update(deps.coord.snapshot()).digest('hex');
    return { id: config.nodeId, appliedIndex, stateHash };
  });

  app.post(
    '/v1/cluster/transfer-leadership',
    {
      schema: { tags: ['cluster'], body: S.transfer },
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
    },
    async (request, reply) => {
      const b = request.body as Static<typeof S.transfer>;
      if (b.to !== undefined && !config.peers.some((p) => p.id === b.to))
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

  app.get('/healthz', { schema: { tags: ['operations'] } }, async () => ({
    status: 'ok',
    id: config.nodeId,
    clusterId: config.clusterId,
  }));

  app.get('/readyz', { schema: { tags: ['operations'] } }, async () => {
    const s = raft.status();
    if (s.leaderId === null) throw noLeader('not ready: no leader known');
    if (s.appliedIndex < s.commitIndex) {
      throw new HttpError(
        'no_leader',
        `not ready: applied ${s.appliedIndex} < commit ${s.commitIndex}`,
        { appliedIndex: s.appliedIndex, commitIndex: s.commitIndex },
        { 'retry-after': '1' },
      );
    }
    return {
      status: 'ready',
      id: s.id,
      leader: s.leaderId,
      term: s.term,
      commitIndex: s.commitIndex,
      appliedIndex: s.appliedIndex,
    };
  });

  app.get('/metrics', { schema: { tags: ['operations'], hide: true } }, async (_request, reply) => {
    const text = await deps.metrics.registry.metrics();
    return reply.header('content-type', deps.metrics.registry.contentType).send(text);
  });
}

/**
 * One running Tenure node: opens the Raft node over the coordination state machine, builds the
 * HTTP app, starts the time advancer and listens. `stop()` is the graceful shutdown: a leader
 * hands leadership over first, then the server stops accepting, finishes in-flight requests
 * (long-polls are cut after a grace period) and storage is closed.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import {
  CoordStateMachine,
  decodeEnvelope,
  encodeEnvelope,
  type ApplyOutput,
} from '@tenure/coord-state';
import { RaftNode, type RaftNodeApi } from '@tenure/raft';
import { buildApp } from './app.js';
import { bootstrapRootToken } from './auth/bootstrap.js';
import { ChangeHub } from './change-hub.js';
import { parseHostPort, type ServerConfig } from './config.js';
import { HttpForwarder } from './forwarder.js';
import { createLoggers } from './logger.js';
import { createMetrics } from './metrics.js';
import { CoordStateAdapter } from './state-adapter.js';
import { TimeAdvancer } from './time-advancer.js';

export interface RunningNode {
  readonly app: FastifyInstance;
  readonly raft: RaftNodeApi<ApplyOutput>;
  readonly logger: Logger;
  /**
   * Graceful shutdown; idempotent (a second call returns the first's promise). A leader hands
   * leadership over first unless `transferLeadership` is false (the whole cluster is stopping).
   */
  stop(opts?: StopOptions): Promise<void>;
}

/** Options of `RunningNode.stop`. */
export interface StopOptions {
  /** Default true: a leader transfers leadership before stopping. False for a whole-cluster stop. */
  readonly transferLeadership?: boolean;
}

export interface StartNodeOptions {
  readonly logger?: Logger;
  /** A failed assertion or a fatal storage error: default logs and exits the process (code 70). */
  readonly onFatal?: (err: unknown) => void;
  /** How long in-flight requests may run after shutdown starts before connections are cut. */
  readonly drainMs?: number;
}

/** Open storage and Raft, serve HTTP on `config.httpAddress`. Rejects if either fails to start. */
export async function startNode(
  config: ServerConfig,
  opts: StartNodeOptions = {},
): Promise<RunningNode> {
  let raftRef: RaftNodeApi<ApplyOutput> | null = null;
  const loggers = opts.logger
    ? { logger: opts.logger, raftLogger: opts.logger }
    : createLoggers(config.nodeId, config.logLevel, () => raftRef?.status().term ?? null);
  const { logger } = loggers;
  const onFatal =
    opts.onFatal ??
    ((err: unknown) => {
      logger.fatal({ err }, 'fatal error; exiting');
      process.exit(70);
    });
  const hub = new ChangeHub();
  const coord = new CoordStateMachine({ ...config.limits });
  const adapter = new CoordStateAdapter(coord, hub, decodeEnvelope);
  const raft: RaftNodeApi<ApplyOutput> = await RaftNode.open<ApplyOutput>({
    id: config.nodeId,
    clusterId: config.clusterId,
    peers: config.peers.map((p) => ({ id: p.id, raftAddress: p.raftAddress })),
    listen: config.raftAddress,
    dataDir: config.dataDir,
    stateMachine: adapter,
    tickMs: config.tickMs,
    heartbeatMs: config.heartbeatMs,
    electionTimeoutMs: config.electionTimeoutMs,
    requestTimeoutMsDefault: config.requestTimeoutMsDefault,
    snapshotEntries: config.snapshotEntries,
    snapshotKeepEntries: config.snapshotKeepEntries,
    logger: loggers.raftLogger,
    onFatalError: onFatal,
  });
  raftRef = raft;
  const metrics = createMetrics(
    () => raftRef,
    () => coord,
  );
  raft.onLeaderChange((leaderId, term) => {
    metrics.leaderChanges.inc();
    logger.info({ leaderId, term }, 'leader changed');
  });
  const forwarder = new HttpForwarder();
  const app = await buildApp({
    config,
    raft,
    coord,
    hub,
    encodeEnvelope,
    forwarder,
    logger,
    metrics,
    onFatal,
  });
  const advancer = new TimeAdvancer({
    raft,
    coord,
    hub,
    encodeTimeAdvance: () =>
      encodeEnvelope({ v: 1, command: { type: 'time.advance' }, idempotency: null }),
    logger: logger.child({ component: 'time-advancer' }),
    proposeTimeoutMs: config.electionTimeoutMs * 2,
    retryMs: config.heartbeatMs,
  });
  const stopBootstrap = config.auth
    ? bootstrapRootToken({
        raft,
        coord,
        encodeEnvelope,
        rootToken: config.rootToken,
        nodeId: config.nodeId,
        logger: logger.child({ component: 'auth' }),
        proposeTimeoutMs: config.electionTimeoutMs * 2,
      })
    : () => {};
  const { host, port } = parseHostPort('http', config.httpAddress);
  try {
    await app.listen({ host, port });
  } catch (err) {
    advancer.stop();
    await raft.stop();
    throw err;
  }
  logger.info(
    { httpAddress: config.httpAddress, raftAddress: config.raftAddress, dataDir: config.dataDir },
    'node started',
  );

  let stopping: Promise<void> | null = null;
  const stop = (stopOpts: StopOptions = {}): Promise<void> => {
    stopping ??= (async () => {
      const transfer = stopOpts.transferLeadership ?? true;
      logger.info({ transferLeadership: transfer }, 'shutting down');
      if (transfer && raft.status().role === 'leader' && config.peers.length > 1) {
        try {
          await raft.transferLeadership(undefined, { timeoutMs: config.electionTimeoutMs * 2 });
          logger.info({ leaderId: raft.status().leaderId }, 'leadership transferred');
        } catch (err) {
          logger.warn({ err }, 'leadership transfer failed; stopping anyway');
        }
      }
      advancer.stop();
      stopBootstrap();
      const cut = setTimeout(() => app.server.closeAllConnections(), opts.drainMs ?? 2000);
      await app.close();
      clearTimeout(cut);
      forwarder.close();
      await raft.stop();
      logger.info('stopped');
    })();
    return stopping;
  };
  return { app, raft, logger, stop };
}

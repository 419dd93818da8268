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
import { asIndex, RaftNode, type PeerInfo, type RaftNodeApi } from '@tenure/raft';
import { buildApp } from './app.js';
import { bootstrapRootToken } from './auth/bootstrap.js';
import { ChangeHub } from './change-hub.js';
import { parseHostPort, type ServerConfig } from './config.js';
import { HttpForwarder } from './forwarder.js';
import { listeningText } from './node-server.js';
import { createLoggers } from './logger.js';
import { createMetrics } from './metrics.js';
import { watchRuntime } from './runtime-metrics.js';
import { CoordStateAdapter } from './state-adapter.js';
import { TimeAdvancer } from './time-advancer.js';
import {
  checkEmptyStart,
  isEmptyDir,
  JOIN_ATTEMPTS_MAX,
  joinPeers,
  peerCalls,
  type PeerCalls,
  removedByPeers,
  refuseRemovedData,
  RemovedDataError,
  requestJoin,
  settleClusterId,
  StartRefusedError,
} from './cluster/membership-startup.js';
import { markRemoved, refuseIfRemoved } from './cluster/removed-mark.js';

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
  /** This node learned it was removed from the cluster: default stops it and exits (code 0). */
  readonly onRemoved?: (node: RunningNode) => void;
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
  const metrics = createMetrics(
    () => raftRef,
    () => coord,
    { electionTimeoutMs: config.electionTimeoutMs },
  );
  refuseIfRemoved(config.dataDir, config.nodeId);
  const calls = peerCalls(config);
  // Without --cluster-id the stored id (or, joining, the cluster's) is the one this node runs with.
  config = await settleClusterId(config, calls);
  const peers =
    config.join !== null
      ? await joinStartPeers(config, calls, logger)
      : config.peers.map((p) => ({ ...p }));
  if (config.join === null) await checkEmptyStart(config, calls, logger);
  const raft: RaftNodeApi<ApplyOutput> = await RaftNode.open<ApplyOutput>({
    id: config.nodeId,
    clusterId: config.clusterId,
    peers,
    join: config.join !== null,
    listen: config.raftAddress,
    dataDir: config.dataDir,
    stateMachine: adapter,
    tickMs: config.tickMs,
    heartbeatMs: config.heartbeatMs,
    electionTimeoutMs: config.electionTimeoutMs,
    readyLagMs: config.readyLagMs,
    requestTimeoutMsDefault: config.requestTimeoutMsDefault,
    snapshotEntries: config.snapshotEntries,
    snapshotKeepEntries: config.snapshotKeepEntries,
    logger: loggers.raftLogger,
    onFatalError: onFatal,
    ...(config.peerTls ? { peerTls: config.peerTls } : {}),
    observer: metrics.raftObserver,
  });
  raftRef = raft;
  if (config.join !== null)
    await refuseRemovedData(config, calls, raft.status()).catch(async (err) => {
      if (err instanceof RemovedDataError) markRemoved(config.dataDir, config.nodeId);
      await raft.stop();
      throw err;
    });
  // After the start-up replay: counters count what happens while this process runs.
  adapter.observeApplied((out, clusterTimeMs) => metrics.observeApplied(out, clusterTimeMs));
  // RaftNode logs each leader change itself (once); the counter skips "no leader" notifications.
  metrics.noteLeader(raft.status().leaderId, raft.status().term);
  raft.onLeaderChange((leaderId, term) => metrics.noteLeader(leaderId, term));
  const forwarder = new HttpForwarder(config.tls ?? null);
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
    await app.listen({ host, port, listenTextResolver: listeningText(config) });
  } catch (err) {
    advancer.stop();
    await raft.stop();
    throw err;
  }
  const stopRuntimeWatch = watchRuntime(metrics.registry);
  logger.info(
    {
      clusterId: config.clusterId,
      httpAddress: config.httpAddress,
      raftAddress: config.raftAddress,
      dataDir: config.dataDir,
      httpTls: config.tls ? (config.tls.clientCa ? 'mutual' : 'server') : 'off',
      peerTls: config.peerTls ? 'mutual' : 'off',
    },
    'node started',
  );

  let stopping: Promise<void> | null = null;
  const stopWatches = watchMembership(
    config,
    calls,
    raft,
    logger,
    () => stopping !== null,
    (exitCode) => {
      if (exitCode === 0 && opts.onRemoved !== undefined) return opts.onRemoved(running);
      void running.stop({ transferLeadership: false }).finally(() => process.exit(exitCode));
    },
  );
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
      stopWatches();
      stopRuntimeWatch();
      stopBootstrap();
      const cut = setTimeout(() => app.server.closeAllConnections(), opts.drainMs ?? 2000);
      await app.close();
      clearTimeout(cut);
      forwarder.close();
      await calls.dispatcher.close();
      await raft.stop();
      logger.info('stopped');
    })();
    return stopping;
  };
  const running: RunningNode = { app, raft, logger, stop };
  return running;
}

/** Attempts to learn the members (1 s apart) before a joined node with data starts on its own data. */
const JOIN_ATTEMPTS_WITH_DATA = 3;

/**
 * `--join`: the peers to open Raft with. An empty node waits (about ten minutes) for a member to
 * answer and must not be a voter already (joinPeers). A node that has data (a joined member
 * restarted with the same command) asks a few times, then starts on its stored membership, so it
 * can help form a majority when the member it names is down (docs/operations.md).
 */
async function joinStartPeers(
  config: ServerConfig,
  calls: PeerCalls,
  logger: Logger,
): Promise<PeerInfo[]> {
  const empty = await isEmptyDir(config.dataDir);
  const attemptsMax = empty ? JOIN_ATTEMPTS_MAX : JOIN_ATTEMPTS_WITH_DATA;
  const peers = await joinPeers(config, calls, logger, { empty, attemptsMax });
  if (peers !== null) return peers;
  if (empty) throw new StartRefusedError(`no member answered at ${config.join}`);
  logger.warn(
    { join: config.join },
    'no member answered; starting on the membership stored in the data directory',
  );
  return config.peers.map((p) => ({ ...p }));
}

/** Ticks of the removal check (each one electionTimeoutMs × this) without a leader before asking. */
const LEADERLESS_CHECKS_BEFORE_ASKING = 3;

/**
 * Membership duties of a running node (docs/operations.md): with `--join`, ask to be added as a
 * learner; report removal learned from Raft (a committed membership without us, e.g. a removed
 * leader) or — while no leader is heard for a while — from the other members (the entry removing a
 * follower never reaches it). `leave(0)`: removed; `leave(2)`: the join was refused (the id is a
 * member at other addresses). Returns the function that stops these watches.
 */
function watchMembership(
  config: ServerConfig,
  calls: PeerCalls,
  raft: RaftNodeApi<ApplyOutput>,
  logger: Logger,
  stopped: () => boolean,
  leave: (exitCode: 0 | 2) => void,
): () => void {
  let done = false;
  const once = (): void => {
    if (done || stopped()) return;
    done = true;
    logger.warn('this node was removed from the cluster; exiting');
    try {
      markRemoved(config.dataDir, config.nodeId);
    } catch (err) {
      logger.error(
        { err, dataDir: config.dataDir },
        'cannot record the removal in the data directory',
      );
    }
    leave(0);
  };
  const offRemoved = raft.onRemoved(once);
  if (config.join !== null)
    requestJoin(config, calls, logger, stopped, () => raft.status()).then(
      // From here on a membership without this node means it was removed (not its earlier self).
      (configIndex) => {
        if (configIndex !== null) raft.admitted(asIndex(configIndex));
      },
      (err: unknown) => {
        logger.error({ err }, 'cannot join the cluster');
        if (err instanceof RemovedDataError) once();
        else if (err instanceof StartRefusedError && !stopped()) leave(2);
      },
    );
  let leaderless = 0;
  let asking = false;
  const timer = setInterval(() => {
    const s = raft.status();
    leaderless = s.leaderId === null ? leaderless + 1 : 0;
    const isMember = s.members.some((m) => m.id === s.id);
    if (leaderless < LEADERLESS_CHECKS_BEFORE_ASKING || !isMember || asking) return;
    asking = true;
    removedByPeers(calls, s.members, s.id, s.configIndex)
      .then((yes) => {
        if (yes) once();
      })
      .catch((err: unknown) => logger.debug({ err }, 'removal check failed'))
      .finally(() => (asking = false));
  }, config.electionTimeoutMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    offRemoved();
  };
}

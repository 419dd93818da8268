/**
 * pino loggers of a node: JSON lines (pino-pretty when stdout is a TTY), every line tagged with
 * the node id (once) and the current Raft term (`mixin`).
 */
import { pino, type DestinationStream, type Logger } from 'pino';

/** The node's logger and the root the Raft node gets (RaftNode binds `nodeId` itself). */
export interface NodeLoggers {
  /** Server lines: the root with the `nodeId` binding. */
  readonly logger: Logger;
  /** No `nodeId` binding: RaftNode's child loggers add their own, so lines carry it once. */
  readonly raftLogger: Logger;
}

/**
 * @param nodeId tag of every server line (Raft's lines get it from RaftNode)
 * @param level pino level
 * @param term read at each log call (current Raft term), or null before Raft is open
 * @param destination where lines go (tests); default stdout, pretty-printed when it is a TTY
 */
export function createLoggers(
  nodeId: string,
  level: string,
  term: () => number | null,
  destination?: DestinationStream,
): NodeLoggers {
  const pretty = destination === undefined && process.stdout.isTTY === true;
  const options = {
    level,
    base: {},
    mixin: () => {
      const t = term();
      return t === null ? {} : { term: t };
    },
    // Secrets never reach a log line (docs/security.md): the bearer header wherever a request's
    // headers are logged, and a created token's secret.
    redact: [
      'req.headers.authorization',
      'headers.authorization',
      'request.headers.authorization',
      'authorization',
      'secret',
      '*.secret',
      'rootToken',
      '*.rootToken',
    ],
    ...(pretty
      ? {
          transport: {
            target: 'pino-pretty',
            options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' },
          },
        }
      : {}),
  };
  const root = destination === undefined ? pino(options) : pino(options, destination);
  return { logger: root.child({ nodeId }), raftLogger: root };
}

/** The node's logger alone (every line tagged with `nodeId`); see `createLoggers`. */
export function createLogger(nodeId: string, level: string, term: () => number | null): Logger {
  return createLoggers(nodeId, level, term).logger;
}

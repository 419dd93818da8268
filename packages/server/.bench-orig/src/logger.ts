/**
 * pino logger of a node: JSON lines (pino-pretty when stdout is a TTY), every line tagged with
 * the node id and the current Raft term (`mixin`).
 */
import { pino, type Logger } from 'pino';

/**
 * @param nodeId tag of every line
 * @param level pino level
 * @param term read at each log call (current Raft term), or null before Raft is open
 */
export function createLogger(nodeId: string, level: string, term: () => number | null): Logger {
  const pretty = process.stdout.isTTY === true;
  return pino({
    level,
    base: { nodeId },
    mixin: () => {
      const t = term();
      return t === null ? {} : { term: t };
    },
    redact: ['req.headers.authorization'],
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
  });
}

/**
 * Logger: how the Raft runtime (RaftNode, its storage and transport) reports what it does, without
 * depending on a logging library. Object first, fixed message: `log.info({ term }, 'became leader')`
 * — the variables go in `fields`, `message` is a constant that can be grepped. One child per
 * component (`child({ component: 'raft-transport' })`), whose bindings every line carries.
 *
 * pino's Logger satisfies this interface as it is (the server passes its own); NOOP_LOGGER is the
 * default when the caller gives none. Implementations must not throw and must not block: the
 * runtime logs from its Ready loop and its socket handlers.
 */

/** Structured fields of one line (an `err` field holds an Error). */
export type LogFields = Readonly<Record<string, unknown>>;

/** See the file comment. Levels from most to least verbose; nothing above `error` is needed. */
export interface Logger {
  debug(fields: LogFields, message: string): void;
  info(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  error(fields: LogFields, message: string): void;
  /** A logger whose lines also carry `bindings` (e.g. `{ component, nodeId }`). */
  child(bindings: LogFields): Logger;
}

/** Discards every line; its children are itself. */
export const NOOP_LOGGER: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => NOOP_LOGGER,
};

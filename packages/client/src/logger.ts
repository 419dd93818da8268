/**
 * The client's optional logger: a pino-compatible subset (`log.warn({ name }, 'lease lost')` —
 * variables in the object, fixed message, docs/architecture.md habit 11). Pass a pino logger or any object with
 * some of these methods; missing methods are skipped.
 */
export interface Logger {
  debug?(obj: Record<string, unknown>, msg: string): void;
  info?(obj: Record<string, unknown>, msg: string): void;
  warn?(obj: Record<string, unknown>, msg: string): void;
  error?(obj: Record<string, unknown>, msg: string): void;
}

/** A logger that drops everything (the default). */
export const silentLogger: Logger = {};

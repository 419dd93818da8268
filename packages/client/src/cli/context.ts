/**
 * What every command of one CLI invocation shares: the injected I/O, output helpers, the client built
 * from the global flags, and the invocation's outcome (exit code, how errors name `value`).
 */
import type { Command } from 'commander';
import { TenureClient, type TenureClientOptions } from '../client.js';
import { parseEndpoints } from './args.js';
import { EXIT } from './exit-codes.js';
import { tlsOptionsFrom, type TlsFlags } from './tls-flags.js';

/** Default endpoints of the local three-node cluster (`npm start`). */
export const DEFAULT_ENDPOINTS =
  'http://127.0.0.1:7001,http://127.0.0.1:7002,http://127.0.0.1:7003';

/** A writable text sink (process.stdout or a test buffer). */
export interface TextSink {
  write(text: string): unknown;
}

/** Everything the CLI touches outside itself. */
export interface CliIo {
  readonly stdout: TextSink;
  readonly stderr: TextSink;
  /** Environment (TENURE_ENDPOINTS, TENURE_CA, TENURE_CERT, TENURE_KEY). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted on Ctrl-C / SIGTERM: ends `--hold`, `elect`, `observe`, `lease watch`. */
  readonly interrupt: AbortSignal;
  /** Builds the client (tests inject clocks or fakes). */
  readonly createClient?: (options: TenureClientOptions) => TenureClient;
}

/** The global flags (before the command name). */
export interface GlobalOptions extends TlsFlags {
  endpoints?: string;
  json?: boolean;
  timeout?: number;
  authToken?: string;
}

/** What a command action gets from `CliRun.context`. */
export interface CommandContext {
  readonly client: TenureClient;
  readonly json: boolean;
  /** `--timeout` (ms), or undefined for the client's default. */
  readonly timeoutMs: number | undefined;
}

/** One invocation: output helpers and its mutable outcome. */
export class CliRun {
  readonly io: CliIo;
  /** Exit code when no error is thrown (a command may set it, e.g. 1 when a held grant is lost). */
  exitCode: number = EXIT.ok;
  /** What the request field `value` is called in this invocation's error messages. */
  valueFlag = 'VALUE';

  constructor(io: CliIo) {
    this.io = io;
  }

  /** Writes one line to stdout. */
  out(text: string): void {
    this.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Writes one line to stderr. */
  err(text: string): void {
    this.io.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Prints `value` as one JSON line with `--json`, else the `human` text. */
  emit(json: boolean, value: unknown, human: string): void {
    this.out(json ? JSON.stringify(value) : human);
  }

  /** Builds the client from the global flags (or TENURE_ENDPOINTS, or the local default). */
  context(command: Command): CommandContext {
    const globals = command.optsWithGlobals<GlobalOptions>();
    const endpoints = parseEndpoints(
      globals.endpoints ?? this.io.env['TENURE_ENDPOINTS'] ?? DEFAULT_ENDPOINTS,
    );
    let options: TenureClientOptions = {
      endpoints,
      ...tlsOptionsFrom(globals, this.io.env),
      ...(globals.timeout === undefined ? {} : { requestTimeoutMs: globals.timeout }),
    };
    const token = globals.authToken ?? this.io.env['TENURE_TOKEN'];
    if (token !== undefined && token !== '') options = { ...options, token };
    const client = this.io.createClient?.(options) ?? new TenureClient(options);
    return { client, json: globals.json === true, timeoutMs: globals.timeout };
  }
}

/** Call options carrying `--timeout` when it was given. */
export function callOptions(timeoutMs: number | undefined): { timeoutMs?: number } {
  return timeoutMs === undefined ? {} : { timeoutMs };
}

/**
 * The `tenure` command line (SPEC §4): leases, elections, KV and cluster status over TenureClient.
 * `main(argv, io)` runs one invocation in-process and resolves with the exit code (see exit-codes.ts),
 * so tests drive it with injected argv, output streams, env and an interrupt signal.
 */
import { Command, CommanderError, Option } from 'commander';
import { TenureClient, type TenureClientOptions } from '../client.js';
import type {
  ClusterView,
  ElectionView,
  JsonValue,
  LeaseView,
  LeaseWatchView,
} from '../contract.js';
import { formatDurationMs, parseDurationMs } from '../duration.js';
import { TenureError } from '../errors.js';
import type { HeldGrant } from '../held-grant.js';
import { EXIT, exitCodeFor, UsageError } from './exit-codes.js';

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
  /** Environment (for TENURE_ENDPOINTS). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted on Ctrl-C / SIGTERM: ends `--hold`, `elect`, `observe`, `lease watch`. */
  readonly interrupt: AbortSignal;
  /** Builds the client (tests inject clocks or fakes). */
  readonly createClient?: (options: TenureClientOptions) => TenureClient;
}

interface GlobalOptions {
  endpoints?: string;
  json?: boolean;
  timeout?: number;
}

/**
 * Parses a duration flag (`10s`, `500ms`, `1m`, `2h`) into ms; usage error naming the flag on bad
 * input. A unit is required (a bare `5` is ambiguous: 5 ms or 5 s?), except for a bare `0`.
 */
export function durationArg(flag: string): (value: string) => number {
  return (value) => {
    const bare = /^\s*(\d+(?:\.\d+)?)\s*$/.exec(value);
    if (bare !== null && Number(bare[1]) !== 0)
      throw new UsageError(
        `${flag}: "${value}" needs a unit, e.g. ${bare[1]}s or ${bare[1]}ms (units: ms, s, m, h)`,
      );
    try {
      return parseDurationMs(value);
    } catch (error) {
      throw new UsageError(`${flag}: ${(error as Error).message}`);
    }
  };
}

/**
 * Request fields (as named in the server's `invalid_argument` answers, SPEC §3) and the CLI flag or
 * argument that sets each. `value` is per command (`--value` for elect, `VALUE` for kv put).
 */
const FIELD_FLAGS: Readonly<Record<string, string>> = {
  ttlMs: '--ttl',
  waitMs: '--wait',
  lockDelayMs: '--lock-delay',
  maxHoldMs: '--max-hold',
  holder: '--holder',
  candidate: '--candidate',
  fencingToken: '--token',
  lease: '--fence-lease',
  election: '--fence-election',
  ifRevision: '--if-revision',
  prefix: '--prefix',
  limit: '--limit',
  name: 'NAME',
  group: 'GROUP',
  key: 'KEY',
  'Request-Timeout-Ms': '--timeout',
};

/**
 * Rewrites a server `invalid_argument` error (field `body.ttlMs`, `ttlMs`, `params.name`,
 * `header Request-Timeout-Ms`, from `details.field` or the start of the message) so that its message
 * names the CLI flag first: `--ttl: ttlMs must be between 100 and 3600000`. The flag is also put in
 * `details.flag`. Other errors, and fields no flag sets, are returned unchanged.
 */
export function withFlagName(error: unknown, valueFlag = 'VALUE'): unknown {
  if (!(error instanceof TenureError) || error.code !== 'invalid_argument') return error;
  const detailField = error.details['field'];
  const field =
    typeof detailField === 'string'
      ? detailField
      : /^((?:body\.|query\.|params\.|header )?[A-Za-z][\w.-]*)/.exec(error.message)?.[1];
  if (field === undefined) return error;
  const path = field.replace(/^(?:body\.|query\.|params\.|header )/, '');
  const leaf = path.split('.').at(-1) ?? path;
  const flag = leaf === 'value' ? valueFlag : FIELD_FLAGS[leaf];
  if (flag === undefined) return error;
  const rest = error.message.startsWith(field)
    ? `${path}${error.message.slice(field.length).replace(/^:/, '')}`
    : error.message;
  return new TenureError(`${flag}: ${rest}`, {
    code: error.code,
    status: error.status,
    details: { ...error.details, flag },
    outcomeUnknown: error.outcomeUnknown,
    cause: error,
  });
}

/** Quotes `text` for a POSIX shell when it has characters a shell would treat specially. */
export function shellQuote(text: string): string {
  return /^[\w.:@%+=,/-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

function integerArg(flag: string): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
      throw new UsageError(`${flag}: expected a non-negative integer, got "${value}"`);
    return Number(value);
  };
}

/** A value argument: JSON when it parses (`42`, `{"a":1}`, `"x"`), otherwise the raw string. */
export function parseValueArg(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/** Splits `--endpoints` / TENURE_ENDPOINTS (comma-separated, `host:port` or URLs). */
export function parseEndpoints(text: string): string[] {
  const endpoints = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e.length > 0)
    .map((e) => (e.includes('://') ? e : `http://${e}`));
  if (endpoints.length === 0)
    throw new UsageError('--endpoints: at least one endpoint is required');
  return endpoints;
}

/**
 * Runs one CLI invocation. `argv` excludes `node` and the script (process.argv.slice(2)).
 * Resolves with the exit code; never throws and never calls process.exit.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode: number = EXIT.ok;
  /** What the request field `value` is called in this invocation's error messages. */
  let valueFlag = 'VALUE';
  const out = (text: string): void =>
    void io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  const err = (text: string): void =>
    void io.stderr.write(text.endsWith('\n') ? text : `${text}\n`);

  const program = new Command('tenure')
    .description('Tenure coordination service client: leases, elections, fenced KV')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
    })
    .showHelpAfterError('(run with --help for usage)')
    .option(
      '--endpoints <list>',
      `comma-separated node URLs (env TENURE_ENDPOINTS; default ${DEFAULT_ENDPOINTS})`,
    )
    .option('--json', 'machine-readable JSON output (one object per line)')
    .option('--timeout <duration>', 'deadline of each call, e.g. 5s', durationArg('--timeout'));

  const ctx = (
    command: Command,
  ): { client: TenureClient; json: boolean; timeoutMs: number | undefined } => {
    const globals = command.optsWithGlobals<GlobalOptions>();
    const endpoints = parseEndpoints(
      globals.endpoints ?? io.env['TENURE_ENDPOINTS'] ?? DEFAULT_ENDPOINTS,
    );
    const options: TenureClientOptions = {
      endpoints,
      ...(globals.timeout === undefined ? {} : { requestTimeoutMs: globals.timeout }),
    };
    const client = io.createClient ? io.createClient(options) : new TenureClient(options);
    return { client, json: globals.json === true, timeoutMs: globals.timeout };
  };
  const call = (timeoutMs: number | undefined): { timeoutMs?: number } =>
    timeoutMs === undefined ? {} : { timeoutMs };
  const emit = (json: boolean, value: unknown, human: string): void =>
    out(json ? JSON.stringify(value) : human);

  // ---- lease ----
  const lease = program
    .command('lease')
    .description('acquire, renew, release and inspect leases (locks)');
  lease
    .command('acquire <name>')
    .description(
      'acquire a lease once and print the grant; --hold keeps it renewed until Ctrl-C, then releases it',
    )
    .addOption(
      new Option('--ttl <duration>', 'lease ttl')
        .argParser(durationArg('--ttl'))
        .default(10_000, '10s'),
    )
    .option('--wait <duration>', 'wait up to this long for the lease', durationArg('--wait'))
    .option('--lock-delay <duration>', 'lock-delay after expiry', durationArg('--lock-delay'))
    .option('--max-hold <duration>', 'cap on total hold time', durationArg('--max-hold'))
    .option(
      '--holder <id>',
      'holder id to renew/release with later (default: a generated unique id); pick a short one ' +
        'only if no other client uses it: an acquire by the current holder renews its grant',
    )
    .option('--hold', 'keep the lease renewed until Ctrl-C, then release it')
    .action(
      async (
        name: string,
        opts: {
          ttl: number;
          wait?: number;
          lockDelay?: number;
          maxHold?: number;
          holder?: string;
          hold?: boolean;
        },
        command: Command,
      ) => {
        const { client, json, timeoutMs } = ctx(command);
        let held;
        try {
          held = await client.acquire(name, {
            ttlMs: opts.ttl,
            ...(opts.wait === undefined ? {} : { waitMs: opts.wait }),
            ...(opts.lockDelay === undefined ? {} : { lockDelayMs: opts.lockDelay }),
            ...(opts.maxHold === undefined ? {} : { maxHoldMs: opts.maxHold }),
            ...(opts.holder === undefined ? {} : { holder: opts.holder }),
            autoRenew: opts.hold === true,
            ...call(timeoutMs),
          });
        } catch (error) {
          if (json || !(error instanceof TenureError) || error.code !== 'held') throw error;
          throw await describeHeld(client, name, error);
        }
        emit(
          json,
          { event: 'acquired', ...held.toJSON() },
          `acquired ${held.name} fencingToken=${held.fencingToken} holder=${held.holder} ttl=${formatDurationMs(held.ttlMs)}`,
        );
        if (opts.hold !== true) {
          if (!json) {
            const globals = command.optsWithGlobals<GlobalOptions>();
            const prefix = [
              'tenure',
              ...(globals.endpoints === undefined
                ? []
                : ['--endpoints', shellQuote(globals.endpoints)]),
              'lease',
            ].join(' ');
            const grant = `${shellQuote(held.name)} --holder ${shellQuote(held.holder)} --token ${held.fencingToken}`;
            err(
              `expires in ${formatDurationMs(held.ttlMs)} unless renewed` +
                (opts.holder === undefined ? ' (choose a shorter holder id with --holder ID)' : ''),
            );
            err(`renew with:   ${prefix} renew ${grant}`);
            err(`release with: ${prefix} release ${grant}`);
          }
          return;
        }
        exitCode = await holdUntilInterrupt(held, io.interrupt, json, out, err);
        if (exitCode === EXIT.ok) {
          const released = await held.release();
          emit(
            json,
            { event: 'released', name: held.name, fencingToken: held.fencingToken, released },
            released ? `released ${held.name}` : `${held.name} was no longer held`,
          );
        }
      },
    );
  lease
    .command('renew <name>')
    .description('renew a grant once (holder and token from a previous acquire)')
    .requiredOption('--holder <id>', 'holder id of the grant')
    .requiredOption('--token <n>', 'fencing token of the grant', integerArg('--token'))
    .action(async (name: string, opts: { holder: string; token: number }, command: Command) => {
      const { client, json, timeoutMs } = ctx(command);
      const grant = await client.renewLease(name, opts.holder, opts.token, call(timeoutMs));
      emit(
        json,
        grant,
        `renewed ${grant.name} fencingToken=${grant.fencingToken} ttl=${formatDurationMs(grant.ttlMs)}`,
      );
    });
  lease
    .command('release <name>')
    .description('release a grant by holder and token')
    .requiredOption('--holder <id>', 'holder id of the grant')
    .requiredOption('--token <n>', 'fencing token of the grant', integerArg('--token'))
    .action(async (name: string, opts: { holder: string; token: number }, command: Command) => {
      const { client, json, timeoutMs } = ctx(command);
      const answer = await client.releaseLease(name, opts.holder, opts.token, call(timeoutMs));
      emit(json, answer, `released ${answer.name}`);
    });
  lease
    .command('get <name>')
    .description('show the current grant (exit 4 when free)')
    .option('--stale', 'read from the contacted node without a linearizable round')
    .action(async (name: string, opts: { stale?: boolean }, command: Command) => {
      const { client, json, timeoutMs } = ctx(command);
      const view = await client.getLease(name, {
        ...call(timeoutMs),
        ...(opts.stale === true ? { consistency: 'stale' as const } : {}),
      });
      if (view === null)
        throw new TenureError(`lease ${name} is not held`, { code: 'not_found', status: 404 });
      emit(json, view, formatLease(view));
    });
  lease
    .command('ls')
    .description('list live leases')
    .option('--prefix <prefix>', 'only names starting with this')
    .option('--limit <n>', 'at most this many', integerArg('--limit'))
    .action(async (opts: { prefix?: string; limit?: number }, command: Command) => {
      const { client, json, timeoutMs } = ctx(command);
      const leases = await client.listLeases(
        {
          ...(opts.prefix === undefined ? {} : { prefix: opts.prefix }),
          ...(opts.limit === undefined ? {} : { limit: opts.limit }),
        },
        call(timeoutMs),
      );
      if (json) out(JSON.stringify({ leases }));
      else if (leases.length === 0) out('no leases');
      else for (const view of leases) out(formatLease(view));
    });
  lease
    .command('watch <name>')
    .description('print the grant and every change until Ctrl-C')
    .action(async (name: string, _opts: unknown, command: Command) => {
      const { client, json } = ctx(command);
      for await (const view of client.watchLease(name, { signal: io.interrupt }))
        emit(json, view, formatWatch(view));
    });

  // ---- elections ----
  program
    .command('elect <group>')
    .description(
      'campaign in an election, hold leadership until Ctrl-C (printing changes), then resign',
    )
    .option('--value <value>', 'value to proclaim (JSON or string)')
    .addOption(
      new Option('--ttl <duration>', 'candidacy ttl')
        .argParser(durationArg('--ttl'))
        .default(10_000, '10s'),
    )
    .option('--candidate <id>', 'candidate id (default: unique per process)')
    .action(
      async (
        group: string,
        opts: { value?: string; ttl: number; candidate?: string },
        command: Command,
      ) => {
        const { client, json } = ctx(command);
        const value = opts.value === undefined ? null : parseValueArg(opts.value);
        valueFlag = '--value';
        if (!json) err(`campaigning in ${group} ...`);
        let leadership;
        try {
          leadership = await client.campaign(group, {
            ttlMs: opts.ttl,
            value,
            signal: io.interrupt,
            ...(opts.candidate === undefined ? {} : { candidate: opts.candidate }),
          });
        } catch (error) {
          if (error instanceof TenureError && error.code === 'aborted' && io.interrupt.aborted)
            return;
          throw error;
        }
        emit(
          json,
          { event: 'elected', ...leadership.toJSON() },
          `elected leader of ${group} fencingToken=${leadership.fencingToken} candidate=${leadership.candidate}`,
        );
        const watching = new AbortController();
        const stopWatching = (): void => watching.abort();
        io.interrupt.addEventListener('abort', stopWatching, { once: true });
        leadership.signal.addEventListener('abort', stopWatching, { once: true });
        const printer = (async () => {
          for await (const view of client.observe(group, {
            signal: watching.signal,
            initial: false,
          }))
            emit(json, { event: 'changed', ...view }, `changed: ${formatElection(view)}`);
        })().catch(() => undefined);
        exitCode = await holdUntilInterrupt(leadership, io.interrupt, json, out, err);
        watching.abort();
        await printer;
        if (exitCode === EXIT.ok) {
          const resigned = await leadership.resign();
          emit(json, { event: 'resigned', group, resigned }, `resigned leadership of ${group}`);
        }
      },
    );
  program
    .command('observe <group>')
    .description('print the election and every change of leader or value until Ctrl-C')
    .action(async (group: string, _opts: unknown, command: Command) => {
      const { client, json } = ctx(command);
      for await (const view of client.observe(group, { signal: io.interrupt }))
        emit(json, view, formatElection(view));
    });

  // ---- kv ----
  const kv = program.command('kv').description('fenced key-value writes');
  const fenceOptions = (command: Command): Command =>
    command
      .option('--fence-lease <name>', 'commit only while this lease carries --token')
      .option('--fence-election <group>', 'commit only while this election carries --token')
      .option(
        '--token <n>',
        'fencing token for --fence-lease / --fence-election',
        integerArg('--token'),
      )
      .option(
        '--if-revision <n>',
        'commit only if the key has this revision (0: absent)',
        integerArg('--if-revision'),
      );
  type FenceFlags = {
    fenceLease?: string;
    fenceElection?: string;
    token?: number;
    ifRevision?: number;
  };
  const writeOptions = (
    opts: FenceFlags,
  ): {
    fence?: { lease: string; fencingToken: number } | { election: string; fencingToken: number };
    ifRevision?: number;
  } => {
    if (opts.fenceLease !== undefined && opts.fenceElection !== undefined)
      throw new UsageError('use only one of --fence-lease and --fence-election');
    const resource = opts.fenceLease ?? opts.fenceElection;
    if (opts.fenceLease !== undefined && opts.token === undefined)
      throw new UsageError('--fence-lease needs --token N (the fencing token of the lease grant)');
    if (opts.fenceElection !== undefined && opts.token === undefined)
      throw new UsageError(
        '--fence-election needs --token N (the fencing token of the leadership)',
      );
    if (resource === undefined && opts.token !== undefined)
      throw new UsageError(
        '--token needs --fence-lease NAME or --fence-election GROUP (the resource the token belongs to)',
      );
    const fence =
      resource === undefined
        ? undefined
        : opts.fenceLease !== undefined
          ? { lease: opts.fenceLease, fencingToken: opts.token! }
          : { election: resource, fencingToken: opts.token! };
    return {
      ...(fence === undefined ? {} : { fence }),
      ...(opts.ifRevision === undefined ? {} : { ifRevision: opts.ifRevision }),
    };
  };
  fenceOptions(
    kv.command('put <key> <value>').description('write a value (JSON or string)'),
  ).action(async (key: string, value: string, opts: FenceFlags, command: Command) => {
    const { client, json, timeoutMs } = ctx(command);
    const answer = await client.kv.put(key, parseValueArg(value), {
      ...writeOptions(opts),
      ...call(timeoutMs),
    });
    emit(json, answer, `${answer.key} revision=${answer.revision}`);
  });
  kv.command('get <key>')
    .description('read a value (exit 4 when absent)')
    .action(async (key: string, _opts: unknown, command: Command) => {
      const { client, json, timeoutMs } = ctx(command);
      const view = await client.kv.get(key, call(timeoutMs));
      if (view === null)
        throw new TenureError(`key ${key} not found`, { code: 'not_found', status: 404 });
      emit(json, view, `${JSON.stringify(view.value)}\t(revision ${view.revision})`);
    });
  fenceOptions(kv.command('del <key>').description('delete a key')).action(
    async (key: string, opts: FenceFlags, command: Command) => {
      const { client, json, timeoutMs } = ctx(command);
      const answer = await client.kv.delete(key, { ...writeOptions(opts), ...call(timeoutMs) });
      emit(json, answer, `deleted ${answer.key}`);
    },
  );

  // ---- cluster ----
  program
    .command('cluster')
    .description('cluster information')
    .command('status')
    .description('show leader, term, indexes and members')
    .action(async (_opts: unknown, command: Command) => {
      const { client, json, timeoutMs } = ctx(command);
      const view = await client.cluster(call(timeoutMs));
      emit(json, view, formatCluster(view));
    });

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (thrown) {
    if (thrown instanceof CommanderError) return thrown.exitCode === 0 ? EXIT.ok : EXIT.usage;
    const error = withFlagName(thrown, valueFlag);
    const code = exitCodeFor(error);
    const json = argv.includes('--json');
    if (json) err(JSON.stringify({ error: errorJson(error) }));
    else err(`error: ${describeError(error)}`);
    return code;
  }
}

/**
 * Keeps a held grant until `interrupt` aborts (exit 0) or the grant is lost (exit 1), printing
 * renewals, jeopardy and loss.
 */
function holdUntilInterrupt(
  held: HeldGrant,
  interrupt: AbortSignal,
  json: boolean,
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<number> {
  return new Promise((resolve) => {
    const onRenewed = (): void => {
      if (json)
        out(
          JSON.stringify({ event: 'renewed', fencingToken: held.fencingToken, ttlMs: held.ttlMs }),
        );
    };
    const onAtRisk = (error: TenureError): void => {
      if (json) out(JSON.stringify({ event: 'atRisk', error: errorJson(error) }));
      else
        err(
          `warning: renewal failing (${error.code}), ${formatDurationMs(Math.round(held.remainingMs))} left`,
        );
    };
    const finish = (code: number): void => {
      held.off('renewed', onRenewed);
      held.off('atRisk', onAtRisk);
      interrupt.removeEventListener('abort', onInterrupt);
      held.signal.removeEventListener('abort', onLost);
      resolve(code);
    };
    const onInterrupt = (): void => finish(EXIT.ok);
    const onLost = (): void => {
      if (held.endReason === 'released') return finish(EXIT.ok);
      const reason: unknown = held.signal.reason;
      if (json) out(JSON.stringify({ event: 'lost', error: errorJson(reason) }));
      else err(`lost: ${describeError(reason)}`);
      finish(EXIT.conflict);
    };
    held.on('renewed', onRenewed);
    held.on('atRisk', onAtRisk);
    if (interrupt.aborted) return finish(EXIT.ok);
    if (held.signal.aborted) return onLost();
    interrupt.addEventListener('abort', onInterrupt, { once: true });
    held.signal.addEventListener('abort', onLost, { once: true });
  });
}

/**
 * A text-mode `held` error for lease `name` that says who holds it: "lease L is held by H (token N,
 * expires in 3s)" — the token and remaining time from a best-effort stale read (≤ 1 s; omitted if it
 * fails or shows another holder) — or, with `holder: null`, "lease L is in lock-delay for 1.2s"
 * (SPEC §3 "Waits"). Code, status and details are kept, so the exit code stays 1.
 */
async function describeHeld(
  client: TenureClient,
  name: string,
  error: TenureError,
): Promise<TenureError> {
  const holder = error.details['holder'];
  const delayMs = error.details['lockDelayRemainingMs'];
  let message: string;
  if (typeof holder === 'string') {
    let grant = '';
    try {
      const view = await client.getLease(name, { consistency: 'stale', timeoutMs: 1000 });
      if (view !== null && view.holder === holder)
        grant = ` (token ${view.fencingToken}, expires in ${formatDurationMs(view.remainingMs)})`;
    } catch {
      // Only decoration: the error itself is what matters.
    }
    message = `lease ${name} is held by ${holder}${grant}`;
  } else if (typeof delayMs === 'number') {
    message = `lease ${name} is in lock-delay for ${formatDurationMs(delayMs)} (its last holder's grant expired)`;
  } else return error;
  return new TenureError(message, {
    code: error.code,
    status: error.status,
    details: error.details,
    outcomeUnknown: error.outcomeUnknown,
    cause: error,
  });
}

function describeError(error: unknown): string {
  if (error instanceof TenureError)
    return `${error.code}: ${error.message}${error.outcomeUnknown ? ' (outcome unknown: the operation may have taken effect)' : ''}`;
  return error instanceof Error ? error.message : String(error);
}

function errorJson(error: unknown): Record<string, unknown> {
  if (error instanceof TenureError)
    return {
      code: error.code,
      status: error.status,
      message: error.message,
      outcomeUnknown: error.outcomeUnknown,
      ...error.details,
    };
  if (error instanceof UsageError) return { code: 'usage', message: error.message };
  return { code: 'error', message: error instanceof Error ? error.message : String(error) };
}

function formatLease(view: LeaseView): string {
  return `${view.name} holder=${view.holder} fencingToken=${view.fencingToken} ttl=${formatDurationMs(view.ttlMs)} remaining=${formatDurationMs(view.remainingMs)}`;
}

function formatWatch(view: LeaseWatchView): string {
  return view.holder === null
    ? `${view.name} free`
    : `${view.name} holder=${view.holder} fencingToken=${view.fencingToken}`;
}

function formatElection(view: ElectionView): string {
  const leader =
    view.leader === null
      ? 'none'
      : `${view.leader.candidate} value=${JSON.stringify(view.leader.value)} fencingToken=${view.leader.fencingToken}`;
  return `${view.group} leader=${leader} candidates=${view.candidates.length} revision=${view.revision}`;
}

function formatCluster(view: ClusterView): string {
  const lines = [
    `answered by ${view.id}: leader=${view.leader ?? 'none'} term=${view.term} commitIndex=${view.commitIndex} appliedIndex=${view.appliedIndex}`,
  ];
  for (const m of view.members) {
    const extra = [
      m.matchIndex === undefined ? '' : ` matchIndex=${m.matchIndex}`,
      m.lastContactMs === undefined ? '' : ` lastContact=${formatDurationMs(m.lastContactMs)}`,
    ].join('');
    lines.push(
      `  ${m.id.padEnd(6)} ${m.role.padEnd(9)} http=${m.httpAddress} raft=${m.raftAddress}${extra}`,
    );
  }
  return lines.join('\n');
}

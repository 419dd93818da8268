/**
 * Node configuration: parsed from command-line flags and `TENURE_*` environment variables (flags
 * win), every setting validated at start. A bad setting throws `ConfigError` naming the setting and
 * what was wrong; `main.ts` prints it and exits with code 2.
 */
import { isAbsolute, resolve } from 'node:path';
import { DEFAULT_LIMITS } from '@tenure/coord-state';

/** One cluster member as given by `--peers id=raftHost:port@httpHost:port`. */
export interface PeerConfig {
  readonly id: string;
  /** `host:port` of the member's Raft (peer) listener. */
  readonly raftAddress: string;
  /** `host:port` of the member's HTTP listener (used for forwarding and /v1/cluster). */
  readonly httpAddress: string;
}

/** Limits forwarded to the coordination state machine and enforced by route schemas (SPEC §3). */
export interface LimitsConfig {
  readonly ttlMsMin: number;
  readonly ttlMsMax: number;
  readonly waitMsMax: number;
  readonly valueBytesMax: number;
  readonly leasesMax: number;
  readonly waitersPerLeaseMax: number;
  readonly candidatesPerGroupMax: number;
  readonly electionsMax: number;
  readonly keysMax: number;
  readonly idempotencyWindowMs: number;
  readonly idempotencyRecordsMax: number;
}

/** The validated configuration of one `tenure-server` process. */
export interface ServerConfig {
  readonly nodeId: string;
  readonly clusterId: string;
  /** HTTP listen address `host:port`. */
  readonly httpAddress: string;
  /** Raft listen address `host:port`. */
  readonly raftAddress: string;
  /** Every voter including this node. */
  readonly peers: readonly PeerConfig[];
  readonly dataDir: string;
  readonly heartbeatMs: number;
  /** Base election timeout; each timeout is drawn from [base, 2 × base). */
  readonly electionTimeoutMs: number;
  readonly tickMs: number;
  /** Default per-request deadline when `Request-Timeout-Ms` is absent (SPEC §3 Deadlines). */
  readonly requestTimeoutMsDefault: number;
  /** Upper bound accepted for `Request-Timeout-Ms`. */
  readonly requestTimeoutMsMax: number;
  /** Long-poll `timeoutMs` upper bound (SPEC §3: ≤ 60,000). */
  readonly longPollMsMax: number;
  /** Request body limit; derived from valueBytesMax unless set. */
  readonly bodyBytesMax: number;
  /** Raft snapshot (and log compaction) after this many applied entries (Raft §7). */
  readonly snapshotEntries: number;
  /** Log entries kept behind a snapshot for lagging followers (0 = drop all it covers). */
  readonly snapshotKeepEntries: number;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly limits: LimitsConfig;
}

/** A configuration problem: `setting` is the flag name, `message` says what was wrong. Exit code 2. */
export class ConfigError extends Error {
  readonly setting: string;
  constructor(setting: string, message: string) {
    super(`invalid setting --${setting}: ${message}`);
    this.name = 'ConfigError';
    this.setting = setting;
  }
}

/** Default limits: the coordination state machine's own defaults (SPEC §3 ranges). */
export const DEFAULT_LIMITS_CONFIG: LimitsConfig = {
  ttlMsMin: DEFAULT_LIMITS.ttlMsMin,
  ttlMsMax: DEFAULT_LIMITS.ttlMsMax,
  waitMsMax: DEFAULT_LIMITS.waitMsMax,
  valueBytesMax: DEFAULT_LIMITS.valueBytesMax,
  leasesMax: DEFAULT_LIMITS.leasesMax,
  waitersPerLeaseMax: DEFAULT_LIMITS.waitersPerLeaseMax,
  candidatesPerGroupMax: DEFAULT_LIMITS.candidatesPerGroupMax,
  electionsMax: DEFAULT_LIMITS.electionsMax,
  keysMax: DEFAULT_LIMITS.keysMax,
  idempotencyWindowMs: DEFAULT_LIMITS.idempotencyWindowMs,
  idempotencyRecordsMax: DEFAULT_LIMITS.idempotencyRecordsMax,
};

const D = DEFAULT_LIMITS_CONFIG;

interface SettingDoc {
  readonly flag: string;
  readonly env: string;
  readonly def: string;
  readonly doc: string;
}

/** Every setting with its flag, env var, default and meaning (rendered into the README table). */
export const SETTINGS: readonly SettingDoc[] = [
  {
    flag: 'id',
    env: 'TENURE_ID',
    def: '(required)',
    doc: 'Node id, e.g. `n1`; must appear in `--peers`.',
  },
  {
    flag: 'peers',
    env: 'TENURE_PEERS',
    def: '(required)',
    doc: 'All voters: `id=raftHost:port@httpHost:port,...` (including this node).',
  },
  {
    flag: 'http',
    env: 'TENURE_HTTP',
    def: "this node's httpAddress from --peers",
    doc: 'HTTP listen address `host:port`.',
  },
  {
    flag: 'raft',
    env: 'TENURE_RAFT',
    def: "this node's raftAddress from --peers",
    doc: 'Raft listen address `host:port`.',
  },
  {
    flag: 'cluster-id',
    env: 'TENURE_CLUSTER_ID',
    def: 'tenure-local',
    doc: 'Cluster id; peers with another id are refused.',
  },
  {
    flag: 'data-dir',
    env: 'TENURE_DATA_DIR',
    def: './data/<id>',
    doc: 'Directory for the Raft log and state.',
  },
  {
    flag: 'heartbeat-ms',
    env: 'TENURE_HEARTBEAT_MS',
    def: '100',
    doc: 'Leader heartbeat interval.',
  },
  {
    flag: 'election-timeout-ms',
    env: 'TENURE_ELECTION_TIMEOUT_MS',
    def: '1000',
    doc: 'Base election timeout; randomized in [base, 2 × base). Must be ≥ 5 × heartbeat.',
  },
  {
    flag: 'tick-ms',
    env: 'TENURE_TICK_MS',
    def: '10',
    doc: 'Raft tick length; heartbeat and election timeout are rounded to whole ticks.',
  },
  {
    flag: 'request-timeout-ms',
    env: 'TENURE_REQUEST_TIMEOUT_MS',
    def: '5000',
    doc: 'Default per-request deadline (header `Request-Timeout-Ms` overrides).',
  },
  {
    flag: 'request-timeout-ms-max',
    env: 'TENURE_REQUEST_TIMEOUT_MS_MAX',
    def: '120000',
    doc: 'Largest accepted `Request-Timeout-Ms`.',
  },
  {
    flag: 'ttl-ms-min',
    env: 'TENURE_TTL_MS_MIN',
    def: String(D.ttlMsMin),
    doc: 'Smallest lease/candidacy ttlMs.',
  },
  {
    flag: 'ttl-ms-max',
    env: 'TENURE_TTL_MS_MAX',
    def: String(D.ttlMsMax),
    doc: 'Largest lease/candidacy ttlMs.',
  },
  {
    flag: 'wait-ms-max',
    env: 'TENURE_WAIT_MS_MAX',
    def: String(D.waitMsMax),
    doc: 'Largest acquire/campaign waitMs.',
  },
  {
    flag: 'value-bytes-max',
    env: 'TENURE_VALUE_BYTES_MAX',
    def: String(D.valueBytesMax),
    doc: 'Largest KV / election value (JSON bytes); larger gets 413.',
  },
  {
    flag: 'leases-max',
    env: 'TENURE_LEASES_MAX',
    def: String(D.leasesMax),
    doc: 'Live leases limit (429 beyond). All limits must be equal on every node: they shape replicated results.',
  },
  {
    flag: 'waiters-per-lease-max',
    env: 'TENURE_WAITERS_PER_LEASE_MAX',
    def: String(D.waitersPerLeaseMax),
    doc: 'Queued waiters per lease (429 beyond).',
  },
  {
    flag: 'candidates-per-group-max',
    env: 'TENURE_CANDIDATES_PER_GROUP_MAX',
    def: String(D.candidatesPerGroupMax),
    doc: 'Candidates per election group.',
  },
  {
    flag: 'elections-max',
    env: 'TENURE_ELECTIONS_MAX',
    def: String(D.electionsMax),
    doc: 'Election groups limit.',
  },
  { flag: 'keys-max', env: 'TENURE_KEYS_MAX', def: String(D.keysMax), doc: 'KV keys limit.' },
  {
    flag: 'idempotency-window-ms',
    env: 'TENURE_IDEMPOTENCY_WINDOW_MS',
    def: String(D.idempotencyWindowMs),
    doc: 'How long (cluster time) idempotency records are kept.',
  },
  {
    flag: 'idempotency-records-max',
    env: 'TENURE_IDEMPOTENCY_RECORDS_MAX',
    def: String(D.idempotencyRecordsMax),
    doc: 'Bound on idempotency records in memory.',
  },
  {
    flag: 'snapshot-entries',
    env: 'TENURE_SNAPSHOT_ENTRIES',
    def: '10000',
    doc: 'Take a Raft snapshot and compact the log every this many applied entries.',
  },
  {
    flag: 'snapshot-keep-entries',
    env: 'TENURE_SNAPSHOT_KEEP_ENTRIES',
    def: '1000',
    doc: 'Log entries kept behind a snapshot so slightly lagging followers catch up without one (0 = none).',
  },
  {
    flag: 'log-level',
    env: 'TENURE_LOG_LEVEL',
    def: 'info',
    doc: 'pino level: fatal, error, warn, info, debug, trace, silent.',
  },
];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const NODE_ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Split argv into `--flag value` / `--flag=value` pairs. Throws ConfigError on unknown flags. */
export function parseFlags(argv: readonly string[]): Map<string, string> {
  const known = new Set(SETTINGS.map((s) => s.flag));
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--'))
      throw new ConfigError(arg, 'unexpected positional argument (flags look like --name value)');
    const eq = arg.indexOf('=');
    const flag = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    if (!known.has(flag)) throw new ConfigError(flag, 'unknown setting');
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      if (value === undefined || value.startsWith('--'))
        throw new ConfigError(flag, 'missing value');
      i++;
    }
    out.set(flag, value);
  }
  return out;
}

/** Parse `host:port`; throws ConfigError naming `setting`. */
export function parseHostPort(setting: string, text: string): { host: string; port: number } {
  const m = /^([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(text);
  if (!m) throw new ConfigError(setting, `"${text}" is not host:port`);
  const port = Number(m[2]);
  if (port < 0 || port > 65535) throw new ConfigError(setting, `port ${port} is outside 0..65535`);
  return { host: m[1]!, port };
}

/** Parse the `--peers` list. Throws ConfigError on syntax errors or duplicate ids/addresses. */
export function parsePeers(text: string): PeerConfig[] {
  const peers: PeerConfig[] = [];
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0)) {
    const m = /^([^=]+)=([^@]+)@(.+)$/.exec(part);
    if (!m) throw new ConfigError('peers', `"${part}" is not id=raftHost:port@httpHost:port`);
    const id = m[1]!;
    if (!NODE_ID_RE.test(id))
      throw new ConfigError('peers', `node id "${id}" must match ${NODE_ID_RE.source}`);
    parseHostPort('peers', m[2]!);
    parseHostPort('peers', m[3]!);
    if (peers.some((p) => p.id === id))
      throw new ConfigError('peers', `node id "${id}" appears twice`);
    peers.push({ id, raftAddress: m[2]!, httpAddress: m[3]! });
  }
  if (peers.length === 0) throw new ConfigError('peers', 'at least one member is required');
  return peers;
}

function intSetting(
  get: (flag: string) => string | undefined,
  flag: string,
  def: number,
  min: number,
  max: number,
): number {
  const raw = get(flag);
  if (raw === undefined) return def;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(flag, `"${raw}" is not an integer`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(flag, `${n} is outside ${min}..${max}`);
  return n;
}

/**
 * Build and validate the configuration from flags (`argv` without node and script) and `env`.
 * Throws ConfigError (setting + problem) on the first bad setting. Relations checked: heartbeat <
 * election timeout / 5, ttlMsMin ≤ ttlMsMax, this node present in peers.
 */
export function loadConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): ServerConfig {
  const flags = parseFlags(argv);
  const byFlag = new Map(SETTINGS.map((s) => [s.flag, s]));
  const get = (flag: string): string | undefined => {
    const v = flags.get(flag);
    if (v !== undefined) return v;
    const e = env[byFlag.get(flag)!.env];
    return e === undefined || e === '' ? undefined : e;
  };

  const nodeId = get('id');
  if (nodeId === undefined) throw new ConfigError('id', 'required (e.g. --id n1 or TENURE_ID=n1)');
  if (!NODE_ID_RE.test(nodeId))
    throw new ConfigError('id', `"${nodeId}" must match ${NODE_ID_RE.source}`);
  const peersText = get('peers');
  if (peersText === undefined)
    throw new ConfigError('peers', 'required (id=raftHost:port@httpHost:port,...)');
  const peers = parsePeers(peersText);
  const self = peers.find((p) => p.id === nodeId);
  if (!self) throw new ConfigError('peers', `does not contain this node's id "${nodeId}"`);

  const httpAddress = get('http') ?? self.httpAddress;
  parseHostPort('http', httpAddress);
  const raftAddress = get('raft') ?? self.raftAddress;
  parseHostPort('raft', raftAddress);
  const clusterId = get('cluster-id') ?? 'tenure-local';
  if (!/^[A-Za-z0-9._:-]{1,100}$/.test(clusterId))
    throw new ConfigError('cluster-id', `"${clusterId}" must be 1-100 chars of [A-Za-z0-9._:-]`);
  const dataDirRaw = get('data-dir') ?? `data/${nodeId}`;
  const dataDir = isAbsolute(dataDirRaw) ? dataDirRaw : resolve(cwd, dataDirRaw);

  const tickMs = intSetting(get, 'tick-ms', 10, 1, 1000);
  const heartbeatMs = intSetting(get, 'heartbeat-ms', 100, 1, 60_000);
  const electionTimeoutMs = intSetting(get, 'election-timeout-ms', 1000, 10, 600_000);
  if (heartbeatMs < tickMs)
    throw new ConfigError('heartbeat-ms', `${heartbeatMs} is shorter than --tick-ms ${tickMs}`);
  if (heartbeatMs * 5 > electionTimeoutMs) {
    throw new ConfigError(
      'election-timeout-ms',
      `${electionTimeoutMs} must be at least 5 × --heartbeat-ms (${heartbeatMs * 5})`,
    );
  }
  const requestTimeoutMsMax = intSetting(get, 'request-timeout-ms-max', 120_000, 100, 3_600_000);
  const requestTimeoutMsDefault = intSetting(
    get,
    'request-timeout-ms',
    5000,
    50,
    requestTimeoutMsMax,
  );

  const d = DEFAULT_LIMITS_CONFIG;
  const ttlMsMin = intSetting(get, 'ttl-ms-min', d.ttlMsMin, 1, 86_400_000);
  const ttlMsMax = intSetting(get, 'ttl-ms-max', d.ttlMsMax, 1, 86_400_000);
  if (ttlMsMin > ttlMsMax)
    throw new ConfigError('ttl-ms-min', `${ttlMsMin} is greater than --ttl-ms-max ${ttlMsMax}`);
  const limits: LimitsConfig = {
    ttlMsMin,
    ttlMsMax,
    waitMsMax: intSetting(get, 'wait-ms-max', d.waitMsMax, 0, 3_600_000),
    valueBytesMax: intSetting(get, 'value-bytes-max', d.valueBytesMax, 16, 16 * 1024 * 1024),
    leasesMax: intSetting(get, 'leases-max', d.leasesMax, 1, 100_000_000),
    waitersPerLeaseMax: intSetting(
      get,
      'waiters-per-lease-max',
      d.waitersPerLeaseMax,
      1,
      1_000_000,
    ),
    candidatesPerGroupMax: intSetting(
      get,
      'candidates-per-group-max',
      d.candidatesPerGroupMax,
      1,
      1_000_000,
    ),
    electionsMax: intSetting(get, 'elections-max', d.electionsMax, 1, 100_000_000),
    keysMax: intSetting(get, 'keys-max', d.keysMax, 1, 100_000_000),
    idempotencyWindowMs: intSetting(
      get,
      'idempotency-window-ms',
      d.idempotencyWindowMs,
      1000,
      86_400_000,
    ),
    idempotencyRecordsMax: intSetting(
      get,
      'idempotency-records-max',
      d.idempotencyRecordsMax,
      1,
      100_000_000,
    ),
  };

  const snapshotEntries = intSetting(get, 'snapshot-entries', 10_000, 1, 100_000_000);
  const snapshotKeepEntries = intSetting(get, 'snapshot-keep-entries', 1_000, 0, 100_000_000);

  const logLevel = get('log-level') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
    throw new ConfigError('log-level', `"${logLevel}" must be one of ${LOG_LEVELS.join(', ')}`);

  return {
    nodeId,
    clusterId,
    httpAddress,
    raftAddress,
    peers,
    dataDir,
    heartbeatMs,
    electionTimeoutMs,
    tickMs,
    requestTimeoutMsDefault,
    requestTimeoutMsMax,
    longPollMsMax: 60_000,
    // Room for the JSON envelope around a maximal value (fields, escapes).
    bodyBytesMax: limits.valueBytesMax * 2 + 16 * 1024,
    snapshotEntries,
    snapshotKeepEntries,
    logLevel: logLevel as ServerConfig['logLevel'],
    limits,
  };
}

/** Markdown table of every setting (for the README). */
export function settingsTable(): string {
  const rows = SETTINGS.map((s) => `| \`--${s.flag}\` | \`${s.env}\` | ${s.def} | ${s.doc} |`);
  return ['| flag | env | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

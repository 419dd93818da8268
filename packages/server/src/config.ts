/**
 * Node configuration: `TENURE_*` environment variables and command-line flags (flags win), read
 * through the one settings table (config/server-settings.ts) and validated at start. A bad setting
 * throws ConfigError naming the flag or env var the user gave and what was wrong; `main.ts` prints
 * it and exits with code 2. Reference: docs/configuration.md (generated from the same table).
 */
import { isAbsolute, resolve } from 'node:path';
import { InvalidArgumentError, raftTimingTicks, type PeerTlsOptions } from '@tenure/raft';
import type { Command } from 'commander';
import { addressKey, hostPort, peersList, type PeerConfig } from './config/addresses.js';
import { ConfigError } from './config/config-error.js';
import { commandFor, parseFlags, readSettings, type ReadSettings } from './config/read-settings.js';
import { SERVER_SETTINGS } from './config/server-settings.js';
import { SettingValueError } from './config/setting.js';
import { loadTlsConfig, type HttpTlsConfig } from './config/tls-files.js';
import { serverVersion } from './config/version.js';

export { ConfigError } from './config/config-error.js';
export type { PeerConfig } from './config/addresses.js';
export type { HttpTlsConfig, TlsConfig } from './config/tls-files.js';
export { SERVER_SETTINGS, SERVER_SETTINGS as SETTINGS } from './config/server-settings.js';
export { settingsTable } from './config/docs-table.js';

/** Limits forwarded to the coordination state machine and enforced by route schemas (docs/api.md). */
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
  readonly sessionsMax: number;
  readonly idempotencyWindowMs: number;
  readonly idempotencyRecordsMax: number;
}

/** The validated configuration of one `tenure-server` process. */
export interface ServerConfig {
  readonly nodeId: string;
  readonly clusterId: string;
  /**
   * `--cluster-id` (or its env var) was given. Without it the data directory's stored id wins, and
   * a `--join` node with no data takes the id of the cluster it joins (docs/operations.md).
   */
  readonly clusterIdGiven: boolean;
  /** HTTP listen address `host:port`. */
  readonly httpAddress: string;
  /** Raft listen address `host:port`. */
  readonly raftAddress: string;
  /**
   * Every voter including this node, as `--peers` gives them (bootstraps a new cluster only; with
   * `--join` and no `--peers`: just this node).
   */
  readonly peers: readonly PeerConfig[];
  /** `--join`: origin of a member's HTTP endpoint to ask for membership; null = not joining. */
  readonly join: string | null;
  readonly dataDir: string;
  readonly heartbeatMs: number;
  /** Base election timeout; each timeout is drawn from [base, 2 × base). */
  readonly electionTimeoutMs: number;
  readonly tickMs: number;
  /** `/readyz` target: the commit index heard this long ago, ms (docs/architecture.md, Readiness). */
  readonly readyLagMs: number;
  /** Default per-request deadline when `Request-Timeout-Ms` is absent. */
  readonly requestTimeoutMsDefault: number;
  /** Upper bound accepted for `Request-Timeout-Ms`. */
  readonly requestTimeoutMsMax: number;
  /** Long-poll `timeoutMs` upper bound. */
  readonly longPollMsMax: number;
  /** Request body limit, derived from valueBytesMax. */
  readonly bodyBytesMax: number;
  /** All headers of a request must arrive within this, ms (docs/security.md, Abuse). */
  readonly headersTimeoutMs: number;
  /** A whole request (headers and body) must arrive within this, ms; the answer is not counted. */
  readonly receiveTimeoutMs: number;
  /** Idle keep-alive connections are closed after this, ms. */
  readonly keepAliveTimeoutMs: number;
  /**
   * A socket silent this long is closed, ms: a backstop above the longest silence of a correct
   * exchange (the largest deadline plus the largest wait, long-poll or watch keepalive), derived.
   */
  readonly socketIdleTimeoutMs: number;
  /** Largest request line plus headers, bytes (431 beyond). */
  readonly headerBytesMax: number;
  /** Open HTTP connections on this node. */
  readonly connectionsMax: number;
  /** Open HTTP connections from one client IP address. */
  readonly connectionsPerAddressMax: number;
  /** Long-polls waiting at once on this node (429 beyond). */
  readonly longPollsMax: number;
  /** Raft snapshot (and log compaction) after this many applied entries (Raft §7). */
  readonly snapshotEntries: number;
  /** Log entries kept behind a snapshot for lagging followers (0 = drop all it covers). */
  readonly snapshotKeepEntries: number;
  /** Streaming watches open at once on this node (docs/api.md, "Streaming watch"). */
  readonly watchesMax: number;
  /** Change events kept for watch resumes. */
  readonly watchLogEventsMax: number;
  /** Bound on the JSON bytes of the kept change events. */
  readonly watchLogBytesMax: number;
  /** Matching events that may wait for a blocked watch reader before `overflow`. */
  readonly watchBufferEventsMax: number;
  /** Keepalive comment interval of a watch, ms. */
  readonly watchKeepaliveMs: number;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `on`: GET /v1/cluster/state answers (`--state-hash-route on`); `off` (404) by default. */
  readonly stateHashRoute: 'off' | 'on';
  /** `on`: one info line per HTTP request (`--access-log on`); `off` by default. */
  readonly accessLog: 'off' | 'on';
  /** Tokens, roles, ownership and quotas on (docs/security.md). */
  readonly auth: boolean;
  /**
   * The secret the first leader with auth on makes the `root` token from when no token exists yet
   * (env `TENURE_ROOT_TOKEN` only: a secret never goes on a command line); null when unset.
   */
  readonly rootToken: string | null;
  /** Server defaults of a token's quota (docs/security.md); 0 requests/s = unlimited. */
  readonly quotaRequestsPerSecond: number;
  readonly quotaLeasesMax: number;
  readonly quotaSessionsMax: number;
  readonly quotaWaitersMax: number;
  readonly limits: LimitsConfig;
  /** Backup file to seed the empty data directory from before starting (restore.ts), or null. */
  readonly restoreFile: string | null;
  /** With restoreFile: tokens of the restored cluster are above this (0 = default margin only). */
  readonly tokenFloor: number;
  /** HTTPS on the API (`--tls-*`); absent or null: plain HTTP (docs/security.md). */
  readonly tls?: HttpTlsConfig | null;
  /** Mutual TLS on the Raft links (`--peer-tls-*`); absent or null: plain TCP. */
  readonly peerTls?: PeerTlsOptions | null;
}

/** Default limits: the settings table's defaults (which are the state machine's own). */
export const DEFAULT_LIMITS_CONFIG: LimitsConfig = limitsOf({
  ttlMsMin: SERVER_SETTINGS.ttlMsMin.defaultValue,
  ttlMsMax: SERVER_SETTINGS.ttlMsMax.defaultValue,
  waitMsMax: SERVER_SETTINGS.waitMsMax.defaultValue,
  valueBytesMax: SERVER_SETTINGS.valueBytesMax.defaultValue,
  leasesMax: SERVER_SETTINGS.leasesMax.defaultValue,
  waitersPerLeaseMax: SERVER_SETTINGS.waitersPerLeaseMax.defaultValue,
  candidatesPerGroupMax: SERVER_SETTINGS.candidatesPerGroupMax.defaultValue,
  electionsMax: SERVER_SETTINGS.electionsMax.defaultValue,
  keysMax: SERVER_SETTINGS.keysMax.defaultValue,
  sessionsMax: SERVER_SETTINGS.sessionsMax.defaultValue,
  idempotencyWindowMs: SERVER_SETTINGS.idempotencyWindowMs.defaultValue,
  idempotencyRecordsMax: SERVER_SETTINGS.idempotencyRecordsMax.defaultValue,
});

type Read = ReadSettings<typeof SERVER_SETTINGS>;

/** Largest long-poll `timeoutMs` (docs/api.md). */
const LONG_POLL_MS_MAX = 60_000;
/** Slack of the socket idle backstop above the longest silence of a correct exchange. */
const SOCKET_IDLE_MARGIN_MS = 30_000;

function limitsOf(v: LimitsConfig): LimitsConfig {
  return {
    ttlMsMin: v.ttlMsMin,
    ttlMsMax: v.ttlMsMax,
    waitMsMax: v.waitMsMax,
    valueBytesMax: v.valueBytesMax,
    leasesMax: v.leasesMax,
    waitersPerLeaseMax: v.waitersPerLeaseMax,
    candidatesPerGroupMax: v.candidatesPerGroupMax,
    electionsMax: v.electionsMax,
    keysMax: v.keysMax,
    sessionsMax: v.sessionsMax,
    idempotencyWindowMs: v.idempotencyWindowMs,
    idempotencyRecordsMax: v.idempotencyRecordsMax,
  };
}

/** Parse `host:port`; throws ConfigError naming `setting` (a flag name without dashes). */
export function parseHostPort(setting: string, text: string): { host: string; port: number } {
  try {
    return hostPort(text);
  } catch (err) {
    if (err instanceof SettingValueError) throw new ConfigError(setting, err.message);
    throw err;
  }
}

/** Parse a `--peers` list; throws ConfigError naming `peers`. */
export function parsePeers(text: string): PeerConfig[] {
  try {
    return peersList(text);
  } catch (err) {
    if (err instanceof SettingValueError) throw new ConfigError('peers', err.message);
    throw err;
  }
}

/** The commander Command of `tenure-server`: one option per setting, `--help`, `--version`. */
export function serverCommand(): Command {
  return commandFor(SERVER_SETTINGS, {
    name: 'tenure-server',
    description: 'Run one Tenure node. Every setting is a flag or a TENURE_* env var (flag wins).',
    version: serverVersion(),
    helpAfter: [
      'Example:',
      '  tenure-server --id n1 --peers n1=127.0.0.1:7101@127.0.0.1:7001,n2=...,n3=...',
      'Exit codes: 0 stopped, 1 failed to start, 2 bad setting. Reference: docs/configuration.md',
    ].join('\n'),
  });
}

/**
 * The relations between settings, checked at start: the Raft timing rule, min ≤ max pairs, and a
 * root secret given while auth is off (the node would serve everyone while the operator believes
 * it is protected: docs/security.md).
 */
function checkRelations(r: Read, rootToken: string | null): void {
  const v = r.values;
  if (rootToken !== null && !v.auth)
    throw r.error(
      'auth',
      'is off but TENURE_ROOT_TOKEN is set: the node would accept requests without a token. ' +
        'Turn auth on (--auth or TENURE_AUTH=on) or unset TENURE_ROOT_TOKEN',
    );
  try {
    raftTimingTicks(v);
  } catch (err) {
    if (!(err instanceof InvalidArgumentError)) throw err;
    const key = err.field as 'tickMs' | 'heartbeatMs' | 'electionTimeoutMs';
    const message = err.message
      .replace(/^\w+: /, '')
      .replace(/\b(tickMs|heartbeatMs|electionTimeoutMs)\b/g, (k) => r.sourceOf(k as typeof key));
    throw r.error(key, message);
  }
  if (v.requestTimeoutMsDefault > v.requestTimeoutMsMax) {
    const max = r.sourceOf('requestTimeoutMsMax');
    throw r.error('requestTimeoutMsDefault', `${v.requestTimeoutMsDefault} exceeds ${max}`);
  }
  if (v.headersTimeoutMs > v.receiveTimeoutMs) {
    const max = r.sourceOf('receiveTimeoutMs');
    throw r.error('headersTimeoutMs', `${v.headersTimeoutMs} exceeds ${max}`);
  }
  if (v.ttlMsMin > v.ttlMsMax)
    throw r.error('ttlMsMin', `${v.ttlMsMin} is greater than ${r.sourceOf('ttlMsMax')}`);
  if (v.tokenFloor > 0 && v.restoreFile === undefined)
    throw r.error('tokenFloor', `applies only with ${r.sourceOf('restoreFile')}`);
}

/** A joining node without `--peers` knows only itself: `--http` and `--raft` are then required. */
function joinPeers(r: Read, nodeId: string): PeerConfig[] {
  const v = r.values;
  if (v.httpAddress === undefined) throw r.error('httpAddress', 'required with --join');
  if (v.raftAddress === undefined) throw r.error('raftAddress', 'required with --join');
  return [{ id: nodeId, raftAddress: v.raftAddress, httpAddress: v.httpAddress }];
}

/**
 * Build and validate the configuration from flags (`argv` without node and script) and `env`.
 * Throws ConfigError on the first bad setting, named as given (flag or env var); CommanderError
 * (exitCode 0) after printing `--help` or `--version`.
 */
export function loadConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): ServerConfig {
  const r = readSettings(SERVER_SETTINGS, parseFlags(serverCommand(), argv), env);
  const v = r.values;
  if (v.nodeId === undefined) throw r.error('nodeId', 'required (e.g. --id n1 or TENURE_ID=n1)');
  const join = v.join ?? null;
  const peers = join === null ? v.peers : (v.peers ?? joinPeers(r, v.nodeId));
  if (peers === undefined)
    throw r.error('peers', 'required (id=raftHost:port@httpHost:port,...) unless --join is given');
  const self = peers.find((p) => p.id === v.nodeId);
  if (!self) throw r.error('peers', `does not contain this node's id "${v.nodeId}"`);
  const rootToken = env['TENURE_ROOT_TOKEN'] === '' ? null : (env['TENURE_ROOT_TOKEN'] ?? null);
  checkRelations(r, rootToken);
  if (
    addressKey(v.httpAddress ?? self.httpAddress) === addressKey(v.raftAddress ?? self.raftAddress)
  )
    throw r.error(
      'httpAddress',
      'is the Raft address too: give the HTTP API and Raft their own ports',
    );
  const dataDirRaw = v.dataDir ?? `data/${v.nodeId}`;
  return {
    nodeId: v.nodeId,
    clusterId: v.clusterId,
    clusterIdGiven: r.given('clusterId'),
    httpAddress: v.httpAddress ?? self.httpAddress,
    raftAddress: v.raftAddress ?? self.raftAddress,
    peers,
    join,
    dataDir: isAbsolute(dataDirRaw) ? dataDirRaw : resolve(cwd, dataDirRaw),
    heartbeatMs: v.heartbeatMs,
    electionTimeoutMs: v.electionTimeoutMs,
    tickMs: v.tickMs,
    readyLagMs: v.readyLagMs,
    requestTimeoutMsDefault: v.requestTimeoutMsDefault,
    requestTimeoutMsMax: v.requestTimeoutMsMax,
    longPollMsMax: LONG_POLL_MS_MAX,
    // Room for the JSON envelope around a maximal value (fields, escapes).
    bodyBytesMax: v.valueBytesMax * 2 + 16 * 1024,
    headersTimeoutMs: v.headersTimeoutMs,
    receiveTimeoutMs: v.receiveTimeoutMs,
    keepAliveTimeoutMs: v.keepAliveTimeoutMs,
    socketIdleTimeoutMs:
      v.requestTimeoutMsMax +
      Math.max(v.waitMsMax, LONG_POLL_MS_MAX, v.watchKeepaliveMs, v.receiveTimeoutMs) +
      SOCKET_IDLE_MARGIN_MS,
    headerBytesMax: v.headerBytesMax,
    connectionsMax: v.connectionsMax,
    connectionsPerAddressMax: v.connectionsPerAddressMax,
    longPollsMax: v.longPollsMax,
    snapshotEntries: v.snapshotEntries,
    snapshotKeepEntries: v.snapshotKeepEntries,
    watchesMax: v.watchesMax,
    watchLogEventsMax: v.watchLogEventsMax,
    watchLogBytesMax: v.watchLogBytesMax,
    watchBufferEventsMax: v.watchBufferEventsMax,
    watchKeepaliveMs: v.watchKeepaliveMs,
    logLevel: v.logLevel,
    accessLog: v.accessLog,
    stateHashRoute: v.stateHashRoute,
    auth: v.auth,
    rootToken,
    quotaRequestsPerSecond: v.quotaRequestsPerSecond,
    quotaLeasesMax: v.quotaLeasesMax,
    quotaSessionsMax: v.quotaSessionsMax,
    quotaWaitersMax: v.quotaWaitersMax,
    limits: limitsOf(v),
    restoreFile: v.restoreFile === undefined ? null : resolve(cwd, v.restoreFile),
    tokenFloor: v.tokenFloor,
    ...loadTlsConfig(r, cwd),
  };
}

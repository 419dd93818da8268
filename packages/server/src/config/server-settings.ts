/**
 * Every `tenure-server` setting, declared once: flag, env var, default, range, unit and meaning.
 * loadConfig, `tenure-server --help`, docs/configuration.md and the tests read this table.
 * To add a setting: add a row here (the key is the ServerConfig field it fills), use it in
 * loadConfig, run `npm run docs:config`; a relation with other settings goes in loadConfig.
 */
import {
  DEFAULT_LIMITS,
  TOKEN_FLOOR_MAX,
  WAITERS_PER_LEASE_MAX_CEILING,
} from '@tenure/coord-state';
import { RAFT_NODE_DEFAULTS } from '@tenure/raft';
import { hostPortText, NODE_ID_RE, peersList, type PeerConfig } from './addresses.js';
import {
  choiceSetting,
  intSetting,
  patternSetting,
  SettingValueError,
  switchSetting,
  textSetting,
  type Setting,
} from './setting.js';

const envPrefix = 'TENURE_';

/** `--join`: an http(s) URL without path, query or credentials. */
function joinUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new SettingValueError(`"${text}" is not a URL (e.g. http://127.0.0.1:7001)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new SettingValueError(`"${text}" must start with http:// or https://`);
  if (url.pathname !== '/' || /[?#]/.test(text))
    throw new SettingValueError(`"${text}": give the member's address only (e.g. ${url.origin})`);
  if (url.username !== '' || url.password !== '')
    throw new SettingValueError(`"${text}": no credentials in the URL`);
  return url.origin;
}
const D = DEFAULT_LIMITS;
const R = RAFT_NODE_DEFAULTS;

/** An optional path to a PEM file (read and checked by loadConfig, tls-files.ts). */
function pemFileSetting(flag: string, doc: string): Setting<string, undefined> {
  return textSetting<string>({
    flag,
    envPrefix,
    valueName: 'file',
    default: undefined,
    defaultText: '(none)',
    parse: (text) => text,
    doc,
  });
}

/** pino levels accepted by `--log-level`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The `tenure-server` settings table (key = ServerConfig / LimitsConfig field). */
export const SERVER_SETTINGS = {
  nodeId: patternSetting({
    flag: 'id',
    envPrefix,
    valueName: 'id',
    pattern: NODE_ID_RE,
    rangeText: '1-64 of [A-Za-z0-9_-]',
    default: undefined,
    defaultText: '(required)',
    doc: 'Node id, e.g. `n1`; must appear in `--peers`.',
  }),
  peers: textSetting<PeerConfig[]>({
    flag: 'peers',
    envPrefix,
    valueName: 'list',
    default: undefined,
    defaultText: '(required)',
    parse: peersList,
    doc:
      'All voters of a NEW cluster: `id=raftHost:port@httpHost:port,...` (including this node; an IPv6 ' +
      'host goes in brackets, `[::1]:7001`). Once the ' +
      'data directory holds data, the membership stored there wins (a differing list is logged as a warning). ' +
      'Not needed with `--join`.',
  }),
  join: textSetting<string>({
    flag: 'join',
    envPrefix,
    valueName: 'url',
    default: undefined,
    defaultText: '(none)',
    parse: joinUrl,
    doc:
      'Join an existing cluster: the HTTP endpoint of any member (e.g. `http://127.0.0.1:7001`). The node ' +
      'starts with an empty data directory, asks to be added as a learner, catches up and waits to be ' +
      'promoted (docs/operations.md). Needs `--http` and `--raft`.',
  }),
  httpAddress: textSetting<string>({
    flag: 'http',
    envPrefix,
    valueName: 'host:port',
    default: undefined,
    defaultText: "this node's HTTP address in `--peers`",
    parse: hostPortText,
    doc: 'HTTP listen address `host:port`.',
  }),
  raftAddress: textSetting<string>({
    flag: 'raft',
    envPrefix,
    valueName: 'host:port',
    default: undefined,
    defaultText: "this node's Raft address in `--peers`",
    parse: hostPortText,
    doc: 'Raft listen address `host:port`.',
  }),
  clusterId: patternSetting({
    flag: 'cluster-id',
    envPrefix,
    valueName: 'id',
    pattern: /^[A-Za-z0-9._:-]{1,100}$/,
    rangeText: '1-100 of [A-Za-z0-9._:-]',
    default: 'tenure-local',
    doc: 'Cluster id, kept in the data directory; peers with another id are refused. Not given: the id stored in the data directory, or (`--join`, no data) the joined cluster’s.',
  }),
  dataDir: textSetting<string>({
    flag: 'data-dir',
    envPrefix,
    valueName: 'dir',
    default: undefined,
    defaultText: '`./data/<id>`',
    parse: (text) => text,
    doc: 'Directory for the Raft log and state (relative to the working directory).',
  }),
  tickMs: intSetting({
    flag: 'tick-ms',
    envPrefix,
    unit: 'ms',
    min: 1,
    max: 1000,
    default: R.tickMs,
    doc: 'Raft tick length; heartbeat and election timeout are rounded to whole ticks.',
  }),
  heartbeatMs: intSetting({
    flag: 'heartbeat-ms',
    envPrefix,
    unit: 'ms',
    min: 1,
    max: 60_000,
    default: R.heartbeatMs,
    doc: 'Leader heartbeat interval; at least `--tick-ms`, at most `--election-timeout-ms` / 5.',
  }),
  electionTimeoutMs: intSetting({
    flag: 'election-timeout-ms',
    envPrefix,
    unit: 'ms',
    min: 10,
    max: 600_000,
    default: R.electionTimeoutMs,
    doc: 'Base election timeout; each is drawn from [base, 2 × base).',
  }),
  readyLagMs: intSetting({
    flag: 'ready-lag-ms',
    envPrefix,
    unit: 'ms',
    min: 0,
    max: 600_000,
    default: R.readyLagMs,
    doc: '`/readyz` is ready once this node has applied the commit index a leader announced this long ago (the first one it heard, while none is that old): a follower that learns a commit with entries it must fsync first is not flapped to 503, a wiped or lagging one stays not ready. 0 = applied ≥ the newest commit index heard.',
  }),
  requestTimeoutMsDefault: intSetting({
    flag: 'request-timeout-ms',
    envPrefix,
    unit: 'ms',
    min: 50,
    max: 3_600_000,
    default: 5000,
    doc: 'Deadline of a request without a `Request-Timeout-Ms` header; ≤ `--request-timeout-ms-max`.',
  }),
  requestTimeoutMsMax: intSetting({
    flag: 'request-timeout-ms-max',
    envPrefix,
    unit: 'ms',
    min: 100,
    max: 3_600_000,
    default: 120_000,
    doc: 'Largest request deadline: a larger `Request-Timeout-Ms` header counts as this value.',
  }),
  headersTimeoutMs: intSetting({
    flag: 'headers-timeout-ms',
    envPrefix,
    unit: 'ms',
    min: 100,
    max: 600_000,
    default: 10_000,
    doc: 'A connection must deliver all headers of a request within this (from its first byte, or from connecting); else 408 and the connection is closed (slowloris). ≤ `--receive-timeout-ms`.',
  }),
  receiveTimeoutMs: intSetting({
    flag: 'receive-timeout-ms',
    envPrefix,
    unit: 'ms',
    min: 100,
    max: 3_600_000,
    default: 30_000,
    doc: 'A whole request (headers and body) must arrive within this; else 408 and the connection is closed (a body shorter than its Content-Length ends here). Waiting for the answer is not counted.',
  }),
  keepAliveTimeoutMs: intSetting({
    flag: 'keep-alive-timeout-ms',
    envPrefix,
    unit: 'ms',
    min: 100,
    max: 3_600_000,
    default: 65_000,
    doc: 'An idle keep-alive connection is closed after this (above common client pool idle times).',
  }),
  headerBytesMax: intSetting({
    flag: 'header-bytes-max',
    envPrefix,
    unit: 'bytes',
    min: 1024,
    max: 1024 * 1024,
    default: 16 * 1024,
    doc: 'Largest request line plus headers; larger gets 431 and the connection is closed.',
  }),
  connectionsMax: intSetting({
    flag: 'connections-max',
    envPrefix,
    unit: 'count',
    min: 1,
    max: 1_000_000,
    default: 10_000,
    doc: 'Open HTTP connections on this node; more are closed as they arrive (keep it under the open-files limit).',
  }),
  connectionsPerAddressMax: intSetting({
    flag: 'connections-per-address-max',
    envPrefix,
    unit: 'count',
    min: 1,
    max: 1_000_000,
    default: 4_096,
    doc: 'Open HTTP connections from one client IP address on this node; more are closed as they arrive. Followers forward through at most 512 connections each.',
  }),
  longPollsMax: intSetting({
    flag: 'long-polls-max',
    envPrefix,
    unit: 'count',
    min: 1,
    max: 1_000_000,
    default: 10_000,
    doc: 'Long-polls (`GET …/watch`, `…/observe`) waiting at once on this node; more get 429.',
  }),
  ttlMsMin: intSetting({
    flag: 'ttl-ms-min',
    envPrefix,
    unit: 'ms',
    min: 1,
    max: 86_400_000,
    default: D.ttlMsMin,
    doc: 'Smallest lease/candidacy ttlMs; ≤ `--ttl-ms-max`.',
  }),
  ttlMsMax: intSetting({
    flag: 'ttl-ms-max',
    envPrefix,
    unit: 'ms',
    min: 1,
    max: 86_400_000,
    default: D.ttlMsMax,
    doc: 'Largest lease/candidacy ttlMs.',
  }),
  waitMsMax: intSetting({
    flag: 'wait-ms-max',
    envPrefix,
    unit: 'ms',
    min: 0,
    max: 3_600_000,
    default: D.waitMsMax,
    doc: 'Largest acquire/campaign waitMs.',
  }),
  valueBytesMax: intSetting({
    flag: 'value-bytes-max',
    envPrefix,
    unit: 'bytes',
    min: 16,
    max: 16 * 1024 * 1024,
    default: D.valueBytesMax,
    doc: 'Largest KV / election value (JSON bytes); larger gets 413.',
  }),
  leasesMax: intSetting({
    flag: 'leases-max',
    envPrefix,
    unit: 'count',
    min: 1,
    max: 100_000_000,
    default: D.leasesMax,
    doc: 'Live leases limit (429 beyond). Limits must be equal on every node: they shape replicated results.',
  }),
  sessionsMax: intSetting({
    flag: 'sessions-max',
    envPrefix,
    unit: 'count',
    min: 1,
    max: 100_000_000,
    default: D.sessionsMax,
    doc: 'Live sessions limit (429 beyond).',
  }),
  waitersPerLeaseMax: intSetting({
    flag: 'waiters-per-lease-max',
    envPrefix,
    unit: 'count',
    min: 1,
    max: WAITERS_PER_LEASE_MAX_CEILING,
    default: D.waitersPerLeaseMax,
    doc: 'Queued waiters per lease (429 beyond).',
  }),
  candidatesPerGroupMax: intSetting({
    flag: 'candidates-per-group-max',
    envPrefix,
    unit: 'count',
    min: 1,
    max: 1_000_000,
    default: D.candidatesPerGroupMax,
    doc: 'Candidates per election group.',
  }),
  electionsMax: intSetting({
    flag: 'elections-max',
    envPrefix,
    unit: 'count',
    min: 1,
    max: 100_000_000,
    default: D.electionsMax,
    doc: 'Election groups limit.',
  }),
  keysMax: intSetting({
    flag: 'keys-max',
    envPrefix,
    unit: 'count',
    min: 1,
    max: 100_000_000,
    default: D.keysMax,
    doc: 'KV keys limit.',
  }),
  idempotencyWindowMs: intSetting({
    flag: 'idempotency-window-ms',
    envPrefix,
    unit: 'ms',
    min: 1000,
    max: 86_400_000,
    default: D.idempotencyWindowMs,
    doc: 'How long (cluster time) idempotency records are kept.',
  }),
  idempotencyRecordsMax: intSetting({
    flag: 'idempotency-records-max',
    envPrefix,
    unit: 'count',
    min: 1,
    max: 100_000_000,
    default: D.idempotencyRecordsMax,
    doc: 'Bound on idempotency records in memory.',
  }),
  snapshotEntries: intSetting({
    flag: 'snapshot-entries',
    envPrefix,
    unit: 'entries',
    min: 1,
    max: 100_000_000,
    default: R.snapshotEntries,
    doc: 'Take a Raft snapshot and compact the log every this many applied entries.',
  }),
  snapshotKeepEntries: intSetting({
    flag: 'snapshot-keep-entries',
    envPrefix,
    unit: 'entries',
    min: 0,
    max: 100_000_000,
    default: R.snapshotKeepEntries,
    doc: 'Log entries kept behind a snapshot so slightly lagging followers catch up without one (0 = none).',
  }),
  restoreFile: textSetting<string>({
    flag: 'restore',
    envPrefix,
    valueName: 'file',
    default: undefined,
    defaultText: '(none)',
    parse: (text) => text,
    doc: 'Seed an empty `--data-dir` of a new cluster from a backup file, then start (see operations.md).',
  }),
  tokenFloor: intSetting({
    flag: 'token-floor',
    envPrefix,
    unit: 'count',
    min: 0,
    max: TOKEN_FLOOR_MAX,
    default: 0,
    doc: 'With `--restore`: every fencing token of the new cluster is above this (0 = default margin).',
  }),
  watchesMax: intSetting({
    flag: 'watches-max',
    envPrefix,
    unit: 'count',
    min: 1,
    max: 1_000_000,
    default: 10_000,
    doc: 'Streaming watches (`GET /v1/watch`) open at once on this node; more get 429.',
  }),
  watchLogEventsMax: intSetting({
    flag: 'watch-log-events-max',
    envPrefix,
    unit: 'count',
    min: 1,
    max: 100_000_000,
    default: 100_000,
    doc: 'Change events the node keeps for watch resumes; an older `fromRevision` gets `compacted`.',
  }),
  watchLogBytesMax: intSetting({
    flag: 'watch-log-bytes-max',
    envPrefix,
    unit: 'bytes',
    min: 1024,
    max: 4 * 1024 * 1024 * 1024,
    default: 64 * 1024 * 1024,
    doc: 'Bound on the JSON bytes of the kept change events (the oldest revisions go first).',
  }),
  watchBufferEventsMax: intSetting({
    flag: 'watch-buffer-events-max',
    envPrefix,
    unit: 'count',
    min: 1,
    max: 100_000_000,
    default: 10_000,
    doc: 'Events that may wait for a watch reader that does not keep up before it gets `overflow`.',
  }),
  watchKeepaliveMs: intSetting({
    flag: 'watch-keepalive-ms',
    envPrefix,
    unit: 'ms',
    min: 10,
    max: 3_600_000,
    default: 15_000,
    doc: 'Interval of keepalive comments on an open watch.',
  }),
  tlsCert: pemFileSetting(
    'tls-cert',
    'HTTP certificate chain (PEM file): serve the API over HTTPS, TLS ≥ 1.2. Needs `--tls-key`.',
  ),
  tlsKey: pemFileSetting('tls-key', 'Private key (PEM file) of `--tls-cert`.'),
  tlsClientCa: pemFileSetting(
    'tls-client-ca',
    "CA (PEM file) that must have signed every client's certificate. Needs `--tls-cert`.",
  ),
  tlsCa: pemFileSetting(
    'tls-ca',
    "CA (PEM file) trusted for the leader's HTTPS when forwarding; default: Node's roots.",
  ),
  peerTlsCert: pemFileSetting(
    'peer-tls-cert',
    'Certificate (PEM file) for mutual TLS on the Raft links. Needs `--peer-tls-key`, `-ca`.',
  ),
  peerTlsKey: pemFileSetting('peer-tls-key', 'Private key (PEM file) of `--peer-tls-cert`.'),
  peerTlsCa: pemFileSetting(
    'peer-tls-ca',
    "CA (PEM file) of the peers' certificates; other peers are refused at the TLS handshake.",
  ),
  auth: switchSetting({
    flag: 'auth',
    envPrefix,
    default: false,
    doc: 'Require `Authorization: Bearer <token>` on every request but /healthz, /readyz and `GET /v1/cluster/members/{id}` (which a starting node asks its peers; docs/security.md). Set it on every node. The first start with auth on creates the `root` token from the `TENURE_ROOT_TOKEN` env var; that variable while auth is off stops the node at start. `--auth` alone means on.',
  }),
  quotaRequestsPerSecond: intSetting({
    flag: 'quota-requests-per-second',
    envPrefix,
    unit: 'count',
    min: 0,
    max: 1_000_000,
    default: 1_000,
    doc: 'With auth: requests per second a token may send to one node unless its quota says otherwise (0 = unlimited; root is never limited).',
  }),
  quotaLeasesMax: intSetting({
    flag: 'quota-leases-max',
    envPrefix,
    unit: 'count',
    min: 0,
    max: 100_000_000,
    default: 10_000,
    doc: 'With auth: live lease grants per token unless its quota says otherwise.',
  }),
  quotaSessionsMax: intSetting({
    flag: 'quota-sessions-max',
    envPrefix,
    unit: 'count',
    min: 0,
    max: 100_000_000,
    default: 1_000,
    doc: 'With auth: live sessions per token unless its quota says otherwise.',
  }),
  quotaWaitersMax: intSetting({
    flag: 'quota-waiters-max',
    envPrefix,
    unit: 'count',
    min: 0,
    max: 100_000_000,
    default: 1_000,
    doc: 'With auth: queued lease and semaphore waiters per token unless its quota says otherwise.',
  }),
  logLevel: choiceSetting({
    flag: 'log-level',
    envPrefix,
    choices: LOG_LEVELS,
    default: 'info',
    doc: 'pino log level.',
  }),
  stateHashRoute: choiceSetting({
    flag: 'state-hash-route',
    envPrefix,
    choices: ['off', 'on'],
    default: 'off',
    doc: 'Serve GET /v1/cluster/state (a hash of the whole replica, for comparing replicas in tests); it reads the whole state, so it is off unless asked for.',
  }),
  accessLog: choiceSetting({
    flag: 'access-log',
    envPrefix,
    choices: ['off', 'on'],
    default: 'off',
    doc: 'Log one line per HTTP request (method, route, status, duration) at info level.',
  }),
};

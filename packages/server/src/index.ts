/**
 * @tenure/server: the HTTP node of Tenure. Public API for tests and embedding:
 * `buildApp(deps)` (never listens), `startNode(config)`, `loadConfig(argv, env)`, the state
 * adapter, change hub, time advancer and config table.
 */
export { buildApp } from './app.js';
export { startNode, type RunningNode, type StartNodeOptions, type StopOptions } from './node.js';
export { CLUSTER_STOP_SIGNAL } from './stop-signals.js';
export {
  loadConfig,
  parsePeers,
  settingsTable,
  ConfigError,
  DEFAULT_LIMITS_CONFIG,
  SETTINGS,
  type ServerConfig,
  type PeerConfig,
  type LimitsConfig,
} from './config.js';
export type { ServerDeps } from './deps.js';
export { ChangeHub, waitForChange } from './change-hub.js';
export { CoordStateAdapter } from './state-adapter.js';
export { TimeAdvancer } from './time-advancer.js';
export {
  HttpForwarder,
  type Forwarder,
  type ForwardRequest,
  type ForwardResponse,
} from './forwarder.js';
export { createMetrics, type ServerMetrics } from './metrics.js';
export { createLogger, createLoggers, type NodeLoggers } from './logger.js';
export { HttpError } from './http-error.js';
export { canonicalJson, requestFingerprint } from './canonical-json.js';
export { localNodes, type LocalNodeSpec } from './cluster/local-nodes.js';
export {
  createCa,
  issueNodeCert,
  writeClusterCertificates,
  type ClusterCertificateFiles,
  type KeyAndCert,
  type NodeCertRequest,
} from './cluster/certificates.js';

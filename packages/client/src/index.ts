/**
 * @tenure/client — TypeScript client of Tenure (packages/client/README.md): TenureClient, Lease and Leadership handles,
 * FenceGuard, typed errors. The `tenure` CLI lives in ./cli (bin `tenure`).
 */
export { TenureClient, newIdempotencyKey } from './client.js';
export type {
  TenureClientOptions,
  AcquireOptions,
  AcquireFields,
  GrantLife,
  GrantCallArgs,
  GrantKind,
  HistoryOptions,
  RevokeOptions,
  SemaphoreOptions,
  SemaphoreFields,
  SessionOptions,
  CampaignOptions,
  KvApi,
  KvWriteOptions,
  MutationOptions,
  ReadOptions,
  ReleaseAnswer,
  WatchOptions,
} from './client.js';
export type { CallOptions } from './transport.js';
export type { ClientTlsOptions, Pem } from './tls.js';
export { normalizeEndpoint } from './transport.js';
export { Lease } from './lease.js';
export type { GrantBinding } from './lease.js';
export { Permit } from './permit.js';
export type { PermitGrant } from './permit.js';
export { Session } from './session.js';
export { Leadership } from './leadership.js';
export type { HeldGrant, HeldGrantEvents, RenewedEvent, EndReason } from './held-grant.js';
export { WatchCompactedError } from './change-watch.js';
export type { ChangeWatchOptions, WatchEvent } from './change-watch.js';
export { FenceGuard } from './fence-guard.js';
export type { FenceGuardOptions } from './fence-guard.js';
export { TenureError, StaleTokenError, isLossCode } from './errors.js';
export type { TenureErrorCode, ClientErrorCode, TenureErrorInit } from './errors.js';
export { systemClock } from './clock.js';
export type { Clock, TimerHandle } from './clock.js';
export type { RetryPolicy } from './backoff.js';
export { DEFAULT_RETRY_POLICY } from './backoff.js';
export type { Logger } from './logger.js';
export type { KvKeyView, ListItems, ListKind, ListPage, ListQuery } from './listing.js';
export { parseDurationMs, formatDurationMs } from './duration.js';
export { processIncarnationId } from './identity.js';
export type {
  ChangeKind,
  ChangeType,
  ClusterMember,
  ClusterView,
  MembersView,
  CampaignAnswer,
  ElectionObserveView,
  FenceCheckResult,
  FenceSpec,
  LeaseWatchView,
  ElectionView,
  ElectionLeader,
  JsonValue,
  KvView,
  LeaseGrant,
  LeaseView,
  ErrorCode,
  HistoryGrant,
  LeaseGrantAnswer,
  LeaseMode,
  RevokeAnswer,
  SemaphoreGrantAnswer,
  SemaphoreView,
  SessionAnswer,
  SessionView,
  SharedLeaseView,
  HolderView,
} from './contract.js';
export type {
  AuthApi,
  AuthCallOptions,
  AuthKind,
  CreatedToken,
  RoleInfo,
  RoleRule,
  TokenInfo,
  TokenQuota,
} from './auth-api.js';

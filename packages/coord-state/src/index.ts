/**
 * @tenure/coord-state — the deterministic coordination state machine Raft replicates
 * (leases, elections, fencing tokens, fenced KV). See README.md for the time model and fencing scheme.
 */
export * from './api.js';
export * from './errors.js';
export * from './results.js';
export { CoordStateMachine } from './state-machine.js';
export {
  encodeEnvelope,
  decodeEnvelope,
  EnvelopeDecodeError,
  EnvelopeEncodeError,
} from './codec.js';
export {
  DEFAULT_LIMITS,
  WAITERS_PER_LEASE_MAX_CEILING,
  resolveLimits,
  type CoordLimitsFull,
} from './limits.js';
export {
  TOKENS_PER_ENTRY,
  RESTORE_INDEX_GAP,
  TOKEN_FLOOR_MAX,
  nextFencingToken,
  restoredIndex,
  tokenIndex,
} from './fencing.js';
export {
  SnapshotFormatError,
  STATE_SNAPSHOT_FORMAT,
  rebaseSnapshot,
  snapshotPosition,
  type SnapshotPosition,
} from './snapshot.js';
export { SNAPSHOT_SLICE_ENTRIES } from './snapshot-slices.js';
export {
  SNAPSHOT_FILE_MAGIC,
  SNAPSHOT_FILE_VERSION,
  SNAPSHOT_FILE_HEADER_BYTES_MAX,
  SnapshotFileError,
  SnapshotFileReader,
  encodeSnapshotFileHeader,
  readSnapshotFile,
  type SnapshotFileHeader,
  type SnapshotFileProblem,
} from './snapshot-file.js';
export { BACKUP_CHECKS, checkBackup, type CheckedBackup } from './backup-check.js';
export type { EndedGrant, GrantEndReason } from './history.js';
export {
  checkEnvelopeShape,
  checkCommandRanges,
  jsonSizeBytes,
  IDEMPOTENCY_KEY_CHARS_MAX,
} from './validate.js';
export { checkGrantBinding } from './validate-primitives.js';
export {
  NAME_RULE,
  NAME_PREFIX_RULE,
  PRINTABLE_RULE,
  NODE_ID_RULE,
  JSON_DEPTH_MAX,
  isName,
  isPrintableId,
  isNodeId,
  isWellFormedString,
  isJsonValue,
  findJsonValueProblem,
  type StringRule,
  type JsonPath,
  type JsonValueProblem,
} from './input-rules.js';
export {
  ADMIN_ROLE,
  AUTH_CHANGE_KEY,
  AUTH_ACTIONS,
  AUTH_KINDS,
  ROOT_TOKEN_NAME,
  TOKENS_MAX,
  ROLES_MAX,
  RULES_PER_ROLE_MAX,
  ROLES_PER_TOKEN_MAX,
  RULE_PREFIX_CHARS_MAX,
  AuthState,
  isAllowed,
  type AuthAction,
  type AuthCommand,
  type AuthKind,
  type AuthNeed,
  type Principal,
  type RoleRule,
  type RoleView,
  type TokenQuota,
  type TokenRecord,
  type TokenView,
} from './auth.js';

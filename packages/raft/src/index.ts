/**
 * @tenure/raft — public entry: the runtime (RaftNode), its plug points (storage, transport) with
 * in-memory and real implementations, typed errors, protocol types and the API contract.
 * The simulator pieces live in the `./testing` entry.
 */
export { RaftNode } from './raft-node.js';
export { driveSlices, joinSlices, type DrivenSlices } from './slice-driver.js';
export {
  RAFT_NODE_DEFAULTS,
  ELECTION_TIMEOUT_HEARTBEATS_MIN,
  raftTimingTicks,
  type RaftNodeOptions,
  type RaftTimingMs,
  type RaftTimingTicks,
} from './raft-node-options.js';
export type { RaftObserver, SnapshotInfo } from './observer.js';
export { NOOP_LOGGER, type Logger, type LogFields } from './logger.js';
export {
  RaftError,
  NotLeaderError,
  TimeoutError,
  StoppedError,
  StorageIdentityError,
  ResourceExhaustedError,
  InvalidArgumentError,
  MembershipChangeError,
  RemovedMemberError,
  type RaftErrorCode,
} from './errors.js';

export type { LogStorage } from './storage/log-storage.js';
export { MemoryLogStorage } from './storage/log-storage.js';
export type { StableStorage } from './storage/stable-storage.js';
export { MemoryStableStorage, EMPTY_HARD_STATE } from './storage/stable-storage.js';
export type { RaftStorage, PersistBatch } from './storage/raft-storage.js';
export { MemoryRaftStorage } from './storage/raft-storage.js';
export {
  LevelRaftStorage,
  storedClusterId,
  type LevelStorageOptions,
} from './storage/level-storage.js';

export type { Transport } from './transport/transport.js';
export { MemoryNetwork, MemoryTransport } from './transport/memory-transport.js';
export {
  TcpTransport,
  type TcpTransportOptions,
  type TcpTransportStats,
} from './transport/tcp-transport.js';
export { TLS_MIN_VERSION, type Pem, type PeerTlsOptions } from './transport/peer-tls.js';

export { SeededRandom } from './random.js';
// The protocol types, by name: the core's test-only UnsafeVariants stay out of the public entry
// (they are in `./testing`).
export {
  asTerm,
  asIndex,
  type Term,
  type LogIndex,
  type NodeId,
  type EntryType,
  type Entry,
  type HardState,
  type SnapshotMeta,
  type Snapshot,
  type Role,
  type PreVoteMsg,
  type PreVoteResponseMsg,
  type RequestVoteMsg,
  type RequestVoteResponseMsg,
  type AppendEntriesMsg,
  type AppendEntriesResponseMsg,
  type TimeoutNowMsg,
  type InstallSnapshotMsg,
  type InstallSnapshotResponseMsg,
  type Message,
  type ReadState,
  type ReadFailure,
  type SoftState,
  type Ready,
  type ProposeResult,
  type Clock,
  type Random,
  type CoreConfig,
  type CoreInitialState,
  type CoreWarning,
} from './core/types.js';
export {
  decodeMembership,
  encodeMembership,
  type ConfigurationState,
  type Membership,
  type MemberAddress,
  type MemberAddresses,
  type MembershipChange,
  type MembershipChangeResult,
  type MembershipRefusal,
} from './core/membership.js';
export type { StateMachine, AppliedEntry } from './state-machine.js';
export type {
  RaftNodeApi,
  Leadership,
  RaftStatus,
  MemberStatus,
  PeerInfo,
  MembershipRequest,
  RequestOptions,
  Applied,
} from './api.js';

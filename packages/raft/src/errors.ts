/**
 * Operating errors of the Raft runtime, each with a stable `code` (docs/api.md maps them to HTTP:
 * `not_leader` → forward or 503 `no_leader`, `timeout` → 504, `resource_exhausted` → 429).
 * Bugs are assertions (node:assert), never these.
 */
import type { NodeId } from './core/types.js';
import type { MembershipRefusal } from './core/membership.js';

/** Stable codes of every error this package throws on purpose. */
export type RaftErrorCode =
  | 'not_leader'
  | 'timeout'
  | 'stopped'
  | 'storage_identity'
  | 'resource_exhausted'
  | 'invalid_argument'
  | 'membership_refused'
  | 'removed';

/** Base class: `code` is stable, `message` is for humans. */
export abstract class RaftError extends Error {
  abstract readonly code: RaftErrorCode;
}

/**
 * This node is not the leader (or is handing leadership over). `leaderHint` is the leader this
 * node believes in, or null when none is known. For `propose` it means the command was NOT and
 * will NOT be applied at the index it was given (an entry of another term took that index, or it
 * never entered the log), so retrying elsewhere is safe.
 */
export class NotLeaderError extends RaftError {
  readonly code = 'not_leader' as const;
  /**
   * True when this node handed leadership to `leaderHint` for this very request before doing
   * anything for it (a leader asked to remove itself, docs/operations.md): nothing was proposed,
   * so sending the request on to the new leader is safe even for a request already forwarded once.
   */
  readonly handedOver: boolean;
  constructor(
    readonly leaderHint: NodeId | null,
    message = leaderHint === null
      ? 'not the leader; no leader known'
      : `not the leader; leader is ${leaderHint}`,
    handedOver = false,
  ) {
    super(message);
    this.name = 'NotLeaderError';
    this.handedOver = handedOver;
  }
}

/**
 * The deadline (`timeoutMs`) passed or the caller aborted. For `propose` the outcome is UNKNOWN:
 * the entry may still commit; retry only with an idempotency key (docs/api.md 504 `timeout`).
 */
export class TimeoutError extends RaftError {
  readonly code = 'timeout' as const;
  constructor(message = 'request timed out; outcome unknown', options?: ErrorOptions) {
    super(message, options);
    this.name = 'TimeoutError';
  }
}

/**
 * The node was stopped (or failed fatally) before the request started, or while a read or a
 * transfer was pending. A proposal pending at stop rejects with TimeoutError instead: its entry
 * may already be on other nodes and commit without this one.
 */
export class StoppedError extends RaftError {
  readonly code = 'stopped' as const;
  constructor(message = 'raft node is stopped', options?: ErrorOptions) {
    super(message, options);
    this.name = 'StoppedError';
  }
}

/**
 * The data directory belongs to another cluster or node. Refusing to start is the only safe
 * answer (mixing logs breaks Raft safety); the message says which directory and both identities
 * so an operator can fix the configuration instead of watching a crash loop.
 */
export class StorageIdentityError extends RaftError {
  readonly code = 'storage_identity' as const;
  constructor(
    readonly dataDir: string,
    readonly expected: { readonly clusterId: string; readonly nodeId: NodeId },
    readonly found: { readonly clusterId: string; readonly nodeId: NodeId },
  ) {
    super(
      `data directory ${dataDir} belongs to cluster "${found.clusterId}" node "${found.nodeId}", ` +
        `but this process is configured as cluster "${expected.clusterId}" node "${expected.nodeId}"; ` +
        "point dataDir at this node's own directory (a node whose data is lost rejoins empty with " +
        '--join and is then promoted: docs/operations.md)',
    );
    this.name = 'StorageIdentityError';
  }
}

/** A configured bound (`…Max`) is reached, e.g. too many proposals pending; retry later. */
export class ResourceExhaustedError extends RaftError {
  readonly code = 'resource_exhausted' as const;
  constructor(message: string) {
    super(message);
    this.name = 'ResourceExhaustedError';
  }
}

/** A caller passed a bad option or argument; `field` names it (docs/api.md 400 `invalid_argument`). */
export class InvalidArgumentError extends RaftError {
  readonly code = 'invalid_argument' as const;
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'InvalidArgumentError';
  }
}

/**
 * The leader refused a membership change; `reason` is the core's refusal code (core/membership.ts:
 * reconfiguration_in_progress, not_caught_up, already_member, not_a_learner, not_a_member,
 * last_voter, leader_not_ready). docs/api.md maps them to HTTP errors.
 */
export class MembershipChangeError extends RaftError {
  readonly code = 'membership_refused' as const;
  constructor(
    readonly reason: Exclude<MembershipRefusal, 'not_leader' | 'transferring'>,
    message: string,
  ) {
    super(message);
    this.name = 'MembershipChangeError';
  }
}

/**
 * This node's data belongs to a member that was removed from the cluster (docs/operations.md): it
 * must not take part again under this id with this data. The way back: wipe the data directory,
 * start with `--join`, then promote.
 */
export class RemovedMemberError extends RaftError {
  readonly code = 'removed' as const;
  constructor(message: string) {
    super(message);
    this.name = 'RemovedMemberError';
  }
}

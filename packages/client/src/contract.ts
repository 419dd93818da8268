/**
 * The one place the client imports from `@tenure/coord-state`: the error-code catalog and the JSON
 * shapes shared with the server, whose single source is coord-state's dependency-free `errors.ts`
 * and `api.ts`. Only this file may import them: the published package carries their compiled copy in
 * dist/wire/ (scripts/pack-wire.mjs, README "Packaging"), so the client needs no other @tenure
 * package at run time. Wire shapes coord-state does not cover (cluster view, watch/observe answers)
 * are declared here, to docs/api.md.
 */
export { ERROR_HTTP_STATUS } from '@tenure/coord-state';
/**
 * The backup file checks (`tenure snapshot save|inspect`): coord-state's snapshot-file.ts, and
 * backup-check.ts, the checks `tenure-server --restore` makes of a file.
 */
export {
  BACKUP_CHECKS,
  checkBackup,
  SnapshotFileReader,
  type SnapshotFileHeader,
} from '@tenure/coord-state';
export type {
  ChangeEvent,
  ChangeKind,
  ChangeType,
  ErrorCode,
  ElectionLeader,
  ElectionView,
  FencingToken,
  JsonValue,
  KvView,
  LeaseGrant,
  LeaseMode,
  LeaseView,
  Revision,
  SharedLeaseView,
  HolderView,
  SemaphoreView,
  SessionView,
} from '@tenure/coord-state';
import type { ElectionLeader, FencingToken, JsonValue, LeaseMode } from '@tenure/coord-state';

/**
 * One member of `GET /v1/cluster` and `/v1/cluster/members` (docs/api.md, Cluster and operations):
 * addresses are `host:port`; the optional fields are the leader's view, present only in an answer
 * of the leader.
 */
export interface ClusterMember {
  readonly id: string;
  readonly role: 'leader' | 'follower' | 'candidate' | 'learner';
  readonly httpAddress: string;
  readonly raftAddress: string;
  /** Leader's view: the last log index the member is known to hold. */
  readonly matchIndex?: number;
  /** Leader's view: ms since the leader last heard from the member. */
  readonly lastContactMs?: number;
  /** Leader's view: the leader heard from the member within an election timeout. */
  readonly reachable?: boolean;
  /** Leader's view: log entries the member is behind the leader's last index. */
  readonly lagEntries?: number;
}

/** `GET /v1/cluster` answer (docs/api.md): `id` is the answering node, `leader` its known leader id or null. */
export interface ClusterView {
  readonly id: string;
  readonly leader: string | null;
  readonly term: number;
  readonly commitIndex: number;
  readonly appliedIndex: number;
  readonly members: readonly ClusterMember[];
}

/**
 * `GET /v1/cluster/members` answer, also the answer of add / promote / remove (docs/api.md): the
 * members in the leader's view (voters, then learners) and the log index of that membership.
 */
export interface MembersView {
  readonly members: readonly ClusterMember[];
  readonly configIndex: number;
}

/**
 * `GET /v1/leases/{name}/watch` answer (docs/api.md): the current grant (`holder`/`fencingToken` null when
 * the lease is gone) and whether it changed since `afterToken` before `timeoutMs` ran out.
 */
export interface LeaseWatchView {
  readonly name: string;
  readonly holder: string | null;
  readonly fencingToken: FencingToken | null;
  readonly ttlMs?: number;
  readonly remainingMs?: number;
  readonly changed: boolean;
}

/** `GET /v1/elections/{group}/observe` answer: an election view plus `changed` (docs/api.md long-polls). */
export interface ElectionObserveView {
  readonly group: string;
  readonly leader: ElectionLeader | null;
  readonly candidates: readonly { readonly candidate: string; readonly value: JsonValue }[];
  readonly revision: number;
  readonly changed: boolean;
}

/** `POST /v1/elections/{group}/campaign` and `/renew` answer (docs/api.md). */
export interface CampaignAnswer {
  readonly group: string;
  readonly candidate: string;
  readonly elected: boolean;
  readonly fencingToken?: FencingToken;
  readonly leader: ElectionLeader | null;
}

/** `POST /v1/fence/check` answer (docs/api.md): `current` is null for a resource with no live grant. */
export interface FenceCheckResult {
  readonly valid: boolean;
  readonly current: FencingToken | null;
}

/** Names the fencing resource of a fenced write or check: a lease, an election group or a semaphore (docs/api.md). */
export type FenceSpec =
  | { readonly lease: string; readonly fencingToken: FencingToken }
  | { readonly election: string; readonly fencingToken: FencingToken }
  | { readonly semaphore: string; readonly fencingToken: FencingToken };

/**
 * A lease grant as acquire and renew answer it (docs/api.md): `ttlMs` null and `session` set for a
 * session-bound grant, `mode: 'shared'` for a shared one.
 */
export interface LeaseGrantAnswer {
  readonly name: string;
  readonly holder: string;
  readonly fencingToken: FencingToken;
  readonly ttlMs: number | null;
  readonly session?: string;
  readonly mode?: LeaseMode;
}

/** A semaphore permit as acquire and renew answer it (docs/api.md, Semaphores). */
export interface SemaphoreGrantAnswer {
  readonly name: string;
  readonly holder: string;
  readonly fencingToken: FencingToken;
  readonly limit: number;
  readonly ttlMs: number | null;
  readonly session?: string;
}

/** `POST /v1/sessions` and keepalive answer (docs/api.md, Sessions). */
export interface SessionAnswer {
  readonly sessionId: string;
  readonly ttlMs: number;
}

/**
 * One grant of a holder history as the API answers it (docs/api.md, Holder history): `holder` for
 * leases and semaphores, `candidate` for elections; times in cluster ms, end fields null while live.
 */
export interface HistoryGrant {
  readonly holder?: string;
  readonly candidate?: string;
  readonly fencingToken: FencingToken;
  readonly mode?: LeaseMode;
  readonly session?: string;
  readonly grantedAtMs: number;
  readonly endedAtMs: number | null;
  readonly endReason:
    'released' | 'expired' | 'revoked' | 'max_hold' | 'session_ended' | 'resigned' | null;
}

/** Revoke answer (docs/api.md, Operator revoke): the tokens ended, oldest first. */
export interface RevokeAnswer {
  readonly name?: string;
  readonly group?: string;
  readonly revoked: readonly FencingToken[];
}

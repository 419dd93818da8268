/**
 * Result value shapes of the commands that `api.ts` does not name (additions to the contract).
 * Every `ok` result of `apply` carries one of these (or a shape from api.ts):
 *
 * | command            | value                                   |
 * |--------------------|-----------------------------------------|
 * | lease.acquire      | `LeaseAcquireValue` (granted or queued) |
 * | lease.renew        | `LeaseGrant`                            |
 * | lease.release      | `LeaseReleaseValue`                     |
 * | lease.cancelWait   | `CancelWaitValue`                       |
 * | election.campaign  | `CampaignValue`                         |
 * | election.renew     | `CampaignValue`                         |
 * | election.resign    | `ResignValue`                           |
 * | election.proclaim  | `ProclaimValue`                         |
 * | kv.put             | `KvPutValue`                            |
 * | kv.delete          | `KvDeleteValue`                         |
 * | lease.revoke, semaphore.revoke, election.revoke | `RevokeValue` |
 * | session.create, session.keepalive | `SessionValue`           |
 * | session.end        | `SessionEndValue`                       |
 * | semaphore.acquire  | `SemaphoreAcquireValue`                 |
 * | semaphore.renew    | `SemaphoreGrant`                        |
 * | semaphore.release  | `SemaphoreReleaseValue`                 |
 * | semaphore.cancelWait | `CancelWaitValue`                     |
 * | time.advance, null | `null`                                  |
 */
import type { ElectionLeader, FencingToken, Revision, SessionId } from './api.js';

/** docs/api.md release answer. */
export interface LeaseReleaseValue {
  readonly name: string;
  readonly released: true;
}
/** `cancelled` is false when the waiter was already granted, timed out, cancelled or unknown. */
export interface CancelWaitValue {
  readonly name: string;
  readonly waiterId: number;
  readonly cancelled: boolean;
}
/** docs/api.md resign answer. */
export interface ResignValue {
  readonly group: string;
  readonly resigned: true;
}
/** docs/api.md proclaim answer: the leader with its new value. */
export interface ProclaimValue {
  readonly group: string;
  readonly leader: ElectionLeader;
}
/** docs/api.md KV put answer; `revision` is the entry's log index. */
export interface KvPutValue {
  readonly key: string;
  readonly revision: Revision;
}
/** docs/api.md KV delete answer. */
export interface KvDeleteValue {
  readonly key: string;
  readonly deleted: true;
}

/** Revoke answer (docs/api.md operator revoke): the tokens it ended, oldest first; [] when nothing was live. */
export type RevokeValue =
  | { readonly name: string; readonly revoked: readonly FencingToken[] }
  | { readonly group: string; readonly revoked: readonly FencingToken[] };

/** `session.create` / `session.keepalive` answer. */
export interface SessionValue {
  readonly sessionId: SessionId;
  readonly ttlMs: number;
}
/** `session.end` answer. */
export interface SessionEndValue {
  readonly sessionId: SessionId;
  readonly ended: true;
}

/** A semaphore permit (`semaphore.acquire` granted, `semaphore.renew`). */
export interface SemaphoreGrant {
  readonly name: string;
  readonly holder: string;
  readonly fencingToken: FencingToken;
  readonly limit: number;
  /** null when session-bound. */
  readonly ttlMs: number | null;
  /** Present when session-bound. */
  readonly session?: SessionId;
}

/** `semaphore.acquire` answer: a permit, or a FIFO place in the queue (waitMs > 0). */
export type SemaphoreAcquireValue =
  | ({ readonly kind: 'granted' } & SemaphoreGrant)
  | {
      readonly kind: 'queued';
      readonly name: string;
      readonly holder: string;
      readonly waiterId: number;
      readonly deadlineMs: number;
    };

/** `semaphore.release` answer. */
export interface SemaphoreReleaseValue {
  readonly name: string;
  readonly released: true;
}

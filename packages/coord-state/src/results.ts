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
 * | time.advance, null | `null`                                  |
 */
import type { ElectionLeader, Revision } from './api.js';

/** SPEC §3 release answer. */
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
/** SPEC §3 resign answer. */
export interface ResignValue {
  readonly group: string;
  readonly resigned: true;
}
/** SPEC §3 proclaim answer: the leader with its new value. */
export interface ProclaimValue {
  readonly group: string;
  readonly leader: ElectionLeader;
}
/** SPEC §3 KV put answer; `revision` is the entry's log index. */
export interface KvPutValue {
  readonly key: string;
  readonly revision: Revision;
}
/** SPEC §3 KV delete answer. */
export interface KvDeleteValue {
  readonly key: string;
  readonly deleted: true;
}

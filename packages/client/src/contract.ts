/**
 * The one place the client imports from `@tenure/coord-state`: the SPEC §3 error catalog and the
 * result shapes shared with the server (STYLE: "client imports the error-code table and result
 * types from coord-state, nothing else of ours"). Wire shapes the catalog does not cover
 * (cluster view, watch/observe answers) are declared here, to SPEC §3.
 */
// TEMPORARY mirror of @tenure/coord-state errors.ts / api.ts: that package's index does not export
// them yet. Replace with `export { ERROR_HTTP_STATUS } from '@tenure/coord-state'` + type re-exports.
export const ERROR_HTTP_STATUS = {
  invalid_argument: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  held: 409,
  not_holder: 409,
  lease_expired: 409,
  stale_token: 409,
  revision_mismatch: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  resource_exhausted: 429,
  no_leader: 503,
  timeout: 504,
} as const;
export type ErrorCode = keyof typeof ERROR_HTTP_STATUS;
export type FencingToken = number;
export type Revision = number;
export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };
export interface LeaseGrant {
  readonly name: string;
  readonly holder: string;
  readonly fencingToken: FencingToken;
  readonly ttlMs: number;
}
export interface LeaseView extends LeaseGrant {
  readonly remainingMs: number;
}
export interface ElectionLeader {
  readonly candidate: string;
  readonly value: JsonValue;
  readonly fencingToken: FencingToken;
}
export interface ElectionView {
  readonly group: string;
  readonly leader: ElectionLeader | null;
  readonly candidates: readonly { readonly candidate: string; readonly value: JsonValue }[];
  readonly revision: number;
}
export interface KvView {
  readonly key: string;
  readonly value: JsonValue;
  readonly revision: Revision;
}

/** One member of `GET /v1/cluster` (SPEC §3 "Details"): addresses are `host:port`. */
export interface ClusterMember {
  readonly id: string;
  readonly role: 'leader' | 'follower' | 'candidate' | 'learner';
  readonly httpAddress: string;
  readonly raftAddress: string;
  readonly matchIndex?: number;
  readonly lastContactMs?: number;
}

/** `GET /v1/cluster` answer (SPEC §3): `id` is the answering node, `leader` its known leader id or null. */
export interface ClusterView {
  readonly id: string;
  readonly leader: string | null;
  readonly term: number;
  readonly commitIndex: number;
  readonly appliedIndex: number;
  readonly members: readonly ClusterMember[];
}

/**
 * `GET /v1/leases/{name}/watch` answer (SPEC §3): the current grant (`holder`/`fencingToken` null when
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

/** `GET /v1/elections/{group}/observe` answer: an election view plus `changed` (SPEC §3 long-polls). */
export interface ElectionObserveView {
  readonly group: string;
  readonly leader: ElectionLeader | null;
  readonly candidates: readonly { readonly candidate: string; readonly value: JsonValue }[];
  readonly revision: number;
  readonly changed: boolean;
}

/** `POST /v1/elections/{group}/campaign` and `/renew` answer (SPEC §3). */
export interface CampaignAnswer {
  readonly group: string;
  readonly candidate: string;
  readonly elected: boolean;
  readonly fencingToken?: FencingToken;
  readonly leader: ElectionLeader | null;
}

/** `POST /v1/fence/check` answer (SPEC §3): `current` is null for a resource with no live grant. */
export interface FenceCheckResult {
  readonly valid: boolean;
  readonly current: FencingToken | null;
}

/** Names the fencing resource of a fenced write or check: a lease or an election group (SPEC §3). */
export type FenceSpec =
  | { readonly lease: string; readonly fencingToken: FencingToken }
  | { readonly election: string; readonly fencingToken: FencingToken };

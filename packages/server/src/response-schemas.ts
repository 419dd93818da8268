/**
 * Response schemas (TypeBox) of every route, successes and errors (docs/api.md). They document the
 * API (OpenAPI at /docs/json) and drive Fastify's serializer, which writes only the properties a
 * schema names — so every object here is open (`additionalProperties: true`): a property a handler
 * adds and a schema forgets is still sent, never silently dropped. Nullable fields use a type list
 * (`["integer", "null"]`) rather than a union, so the serializer keeps its fast path.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ERROR_HTTP_STATUS, type ErrorCode } from '@tenure/coord-state';

const open = { additionalProperties: true } as const;

/** `schema` or null (a JSON-Schema type list; OpenAPI 3.1). */
function nullable<T extends TSchema & { type: string }>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] });
}

const int = (description: string) => Type.Integer({ description });
const str = (description: string) => Type.String({ description });
const jsonValue = (description: string) => Type.Unknown({ description });

const sessionOf = (what: string) =>
  Type.Optional(str(`session id keeping the ${what} alive (session-bound only)`));
const mode = Type.Optional(
  Type.Unsafe<'exclusive' | 'shared'>({
    type: 'string',
    enum: ['exclusive', 'shared'],
    description: 'lease mode (present as shared for a shared grant)',
  }),
);

export const grant = Type.Object(
  {
    name: str('lease name'),
    holder: str('holder id'),
    fencingToken: int('fencing token of this grant; higher for every new grant of the name'),
    ttlMs: nullable(
      int('effective time to live of the grant, ms (capped by maxHoldMs); null when session-bound'),
    ),
    session: sessionOf('grant'),
    mode,
  },
  { ...open, description: 'the grant' },
);
export const leaseView = Type.Object(
  {
    name: str('lease name'),
    holder: str('holder id'),
    fencingToken: int('fencing token'),
    ttlMs: nullable(int('time to live, ms; null when session-bound')),
    remainingMs: int("cluster time left before expiry, ms (session-bound: the session's)"),
    session: sessionOf('grant'),
  },
  { ...open, description: 'the live grant' },
);
const holderView = Type.Object(
  {
    holder: str('holder id'),
    fencingToken: int('fencing token of this grant'),
    remainingMs: int("cluster time left, ms (session-bound: the session's)"),
    session: sessionOf('grant'),
  },
  open,
);
/** `GET /v1/leases/{name}` of a name held in shared mode. */
export const sharedLeaseView = Type.Object(
  {
    name: str('lease name'),
    mode: Type.Literal('shared'),
    holders: Type.Array(holderView, { description: 'live shared grants, oldest first' }),
  },
  { ...open, description: 'the live shared grants' },
);
/** `GET /v1/leases/{name}`: the exclusive grant, or the shared grants. */
export const leaseState = Type.Union([leaseView, sharedLeaseView], {
  description: 'the exclusive grant, or the live shared grants (mode: shared)',
});
export const released = Type.Object(
  { name: str('lease name'), released: Type.Literal(true) },
  { ...open, description: 'released' },
);
const nextCursor = nullable(str('pass as `after` to get the next page; null on the last page'));
export const leaseList = Type.Object(
  { leases: Type.Array(leaseView, { description: 'live leases in name order' }), nextCursor },
  { ...open, description: 'live leases' },
);
export const leaseWatch = Type.Object(
  {
    name: str('lease name'),
    holder: nullable(str('holder id, null when not held')),
    fencingToken: nullable(int('fencing token, null when not held')),
    ttlMs: Type.Optional(int('time to live, ms (when held)')),
    remainingMs: Type.Optional(int('cluster time left, ms (when held)')),
    changed: Type.Boolean({ description: 'false when timeoutMs passed with no change' }),
  },
  { ...open, description: 'the grant now (holder and token null when not held)' },
);

const leader = Type.Object(
  {
    candidate: str('candidate id of the leader'),
    value: jsonValue('value announced by the leader'),
    fencingToken: int('leader token'),
  },
  open,
);
const nullableLeader = Type.Unsafe<Static<typeof leader> | null>({
  ...leader,
  type: ['object', 'null'],
  description: 'the leader, null when there is none',
});
export const campaign = Type.Object(
  {
    group: str('election group'),
    candidate: str('candidate id'),
    elected: Type.Boolean({ description: 'true when this candidate leads' }),
    fencingToken: Type.Optional(int('leader token (when elected)')),
    leader: nullableLeader,
    session: sessionOf('candidacy'),
  },
  { ...open, description: 'the candidacy and the leader' },
);
export const resigned = Type.Object(
  { group: str('election group'), resigned: Type.Literal(true) },
  { ...open, description: 'resigned' },
);
export const proclaimed = Type.Object(
  { group: str('election group'), leader },
  { ...open, description: 'the leader with its new value' },
);
const electionFields = {
  group: str('election group'),
  leader: nullableLeader,
  candidates: Type.Array(
    Type.Object({ candidate: str('candidate id'), value: jsonValue('its value') }, open),
    { description: 'live candidates in campaign order' },
  ),
  revision: int('increases on every change of leader or value; 0 for a group never used'),
};
export const electionView = Type.Object(electionFields, { ...open, description: 'the election' });
export const electionList = Type.Object(
  {
    elections: Type.Array(electionView, { description: 'groups with candidates, in group order' }),
    nextCursor,
  },
  { ...open, description: 'election groups' },
);
export const electionObserve = Type.Object(
  {
    ...electionFields,
    changed: Type.Boolean({ description: 'false when timeoutMs passed with no change' }),
  },
  { ...open, description: 'the election now' },
);

export const semaphoreGrant = Type.Object(
  {
    name: str('semaphore name'),
    holder: str('holder id'),
    fencingToken: int('fencing token of this permit; higher for every new permit of the name'),
    limit: int('most live permits of the name'),
    ttlMs: nullable(int('time to live of the permit, ms; null when session-bound')),
    session: sessionOf('permit'),
  },
  { ...open, description: 'the permit' },
);
export const semaphoreReleased = Type.Object(
  { name: str('semaphore name'), released: Type.Literal(true) },
  { ...open, description: 'released' },
);
export const semaphoreView = Type.Object(
  {
    name: str('semaphore name'),
    limit: int('most live permits'),
    holders: Type.Array(holderView, { description: 'live permits, oldest first' }),
    waiters: int('queued acquires'),
  },
  { ...open, description: 'the semaphore' },
);

export const session = Type.Object(
  { sessionId: str('session id'), ttlMs: int('time to live of the session, ms') },
  { ...open, description: 'the session' },
);
const heldName = Type.Object(
  { name: str('lease or semaphore name'), fencingToken: int('fencing token') },
  open,
);
export const sessionView = Type.Object(
  {
    sessionId: str('session id'),
    name: nullable(str('label given at create, null when none')),
    ttlMs: int('time to live, ms'),
    remainingMs: int('cluster time left before the session expires, ms'),
    leases: Type.Array(heldName, { description: 'lease grants bound to the session, by name' }),
    semaphores: Type.Array(heldName, { description: 'permits bound to the session, by name' }),
    candidacies: Type.Array(Type.Object({ group: str('election group') }, open), {
      description: 'candidacies bound to the session, by group',
    }),
  },
  { ...open, description: 'the live session' },
);
export const sessionEnded = Type.Object(
  { sessionId: str('session id'), ended: Type.Literal(true) },
  { ...open, description: 'ended' },
);

const reason = Type.Unsafe<string | null>({
  type: ['string', 'null'],
  enum: ['released', 'expired', 'revoked', 'max_hold', 'session_ended', 'resigned', null],
  description: 'why the grant ended; null while live',
});
const historyEntry = Type.Object(
  {
    holder: Type.Optional(str('holder id (leases, semaphores)')),
    candidate: Type.Optional(str('candidate id (elections)')),
    fencingToken: int('fencing token of the grant'),
    mode,
    session: sessionOf('grant'),
    grantedAtMs: int('cluster time of the grant, ms'),
    endedAtMs: nullable(int('cluster time the grant ended, ms; null while live')),
    endReason: reason,
  },
  open,
);
/** Holder history of a lease or semaphore (`name`) or election (`group`). */
export const history = Type.Object(
  {
    name: Type.Optional(str('lease or semaphore name')),
    group: Type.Optional(str('election group')),
    grants: Type.Array(historyEntry, { description: 'grants, newest first' }),
  },
  { ...open, description: 'holder history' },
);
export const revoked = Type.Object(
  {
    name: Type.Optional(str('lease or semaphore name')),
    group: Type.Optional(str('election group')),
    revoked: Type.Array(Type.Integer(), {
      description: 'fencing tokens of the grants ended, oldest first',
    }),
  },
  { ...open, description: 'the grants revoked' },
);

export const fenceCheck = Type.Object(
  {
    valid: Type.Boolean({ description: 'true when the token is the current one' }),
    current: nullable(int('current token, null when never granted or not held')),
  },
  { ...open, description: 'whether the token is current' },
);
export const kvPut = Type.Object(
  { key: str('KV key'), revision: int('log index of this write') },
  { ...open, description: 'written' },
);
export const kvEntry = Type.Object(
  {
    key: str('KV key'),
    value: jsonValue('stored value'),
    revision: int('log index of the last write'),
  },
  { ...open, description: 'the entry' },
);
export const kvList = Type.Object(
  {
    keys: Type.Array(
      Type.Object({ key: str('KV key'), revision: int('log index of the last write') }, open),
      { description: 'keys in order, without their values' },
    ),
    nextCursor,
  },
  { ...open, description: 'KV keys' },
);
export const kvDeleted = Type.Object(
  { key: str('KV key'), deleted: Type.Literal(true) },
  { ...open, description: 'deleted' },
);

const member = Type.Object(
  {
    id: str('node id'),
    role: Type.Unsafe<'leader' | 'follower' | 'candidate' | 'learner'>({
      type: 'string',
      enum: ['leader', 'follower', 'candidate', 'learner'],
    }),
    httpAddress: str('host:port of the HTTP API'),
    raftAddress: str('host:port of the Raft transport'),
    matchIndex: Type.Optional(int('highest log index known replicated (leader view)')),
    lastContactMs: Type.Optional(int('ms since the leader last heard from it')),
    reachable: Type.Optional(
      Type.Boolean({
        description: 'leader view: the leader heard from it within an election timeout',
      }),
    ),
    lagEntries: Type.Optional(int("leader view: entries its log is behind the leader's")),
  },
  open,
);
export const cluster = Type.Object(
  {
    id: str('this node'),
    leader: nullable(str('leader id, null when none is known')),
    term: int('Raft term'),
    commitIndex: int('Raft commit index'),
    appliedIndex: int('applied index of this node'),
    clusterTimeMs: int('cluster time, ms'),
    members: Type.Array(member),
  },
  { ...open, description: "this node's view of the cluster" },
);
export const clusterState = Type.Object(
  {
    id: str('this node'),
    appliedIndex: int('applied index the hash is of'),
    stateHash: str('sha256 hex of the deterministic state snapshot'),
  },
  { ...open, description: 'the replica state hash' },
);
export const transferred = Type.Object(
  {
    from: str('the node that answered'),
    leader: nullable(str('leader after the transfer')),
    term: int('Raft term'),
  },
  { ...open, description: 'the leader after the transfer' },
);
export const healthz = Type.Object(
  { status: Type.Literal('ok'), id: str('this node') },
  { ...open, description: 'alive' },
);
export const readyz = Type.Object(
  {
    status: Type.Literal('ready'),
    id: str('this node'),
    leader: str('leader id'),
    term: int('Raft term'),
    commitIndex: int('Raft commit index'),
    appliedIndex: int('applied index: at least the commit index heard --ready-lag-ms ago'),
  },
  { ...open, description: 'ready' },
);
export const metricsText = Type.String({ description: 'Prometheus text exposition format' });

/** HTTP statuses an error can have: those of the catalog. */
export type ErrorStatus = (typeof ERROR_HTTP_STATUS)[ErrorCode];

/** Error statuses of a write with a JSON body. */
export const WRITE_ERRORS = [400, 401, 403, 409, 413, 415, 422, 429, 503, 504] as const;
/** Error statuses of a linearizable read (a query string only). */
export const READ_ERRORS = [400, 401, 403, 429, 503, 504] as const;

/** Catalog codes with `status`, in catalog order. */
function codesOf(status: ErrorStatus): ErrorCode[] {
  return (Object.keys(ERROR_HTTP_STATUS) as ErrorCode[]).filter(
    (c) => ERROR_HTTP_STATUS[c] === status,
  );
}

/** Detail fields errors carry beside code and message (typed loosely: they are documentation). */
const ERROR_DETAILS = {
  field: 'the offending input, e.g. body.ttlMs, query.limit, params.name, header Idempotency-Key',
  holder: 'held: the current holder (null during lock-delay)',
  lockDelayRemainingMs: 'held: ms of lock-delay left',
  current: 'stale_token: the current fencing token',
  revision: "revision_mismatch: the key's current revision",
  sizeBytes: 'payload_too_large: size of the value, bytes',
  sizeBytesMax: 'payload_too_large: the limit, bytes',
} as const;

/** The error body `{"error": {"code", "message", ...details}}` for `status`. */
export function errorBody(status: ErrorStatus) {
  const codes = codesOf(status);
  const details = Object.fromEntries(
    Object.entries(ERROR_DETAILS).map(([k, d]) => [
      k,
      Type.Optional(Type.Unknown({ description: d })),
    ]),
  );
  return Type.Object(
    {
      error: Type.Object(
        {
          code: Type.Unsafe<ErrorCode>({ type: 'string', enum: codes }),
          message: str('what went wrong, naming the field or cause'),
          ...details,
        },
        open,
      ),
    },
    { ...open, description: `error: ${codes.join(', ')}` },
  );
}

/** Error schemas by status for `statuses` (plus 500 `internal`, which any route may answer). */
export function errorResponses<const S extends readonly ErrorStatus[]>(statuses: S) {
  const out: Partial<Record<ErrorStatus, ReturnType<typeof errorBody>>> = {};
  for (const s of [...statuses, 500 as const]) out[s] = errorBody(s);
  return out as Record<S[number] | 500, ReturnType<typeof errorBody>>;
}

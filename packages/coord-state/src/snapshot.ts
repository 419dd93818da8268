/**
 * Snapshot encoding of the whole replicated state (Raft §7 log compaction / InstallSnapshot).
 * Deterministic: the same state gives the same bytes on every replica — maps keyed by name are
 * written sorted; maps whose order means age (idempotency, waiter outcomes, history, retired
 * groups) are written oldest first, which is itself a function of the applied log. Due-queue
 * tie-breaks (`seq`) are saved so a restored replica expires things in the same order.
 */
import assert from 'node:assert';
import type { CommandResult, JsonValue } from './api.js';
import { authRows, loadAuth, type RoleView, type TokenRecord } from './auth.js';
import { makePackr } from './codec.js';
import {
  SnapshotFormatError,
  STATE_SNAPSHOT_FORMAT,
  unpackSnapshot,
  type SnapshotHead,
} from './snapshot-position.js';
import { recountOwners } from './owner-recount.js';
import { Core, type IdempotencyRecord, type WaiterOutcomeRecord } from './core.js';
import type { EndedGrant } from './history.js';
import type { Windowed } from './windowed-map.js';
import type { CoordLimitsFull } from './limits.js';
import type {
  Candidacy,
  ElectionRecord,
  Grant,
  KvRecord,
  LeaseRecord,
  LockDelayQueue,
  Permit,
  SemaphoreRecord,
  SemWaiter,
  SessionRecord,
  Waiter,
} from './model.js';

const packr = makePackr();
export {
  SnapshotFormatError,
  snapshotPosition,
  STATE_SNAPSHOT_FORMAT,
  type SnapshotPosition,
} from './snapshot-position.js';
const FORMAT = STATE_SNAPSHOT_FORMAT;

type GrantRow = [
  holder: string,
  fencingToken: number,
  grantedAtMs: number,
  ttlMsRequested: number,
  ttlMs: number,
  renewedAtMs: number,
  maxHoldUntilMs: number | null,
  lockDelayMs: number,
  dueMs: number,
  seq: number,
  session: string | null,
  owner?: string | null,
];
type WaiterRow = [
  waiterId: number,
  holder: string,
  ttlMs: number | null,
  shared: boolean,
  session: string | null,
  lockDelayMs: number,
  maxHoldMs: number | null,
  idempotencyKey: string | null,
  dueMs: number,
  seq: number,
  owner?: string | null,
];
type LeaseRow = [
  name: string,
  lastFencingToken: number,
  lockDelayUntilMs: number,
  lockDelayQueue: LockDelayQueue,
  dueMs: number,
  seq: number,
  grant: GrantRow | null,
  shared: GrantRow[],
  waiters: WaiterRow[],
];
type CandidacyRow = [
  candidate: string,
  value: JsonValue,
  ttlMs: number | null,
  session: string | null,
  dueMs: number,
  seq: number,
  owner?: string | null,
];
type ElectionRow = [
  group: string,
  leaderToken: number,
  leaderSinceMs: number,
  revision: number,
  lastFencingToken: number,
  hasLeader: boolean,
  candidates: CandidacyRow[],
];
type SessionRow = [
  sessionId: string,
  name: string | null,
  ttlMs: number,
  dueMs: number,
  seq: number,
  owner?: string | null,
];
type PermitRow = [
  holder: string,
  fencingToken: number,
  grantedAtMs: number,
  ttlMs: number | null,
  session: string | null,
  dueMs: number,
  seq: number,
  owner?: string | null,
];
type SemWaiterRow = [
  waiterId: number,
  holder: string,
  ttlMs: number | null,
  session: string | null,
  idempotencyKey: string | null,
  dueMs: number,
  seq: number,
  owner?: string | null,
];
type SemaphoreRow = [
  name: string,
  limit: number,
  lastFencingToken: number,
  permits: PermitRow[],
  waiters: SemWaiterRow[],
];

interface SnapshotDoc extends SnapshotHead {
  format: string;
  lastIndex: number;
  lastTimeMs: number;
  dueSeq: number;
  sessions: SessionRow[];
  leases: LeaseRow[];
  semaphores: SemaphoreRow[];
  elections: ElectionRow[];
  retiredElections: [string, number][];
  kv: [string, JsonValue, number][];
  idempotency: [string, string, CommandResult, number][];
  waiterOutcomes: [number, WaiterOutcomeRecord, number][];
  history: [string, EndedGrant[]][];
  /** Tokens and roles sorted by name; absent in snapshots taken before auth existed. */
  auth?: { tokens: TokenRecord[]; roles: RoleView[] };
}

/** `map`'s entries sorted by key (code-unit order, the order every replica agrees on). */
function byKey<T>(map: Map<string, T>): [string, T][] {
  return [...map.entries()].sort((a, b) => compareKeys(a[0], b[0]));
}

/** Code-unit order of names: the order of every by-name section of a snapshot. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function grantRow(g: Grant): GrantRow {
  return [
    g.holder,
    g.fencingToken,
    g.grantedAtMs,
    g.ttlMsRequested,
    g.ttlMs,
    g.renewedAtMs,
    g.maxHoldUntilMs,
    g.lockDelayMs,
    g.dueMs,
    g.seq,
    g.session?.sessionId ?? null,
    g.owner,
  ];
}

/** The snapshot row of one session. */
export function sessionRow(sessionId: string, s: SessionRecord): SessionRow {
  return [sessionId, s.name, s.ttlMs, s.dueMs, s.seq, s.owner];
}

/** The snapshot row of one lease with its grants and waiters. */
export function leaseRow(name: string, r: LeaseRecord): LeaseRow {
  const waiters: WaiterRow[] = [...(r.waiters?.values() ?? [])].map((w) => [
    w.waiterId,
    w.holder,
    w.ttlMs,
    w.shared,
    w.session?.sessionId ?? null,
    w.lockDelayMs,
    w.maxHoldMs,
    w.idempotencyKey,
    w.dueMs,
    w.seq,
    w.owner,
  ]);
  const shared = [...(r.shared?.values() ?? [])].map(grantRow);
  const grant = r.grant === null ? null : grantRow(r.grant);
  return [
    name,
    r.lastFencingToken,
    r.lockDelayUntilMs,
    r.lockDelayQueue,
    r.dueMs,
    r.seq,
    grant,
    shared,
    waiters,
  ];
}

/** The snapshot row of one semaphore with its permits and waiters. */
export function semaphoreRow(name: string, r: SemaphoreRecord): SemaphoreRow {
  const permits: PermitRow[] = [...r.permits.values()].map((p) => [
    p.holder,
    p.fencingToken,
    p.grantedAtMs,
    p.ttlMs,
    p.session?.sessionId ?? null,
    p.dueMs,
    p.seq,
    p.owner,
  ]);
  const waiters: SemWaiterRow[] = [...(r.waiters?.values() ?? [])].map((w) => [
    w.waiterId,
    w.holder,
    w.ttlMs,
    w.session?.sessionId ?? null,
    w.idempotencyKey,
    w.dueMs,
    w.seq,
    w.owner,
  ]);
  return [name, r.limit, r.lastFencingToken, permits, waiters];
}

/** The snapshot row of one election group with its candidates. */
export function electionRow(group: string, e: ElectionRecord): ElectionRow {
  return [
    group,
    e.leaderToken,
    e.leaderSinceMs,
    e.revision,
    e.lastFencingToken,
    e.leader !== null,
    [...e.candidates.values()].map((c) => [
      c.candidate,
      c.value,
      c.ttlMs,
      c.session?.sessionId ?? null,
      c.dueMs,
      c.seq,
      c.owner,
    ]),
  ];
}

/** The snapshot row of one KV entry. */
export function kvRow(key: string, r: KvRecord): [string, JsonValue, number] {
  return [key, r.value, r.revision];
}

/** The snapshot row of one idempotency record. */
export function idempotencyRow(
  key: string,
  e: Windowed<IdempotencyRecord>,
): [string, string, CommandResult, number] {
  return [key, e.value.fingerprint, e.value.result, e.atMs];
}

/** The snapshot row of one remembered waiter outcome. */
export function waiterOutcomeRow(
  id: number,
  e: Windowed<WaiterOutcomeRecord>,
): [number, WaiterOutcomeRecord, number] {
  return [id, e.value, e.atMs];
}

/**
 * Encodes the state of `core` (msgpackr) in one step: the definition of the format.
 * snapshot-slices.ts writes the same bytes in bounded steps.
 */
export function writeSnapshot(core: Core): Uint8Array {
  const doc: SnapshotDoc = {
    format: FORMAT,
    lastIndex: core.lastIndex,
    lastTimeMs: core.lastTimeMs,
    dueSeq: core.dueSeq,
    sessions: byKey(core.sessions).map(([id, s]) => sessionRow(id, s)),
    leases: byKey(core.leases).map(([name, r]) => leaseRow(name, r)),
    semaphores: byKey(core.semaphores).map(([name, r]) => semaphoreRow(name, r)),
    elections: byKey(core.elections).map(([group, e]) => electionRow(group, e)),
    retiredElections: [...core.retiredElections.entries()],
    kv: byKey(core.kv).map(([key, r]) => kvRow(key, r)),
    idempotency: [...core.idempotency.entries()].map(([key, e]) => idempotencyRow(key, e)),
    waiterOutcomes: [...core.waiterOutcomes.entries()].map(([id, e]) => waiterOutcomeRow(id, e)),
    history: [...core.history.entries()],
    auth: authRows(core.auth),
  };
  return packr.pack(doc);
}

/** Decodes a snapshot into a fresh `Core` with `limits`. Throws SnapshotFormatError on foreign bytes. */
export function readSnapshot(bytes: Uint8Array, limits: CoordLimitsFull): Core {
  const doc = unpackSnapshot<SnapshotDoc>(bytes);
  const core = new Core(limits);
  core.lastIndex = doc.lastIndex;
  core.lastTimeMs = doc.lastTimeMs;
  core.dueSeq = doc.dueSeq;
  for (const [sessionId, name, ttlMs, dueMs, seq, owner] of doc.sessions) {
    const s: SessionRecord = {
      kind: 'session',
      owner: owner ?? null,
      sessionId,
      name,
      ttlMs,
      members: new Set(),
      dueMs,
      seq,
      heapIndex: -1,
    };
    core.sessions.set(sessionId, s);
    core.wake.push(s);
  }
  const sessionOf = (id: string | null): SessionRecord | null => {
    if (id === null) return null;
    const s = core.sessions.get(id);
    if (s === undefined) throw new SnapshotFormatError(`snapshot: unknown session ${id}`);
    return s;
  };
  for (const row of doc.leases) core.leases.set(row[0], readLease(core, row, sessionOf));
  for (const row of doc.semaphores)
    core.semaphores.set(row[0], readSemaphore(core, row, sessionOf));
  for (const [
    group,
    leaderToken,
    leaderSinceMs,
    revision,
    lastFencingToken,
    hasLeader,
    rows,
  ] of doc.elections) {
    const rec: ElectionRecord = {
      group,
      candidates: new Map(),
      leader: null,
      leaderToken,
      leaderSinceMs,
      revision,
      lastFencingToken,
    };
    for (const [candidate, value, ttlMs, session, dueMs, seq, owner] of rows) {
      const c: Candidacy = {
        kind: 'candidacy',
        owner: owner ?? null,
        election: rec,
        candidate,
        value,
        ttlMs,
        session: sessionOf(session),
        dueMs,
        seq,
        heapIndex: -1,
      };
      rec.candidates.set(candidate, c);
      core.candidatesCount++;
      if (c.session === null) core.wake.push(c);
      else c.session.members.add(c);
    }
    if (hasLeader) {
      rec.leader = rec.candidates.values().next().value ?? null;
      assert(rec.leader !== null, 'snapshot: leader flag on an empty group');
    }
    core.elections.set(group, rec);
  }
  for (const [group, revision] of doc.retiredElections) core.retiredElections.set(group, revision);
  for (const [key, value, revision] of doc.kv) core.kv.set(key, { value, revision });
  for (const [key, fingerprint, result, atMs] of doc.idempotency)
    core.idempotency.set(key, { fingerprint, result } satisfies IdempotencyRecord, atMs);
  for (const [id, value, atMs] of doc.waiterOutcomes) core.waiterOutcomes.set(id, value, atMs);
  core.history.load(doc.history);
  loadAuth(core.auth, doc.auth);
  core.owners = recountOwners(core);
  return core;
}

type SessionOf = (id: string | null) => SessionRecord | null;

function readGrant(
  core: Core,
  rec: LeaseRecord,
  row: GrantRow,
  shared: boolean,
  sessionOf: SessionOf,
): Grant {
  const [
    holder,
    fencingToken,
    grantedAtMs,
    ttlMsRequested,
    ttlMs,
    renewedAtMs,
    maxHoldUntilMs,
    lockDelayMs,
    dueMs,
    seq,
    session,
    owner,
  ] = row;
  const g: Grant = {
    kind: 'grant',
    owner: owner ?? null,
    lease: rec,
    shared,
    session: sessionOf(session),
    holder,
    fencingToken,
    grantedAtMs,
    ttlMsRequested,
    ttlMs,
    renewedAtMs,
    maxHoldUntilMs,
    lockDelayMs,
    dueMs,
    seq,
    heapIndex: -1,
  };
  core.grantsLive++;
  if (g.session === null) core.wake.push(g);
  else g.session.members.add(g);
  return g;
}

function readLease(core: Core, row: LeaseRow, sessionOf: SessionOf): LeaseRecord {
  const [
    name,
    lastFencingToken,
    lockDelayUntilMs,
    lockDelayQueue,
    dueMs,
    seq,
    grantRow,
    sharedRows,
    waiterRows,
  ] = row;
  const rec: LeaseRecord = {
    kind: 'lease',
    name,
    grant: null,
    shared: null,
    lockDelayUntilMs,
    lockDelayQueue,
    waiters: null,
    lastFencingToken,
    dueMs,
    seq,
    heapIndex: -1,
  };
  if (lockDelayQueue === 'wake') core.wake.push(rec);
  else if (lockDelayQueue === 'sweep') core.sweep.push(rec);
  if (grantRow !== null) rec.grant = readGrant(core, rec, grantRow, false, sessionOf);
  for (const r of sharedRows) {
    const g = readGrant(core, rec, r, true, sessionOf);
    (rec.shared ??= new Map()).set(g.holder, g);
  }
  for (const [
    waiterId,
    holder,
    ttlMs,
    shared,
    session,
    lockDelayMs,
    maxHoldMs,
    idempotencyKey,
    wDue,
    wSeq,
    wOwner,
  ] of waiterRows) {
    const w: Waiter = {
      kind: 'waiter',
      owner: wOwner ?? null,
      lease: rec,
      waiterId,
      holder,
      ttlMs,
      shared,
      session: sessionOf(session),
      lockDelayMs,
      maxHoldMs,
      idempotencyKey,
      dueMs: wDue,
      seq: wSeq,
      heapIndex: -1,
    };
    (rec.waiters ??= new Map()).set(waiterId, w);
    core.pendingWaiters.set(waiterId, w);
    core.wake.push(w);
    w.session?.members.add(w);
  }
  return rec;
}

function readSemaphore(core: Core, row: SemaphoreRow, sessionOf: SessionOf): SemaphoreRecord {
  const [name, limit, lastFencingToken, permitRows, waiterRows] = row;
  const rec: SemaphoreRecord = { name, limit, permits: new Map(), waiters: null, lastFencingToken };
  for (const [holder, fencingToken, grantedAtMs, ttlMs, session, dueMs, seq, owner] of permitRows) {
    const p: Permit = {
      kind: 'permit',
      owner: owner ?? null,
      semaphore: rec,
      holder,
      fencingToken,
      grantedAtMs,
      ttlMs,
      session: sessionOf(session),
      dueMs,
      seq,
      heapIndex: -1,
    };
    rec.permits.set(holder, p);
    core.permitsLive++;
    if (p.session === null) core.wake.push(p);
    else p.session.members.add(p);
  }
  for (const [waiterId, holder, ttlMs, session, idempotencyKey, dueMs, seq, owner] of waiterRows) {
    const w: SemWaiter = {
      kind: 'semWaiter',
      owner: owner ?? null,
      semaphore: rec,
      waiterId,
      holder,
      ttlMs,
      session: sessionOf(session),
      idempotencyKey,
      dueMs,
      seq,
      heapIndex: -1,
    };
    (rec.waiters ??= new Map()).set(waiterId, w);
    core.pendingSemWaiters.set(waiterId, w);
    core.wake.push(w);
    w.session?.members.add(w);
  }
  return rec;
}

/**
 * The same state as `bytes`, as if its last applied entry were at `index` (≥ its own): the state a
 * restored cluster starts from (fencing.ts restoredIndex; docs/operations.md "Backup and restore").
 * Everything else — tokens, revisions, waiter ids, cluster times — is kept as it is.
 * Throws SnapshotFormatError on foreign bytes.
 */
export function rebaseSnapshot(bytes: Uint8Array, index: number): Uint8Array {
  const doc = unpackSnapshot<SnapshotDoc>(bytes);
  assert(Number.isSafeInteger(index) && index >= doc.lastIndex, 'rebase: index goes backwards');
  return packr.pack({ ...doc, lastIndex: index });
}

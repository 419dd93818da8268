/**
 * Snapshot encoding of the whole replicated state (Raft §7 log compaction / InstallSnapshot).
 * Deterministic: the same state gives the same bytes on every replica — maps keyed by name are
 * written sorted; maps whose order means age (idempotency, waiter outcomes, history, retired
 * groups) are written oldest first, which is itself a function of the applied log. Due-queue
 * tie-breaks (`seq`) are saved so a restored replica expires things in the same order.
 */
import assert from 'node:assert';
import type { CommandResult, JsonValue } from './api.js';
import { makePackr } from './codec.js';
import { Core, type IdempotencyRecord, type WaiterOutcomeRecord } from './core.js';
import type { EndedGrant } from './history.js';
import type { CoordLimitsFull } from './limits.js';
import type {
  Candidacy,
  ElectionRecord,
  Grant,
  LeaseRecord,
  LockDelayQueue,
  Waiter,
} from './model.js';

const packr = makePackr();
const FORMAT = 'tenure-coord-state/1';

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
];
type WaiterRow = [
  waiterId: number,
  holder: string,
  ttlMs: number,
  lockDelayMs: number,
  maxHoldMs: number | null,
  idempotencyKey: string | null,
  dueMs: number,
  seq: number,
];
type LeaseRow = [
  name: string,
  lastFencingToken: number,
  lockDelayUntilMs: number,
  lockDelayQueue: LockDelayQueue,
  dueMs: number,
  seq: number,
  grant: GrantRow | null,
  waiters: WaiterRow[],
];
type CandidacyRow = [
  candidate: string,
  value: JsonValue,
  ttlMs: number,
  dueMs: number,
  seq: number,
];
type ElectionRow = [
  group: string,
  leaderToken: number,
  revision: number,
  lastFencingToken: number,
  hasLeader: boolean,
  candidates: CandidacyRow[],
];

interface SnapshotDoc {
  format: string;
  lastIndex: number;
  lastTimeMs: number;
  dueSeq: number;
  leases: LeaseRow[];
  elections: ElectionRow[];
  retiredElections: [string, number][];
  kv: [string, JsonValue, number][];
  idempotency: [string, string, CommandResult, number][];
  waiterOutcomes: [number, WaiterOutcomeRecord, number][];
  history: [string, EndedGrant[]][];
}

function byKey<T>(map: Map<string, T>): [string, T][] {
  return [...map.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** Encodes the state of `core` (msgpackr). */
export function writeSnapshot(core: Core): Uint8Array {
  const doc: SnapshotDoc = {
    format: FORMAT,
    lastIndex: core.lastIndex,
    lastTimeMs: core.lastTimeMs,
    dueSeq: core.dueSeq,
    leases: byKey(core.leases).map(([name, r]) => {
      const g = r.grant;
      const grant: GrantRow | null =
        g === null
          ? null
          : [
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
            ];
      const waiters: WaiterRow[] =
        r.waiters === null
          ? []
          : [...r.waiters.values()].map((w) => [
              w.waiterId,
              w.holder,
              w.ttlMs,
              w.lockDelayMs,
              w.maxHoldMs,
              w.idempotencyKey,
              w.dueMs,
              w.seq,
            ]);
      return [
        name,
        r.lastFencingToken,
        r.lockDelayUntilMs,
        r.lockDelayQueue,
        r.dueMs,
        r.seq,
        grant,
        waiters,
      ];
    }),
    elections: byKey(core.elections).map(([group, e]) => [
      group,
      e.leaderToken,
      e.revision,
      e.lastFencingToken,
      e.leader !== null,
      [...e.candidates.values()].map((c) => [c.candidate, c.value, c.ttlMs, c.dueMs, c.seq]),
    ]),
    retiredElections: [...core.retiredElections.entries()],
    kv: byKey(core.kv).map(([key, r]) => [key, r.value, r.revision]),
    idempotency: [...core.idempotency.entries()].map(([key, e]) => [
      key,
      e.value.fingerprint,
      e.value.result,
      e.atMs,
    ]),
    waiterOutcomes: [...core.waiterOutcomes.entries()].map(([id, e]) => [id, e.value, e.atMs]),
    history: [...core.history.entries()],
  };
  return packr.pack(doc);
}

/** Thrown by `readSnapshot` for bytes that are not a snapshot of this format. */
export class SnapshotFormatError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SnapshotFormatError';
  }
}

/** Decodes a snapshot into a fresh `Core` with `limits`. Throws SnapshotFormatError on foreign bytes. */
export function readSnapshot(bytes: Uint8Array, limits: CoordLimitsFull): Core {
  let doc: SnapshotDoc;
  try {
    doc = packr.unpack(bytes) as SnapshotDoc;
  } catch (cause) {
    throw new SnapshotFormatError('snapshot: not valid MessagePack', { cause });
  }
  if (typeof doc !== 'object' || doc === null || doc.format !== FORMAT)
    throw new SnapshotFormatError(`snapshot: format is not ${FORMAT}`);
  const core = new Core(limits);
  core.lastIndex = doc.lastIndex;
  core.lastTimeMs = doc.lastTimeMs;
  core.dueSeq = doc.dueSeq;
  for (const [
    name,
    lastFencingToken,
    lockDelayUntilMs,
    lockDelayQueue,
    dueMs,
    seq,
    grantRow,
    waiterRows,
  ] of doc.leases) {
    const rec: LeaseRecord = {
      kind: 'lease',
      name,
      grant: null,
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
    if (grantRow !== null) {
      const [
        holder,
        fencingToken,
        grantedAtMs,
        ttlMsRequested,
        ttlMs,
        renewedAtMs,
        maxHoldUntilMs,
        lockDelayMs,
        gDue,
        gSeq,
      ] = grantRow;
      const g: Grant = {
        kind: 'grant',
        lease: rec,
        holder,
        fencingToken,
        grantedAtMs,
        ttlMsRequested,
        ttlMs,
        renewedAtMs,
        maxHoldUntilMs,
        lockDelayMs,
        dueMs: gDue,
        seq: gSeq,
        heapIndex: -1,
      };
      rec.grant = g;
      core.grantsLive++;
      core.wake.push(g);
    }
    for (const [
      waiterId,
      holder,
      ttlMs,
      lockDelayMs,
      maxHoldMs,
      idempotencyKey,
      wDue,
      wSeq,
    ] of waiterRows) {
      const w: Waiter = {
        kind: 'waiter',
        lease: rec,
        waiterId,
        holder,
        ttlMs,
        lockDelayMs,
        maxHoldMs,
        idempotencyKey,
        dueMs: wDue,
        seq: wSeq,
        heapIndex: -1,
      };
      rec.waiters ??= new Map();
      rec.waiters.set(waiterId, w);
      core.pendingWaiters.set(waiterId, w);
      core.wake.push(w);
    }
    core.leases.set(name, rec);
  }
  for (const [group, leaderToken, revision, lastFencingToken, hasLeader, rows] of doc.elections) {
    const rec: ElectionRecord = {
      group,
      candidates: new Map(),
      leader: null,
      leaderToken,
      revision,
      lastFencingToken,
    };
    for (const [candidate, value, ttlMs, dueMs, seq] of rows) {
      const c: Candidacy = {
        kind: 'candidacy',
        election: rec,
        candidate,
        value,
        ttlMs,
        dueMs,
        seq,
        heapIndex: -1,
      };
      rec.candidates.set(candidate, c);
      core.candidatesCount++;
      core.wake.push(c);
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
  return core;
}

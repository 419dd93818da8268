/**
 * `checkCoreInvariants`: every invariant of the replicated state, checked in O(state) by tests
 * and the simulator after each step (a failure is a bug: AssertionError). The rules are written
 * beside the fields they constrain in model.ts and core.ts.
 */
import assert from 'node:assert';
import type { Core } from './core.js';
import { tokenIndex } from './fencing.js';
import type { Grant, LeaseRecord, SessionMember } from './model.js';
import { recountOwners } from './owner-recount.js';

function checkGrant(core: Core, rec: LeaseRecord, g: Grant, counted: Set<SessionMember>): void {
  const now = core.lastTimeMs;
  assert(g.lease === rec, `invariant: grant of ${rec.name} points elsewhere`);
  if (g.session === null) {
    assert(g.heapIndex !== -1 && g.dueMs > now, `invariant: grant of ${rec.name} not queued`);
  } else {
    assert(g.heapIndex === -1, `invariant: session grant of ${rec.name} in the wake queue`);
    assert(core.sessions.get(g.session.sessionId) === g.session, `invariant: dead session grant`);
    assert(g.session.members.has(g), `invariant: session does not list its grant`);
    counted.add(g);
  }
  assert(
    g.fencingToken <= rec.lastFencingToken && tokenIndex(g.fencingToken) <= core.lastIndex,
    `invariant: token of ${rec.name}`,
  );
  assert(
    g.maxHoldUntilMs === null || g.session !== null || g.dueMs <= g.maxHoldUntilMs,
    `invariant: ${rec.name} past maxHold`,
  );
}

function checkLeases(
  core: Core,
  counted: Set<SessionMember>,
): { grants: number; waiters: number; wakeRecords: number } {
  const now = core.lastTimeMs;
  let grants = 0;
  let waiters = 0;
  let wakeRecords = 0;
  for (const [name, rec] of core.leases) {
    assert.equal(rec.name, name);
    assert(
      rec.grant !== null ||
        rec.shared !== null ||
        rec.waiters !== null ||
        rec.lockDelayUntilMs !== 0,
      `invariant: empty lease record ${name}`,
    );
    assert(rec.grant === null || rec.shared === null, `invariant: ${name} exclusive and shared`);
    assert(rec.shared === null || rec.shared.size > 0, `invariant: empty shared map of ${name}`);
    if (rec.grant !== null) {
      grants++;
      assert(!rec.grant.shared, `invariant: exclusive slot of ${name} holds a shared grant`);
      checkGrant(core, rec, rec.grant, counted);
      assert.equal(rec.lockDelayUntilMs, 0, `invariant: ${name} held during lock-delay`);
    }
    for (const [holder, g] of rec.shared ?? []) {
      grants++;
      assert(g.shared && g.holder === holder, `invariant: shared grant of ${name}`);
      checkGrant(core, rec, g, counted);
    }
    if (rec.waiters !== null) {
      const head = rec.waiters.values().next().value!;
      assert(
        rec.grant !== null || rec.lockDelayUntilMs > now || (rec.shared !== null && !head.shared),
        `invariant: ${name} grantable with waiters`,
      );
    }
    if (rec.lockDelayUntilMs !== 0) {
      assert(
        rec.lockDelayUntilMs > now && rec.dueMs === rec.lockDelayUntilMs && rec.heapIndex !== -1,
        `invariant: lock-delay of ${name}`,
      );
      assert.equal(
        rec.lockDelayQueue,
        rec.waiters !== null ? 'wake' : 'sweep',
        `invariant: lock-delay queue of ${name}`,
      );
      if (rec.lockDelayQueue === 'wake') wakeRecords++;
    } else {
      assert(
        rec.lockDelayQueue === 'none' && rec.heapIndex === -1,
        `invariant: stray lock-delay of ${name}`,
      );
    }
    if (rec.waiters !== null) {
      assert(rec.waiters.size > 0 && rec.waiters.size <= core.limits.waitersPerLeaseMax);
      let prev = 0;
      for (const [id, w] of rec.waiters) {
        waiters++;
        assert(
          w.waiterId === id && id > prev && w.lease === rec && core.pendingWaiters.get(id) === w,
          `invariant: waiter ${id} of ${name}`,
        );
        assert(w.dueMs > now && w.heapIndex !== -1, `invariant: waiter ${id} past deadline`);
        if (w.session !== null) {
          assert(w.session.members.has(w), `invariant: session does not list waiter ${id}`);
          counted.add(w);
        }
        prev = id;
      }
    }
  }
  assert.equal(grants, core.grantsLive, 'invariant: grant count');
  assert.equal(waiters, core.pendingWaiters.size, 'invariant: waiter count');
  return { grants, waiters, wakeRecords };
}

function checkSemaphores(core: Core, counted: Set<SessionMember>): number {
  const now = core.lastTimeMs;
  let queued = 0;
  let permits = 0;
  for (const [name, rec] of core.semaphores) {
    assert(
      rec.name === name && (rec.permits.size > 0 || rec.waiters !== null),
      `invariant: empty semaphore ${name}`,
    );
    assert(
      rec.permits.size <= rec.limit && rec.limit <= core.limits.semaphoreLimitMax,
      `invariant: ${name} over its limit`,
    );
    assert(
      rec.waiters === null || rec.permits.size === rec.limit,
      `invariant: ${name} has a free permit and waiters`,
    );
    for (const [holder, p] of rec.permits) {
      permits++;
      assert(
        p.holder === holder && p.semaphore === rec && p.fencingToken <= rec.lastFencingToken,
        `invariant: permit of ${name}`,
      );
      if (p.session === null) {
        queued++;
        assert(p.heapIndex !== -1 && p.dueMs > now, `invariant: permit of ${name} not queued`);
      } else {
        assert(
          p.heapIndex === -1 && p.session.members.has(p),
          `invariant: session permit of ${name}`,
        );
        counted.add(p);
      }
    }
    let prev = 0;
    for (const [id, w] of rec.waiters ?? []) {
      queued++;
      assert(
        w.waiterId === id && id > prev && core.pendingSemWaiters.get(id) === w,
        `invariant: semaphore waiter ${id}`,
      );
      assert(
        w.dueMs > now && w.heapIndex !== -1,
        `invariant: semaphore waiter ${id} past deadline`,
      );
      if (w.session !== null) {
        assert(w.session.members.has(w), `invariant: session does not list waiter ${id}`);
        counted.add(w);
      }
      prev = id;
    }
  }
  assert.equal(permits, core.permitsLive, 'invariant: permit count');
  return queued;
}

function checkElections(core: Core, counted: Set<SessionMember>): number {
  const now = core.lastTimeMs;
  let queued = 0;
  let candidates = 0;
  for (const [group, rec] of core.elections) {
    assert(rec.group === group && rec.candidates.size > 0, `invariant: empty group ${group}`);
    const first = rec.candidates.values().next().value!;
    assert(rec.leader === first, `invariant: leader of ${group} is not the oldest candidacy`);
    assert(
      rec.leaderToken > 0 && rec.leaderToken <= rec.lastFencingToken,
      `invariant: token of ${group}`,
    );
    for (const cand of rec.candidates.values()) {
      candidates++;
      assert(cand.election === rec, `invariant: candidacy ${cand.candidate} of ${group}`);
      if (cand.session === null) {
        queued++;
        assert(
          cand.dueMs > now && cand.heapIndex !== -1,
          `invariant: candidacy ${cand.candidate} of ${group} not queued`,
        );
      } else {
        assert(
          cand.heapIndex === -1 && cand.session.members.has(cand),
          `invariant: session candidacy of ${group}`,
        );
        counted.add(cand);
      }
    }
    assert(rec.candidates.size <= core.limits.candidatesPerGroupMax);
  }
  assert.equal(candidates, core.candidatesCount, 'invariant: candidate count');
  return queued;
}

/** Throws (AssertionError) if an invariant of `core` is broken. */
export function checkCoreInvariants(core: Core): void {
  const now = core.lastTimeMs;
  assert.deepStrictEqual(
    core.owners.entries(),
    recountOwners(core).entries(),
    'invariant: per-owner counts match the records',
  );
  core.wake.checkInvariants();
  core.sweep.checkInvariants();
  const counted = new Set<SessionMember>();
  const leases = checkLeases(core, counted);
  const sem = checkSemaphores(core, counted);
  const elections = checkElections(core, counted);
  let members = 0;
  for (const [id, s] of core.sessions) {
    assert(s.sessionId === id && s.dueMs > now && s.heapIndex !== -1, `invariant: session ${id}`);
    assert(s.members.size <= core.limits.grantsPerSessionMax, `invariant: session ${id} too full`);
    for (const m of s.members)
      assert(counted.has(m), `invariant: session ${id} lists a dead member`);
    members += s.members.size;
  }
  assert.equal(members, counted.size, 'invariant: session members');
  // Waiters always sit in the wake queue (their deadline); session-bound grants never do.
  let sessionGrants = 0;
  for (const m of counted) if (m.kind === 'grant') sessionGrants++;
  const leaseQueued = leases.grants - sessionGrants + leases.waiters + leases.wakeRecords;
  assert.equal(
    core.wake.size,
    leaseQueued + sem + elections + core.sessions.size,
    'invariant: wake queue size',
  );
  assert(
    core.leases.size <= core.limits.leasesMax &&
      core.kv.size <= core.limits.keysMax &&
      core.elections.size <= core.limits.electionsMax &&
      core.sessions.size <= core.limits.sessionsMax &&
      core.semaphores.size <= core.limits.semaphoresMax &&
      core.waitersCount <= core.limits.waitersMax,
    'invariant: limits',
  );
  assert(core.history.entriesCount <= core.limits.historyEntriesMax, 'invariant: history bound');
  core.idempotency.checkInvariants();
  core.waiterOutcomes.checkInvariants();
  for (const e of core.wake.entries())
    assert(e.dueMs > now, 'invariant: due entry left in the wake queue');
  for (const e of core.sweep.entries())
    assert(e.dueMs > now && e.lockDelayQueue === 'sweep', 'invariant: sweep queue entry');
}

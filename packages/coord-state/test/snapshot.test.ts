// Proves snapshots are deterministic (same state, same bytes), complete (restore then continue ≡ continue) and reject foreign bytes.
import t from 'tap';
import { CoordStateMachine, SnapshotFormatError } from '../src/index.js';
import { Driver, okValue } from './fixtures/driver.js';

function busy(): Driver {
  const d = new Driver({ idempotencyWindowMs: 10_000 });
  const a = okValue<{ fencingToken: number }>(
    d.acquire('L', 'A', { ttlMs: 1000, lockDelayMs: 500, maxHoldMs: 5000, key: 'k1' }),
  );
  d.acquire('L', 'B', { waitMs: 4000, key: 'k2' });
  d.acquire('M', 'A', { ttlMs: 200, lockDelayMs: 2000 });
  d.at(300); // M expires into lock-delay (sweep queue)
  d.campaign('g', 'p', { value: { x: 1 } });
  d.campaign('g', 'q', { ttlMs: 3000 });
  d.run({
    type: 'kv.put',
    key: 'k',
    value: [1, 2],
    fence: { lease: 'L', fencingToken: a.fencingToken },
    ifRevision: null,
  });
  d.release('L', 'A', a.fencingToken, { atMs: 400 });
  return d;
}

t.test('same state gives the same bytes; snapshot of a restore equals the original', async (t) => {
  const s1 = busy().sm.snapshot();
  const s2 = busy().sm.snapshot();
  t.same(Buffer.from(s1), Buffer.from(s2));
  const r = new CoordStateMachine({ idempotencyWindowMs: 10_000 });
  r.restore(s1);
  t.same(Buffer.from(r.snapshot()), Buffer.from(s1));
});

t.test(
  'restore(snapshot()) then continuing gives the same outputs as continuing without it',
  async (t) => {
    const a = busy();
    const b = busy();
    b.sm.restore(b.sm.snapshot());
    for (const d of [a, b]) {
      d.acquire('M', 'C', { waitMs: 5000, atMs: 500 });
    }
    const steps = [1000, 1400, 2300, 2500, 3300, 9000, 20_000];
    for (const at of steps) {
      const oa = a.at(at);
      const ob = b.at(at);
      t.same(ob, oa, `at ${at}`);
      t.same(b.sm.getLease('L', at), a.sm.getLease('L', at));
      t.same(b.sm.getElection('g'), a.sm.getElection('g'));
      t.same(b.sm.nextDueMs(), a.sm.nextDueMs());
    }
    t.same(Buffer.from(b.sm.snapshot()), Buffer.from(a.sm.snapshot()));
  },
);

t.test('restore rejects bytes that are not a snapshot', async (t) => {
  const sm = new CoordStateMachine();
  t.throws(() => sm.restore(new Uint8Array([1, 2, 3])), SnapshotFormatError);
  t.throws(() => sm.restore(new Uint8Array([0xc1])), SnapshotFormatError);
});

function busyPrimitives(): Driver {
  const d = new Driver({ idempotencyWindowMs: 10_000 });
  const sid = okValue<{ sessionId: string }>(
    d.run({ type: 'session.create', ttlMs: 2000, name: 'w' }).result,
  ).sessionId;
  d.acquire('R', 'A', { mode: 'shared', ttlMs: 5000 });
  d.acquire('R', 'B', { mode: 'shared', ttlMs: null, session: sid, lockDelayMs: 300 });
  d.acquire('R', 'X', { waitMs: 60_000 });
  d.semAcquire('S', 'A', { limit: 1, session: sid });
  d.semAcquire('S', 'B', { limit: 1, waitMs: 60_000, key: 'k3' });
  d.campaign('g', 'p', { ttlMs: null, session: sid });
  d.campaign('g', 'q', { ttlMs: 9000 });
  d.run({ type: 'lease.revoke', name: 'none', fencingToken: null, reason: null });
  return d;
}

t.test(
  'sessions, shared grants, semaphores and history: same bytes, and a restored twin continues identically',
  async (t) => {
    const a = busyPrimitives();
    const b = busyPrimitives();
    t.same(Buffer.from(a.sm.snapshot()), Buffer.from(b.sm.snapshot()));
    b.sm.restore(b.sm.snapshot());
    for (const at of [1000, 2000, 2200, 2400, 6000, 70_000]) {
      t.same(b.at(at), a.at(at), `at ${at}`);
      t.same(b.sm.leaseState('R', at), a.sm.leaseState('R', at));
      t.same(b.sm.getSemaphore('S', at), a.sm.getSemaphore('S', at));
      t.same(b.sm.history('election', 'g', 10), a.sm.history('election', 'g', 10));
      t.same(b.sm.nextDueMs(), a.sm.nextDueMs());
    }
    t.same(Buffer.from(b.sm.snapshot()), Buffer.from(a.sm.snapshot()));
    t.match(a.sm.history('lease', 'R', 10), [
      { holder: 'X' },
      { holder: 'B', endReason: 'session_ended' },
    ]);
  },
);

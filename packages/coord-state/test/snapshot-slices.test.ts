// Proves the sliced snapshot encoder writes exactly the bytes of the one-step encoder (so slices restore like a snapshot), in many bounded steps, for seeded random states with every kind of record and names in random order; and that it refuses to go on once the state applied an entry between two steps.
import t from 'tap';
import { SeededRandom } from '@tenure/testkit';
import { CoordStateMachine, type Command } from '../src/index.js';

const SEED = Number(process.env['COORD_STATE_SEED'] ?? 20261202);

/** Applies `commands` one entry each, 1..n ms apart, from the state's next index. */
function applyAll(sm: CoordStateMachine, commands: Command[], random: SeededRandom): void {
  let index = sm.lastAppliedIndex();
  let nowMs = sm.lastAppliedTimeMs();
  for (const command of commands) {
    nowMs += random.intBetween(0, 3);
    const key = random.chance(0.2) ? `k${index}` : null;
    sm.apply(++index, nowMs, {
      v: 1,
      command,
      idempotency: key === null ? null : { key, fingerprint: 'fp' },
    });
  }
}

/** A state with `n` leases (some with waiters, some shared) and every other kind of record. */
function randomState(n: number, seed: number): CoordStateMachine {
  const random = new SeededRandom(seed);
  const sm = new CoordStateMachine({ idempotencyWindowMs: 60_000 });
  const name = (i: number): string => `${random.intBelow(1e9).toString(36)}-${i}`;
  const commands: Command[] = [];
  for (let i = 0; i < 20; i++) commands.push({ type: 'session.create', ttlMs: 60_000, name: null });
  for (let i = 0; i < n; i++) {
    const lease = name(i);
    const shared = random.chance(0.1);
    const holders = random.intBetween(1, 3);
    for (let h = 0; h < holders; h++)
      commands.push({
        type: 'lease.acquire',
        name: lease,
        holder: `h${h}`,
        ttlMs: random.pick([null, 5_000, 60_000]),
        waitMs: 30_000,
        lockDelayMs: random.pick([0, 1000]),
        maxHoldMs: null,
        ...(shared ? { mode: 'shared' as const } : {}),
        ...(random.chance(0.2) ? { session: `s${random.intBetween(1, 20)}` } : {}),
      });
  }
  for (let i = 0; i < n / 10; i++) {
    commands.push({
      type: 'semaphore.acquire',
      name: name(i),
      holder: 'p',
      limit: 2,
      ttlMs: 60_000,
      session: null,
      waitMs: 0,
    });
    commands.push({
      type: 'election.campaign',
      group: name(i),
      candidate: 'c',
      ttlMs: 60_000,
      value: { i },
    });
    commands.push({ type: 'kv.put', key: name(i), value: [i, 'x'], fence: null, ifRevision: null });
  }
  applyAll(sm, commands, random);
  sm.checkInvariants();
  return sm;
}

function concat(parts: Uint8Array[]): Buffer {
  return Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
}

function drain(iterator: Iterator<Uint8Array, void, undefined>): Uint8Array[] {
  const parts: Uint8Array[] = [];
  for (let step = iterator.next(); step.done !== true; step = iterator.next())
    parts.push(step.value);
  return parts;
}

t.test('slices concatenate to the one-step snapshot, in many steps, and restore', async (t) => {
  for (const [n, sliceEntries] of [
    [0, 1],
    [3, 1],
    [40, 7],
    [3000, 64],
    [2000, 4096],
  ] as const) {
    const sm = randomState(n, SEED + n);
    const parts = drain(sm.snapshotSlices(sliceEntries));
    const whole = Buffer.from(sm.snapshot());
    t.ok(concat(parts).equals(whole), `n=${n} slice=${sliceEntries}: same bytes`);
    const rows = n + sm.counts().keys + sm.counts().elections;
    if (rows > sliceEntries * 4)
      t.ok(parts.length > rows / sliceEntries, `n=${n}: ${parts.length} steps`);
    const restored = new CoordStateMachine({ idempotencyWindowMs: 60_000 });
    restored.restore(concat(parts));
    t.ok(Buffer.from(restored.snapshot()).equals(whole), `n=${n}: restores to the same state`);
  }
});

t.test('the default slice size bounds each step', async (t) => {
  const sm = randomState(5000, SEED);
  const parts = drain(sm.snapshotSlices());
  t.ok(parts.length > 5, `${parts.length} steps for 5000 leases`);
  t.ok(concat(parts).equals(Buffer.from(sm.snapshot())));
});

t.test('an entry applied between two steps stops the encoding', async (t) => {
  const sm = randomState(300, SEED);
  const slices = sm.snapshotSlices(16);
  slices.next();
  sm.apply(sm.lastAppliedIndex() + 1, sm.lastAppliedTimeMs(), null);
  t.throws(() => slices.next(), /applied an entry between two slices/);
});

t.test('a bad slice size is refused', async (t) => {
  const sm = new CoordStateMachine();
  t.throws(() => sm.snapshotSlices(0).next(), /positive integer/);
});

// Proves, on seeded random command sequences with random time jumps, that CoordStateMachine matches a small obviously-correct reference model and keeps the safety properties: one holder per name, strictly increasing tokens per resource, no expiry before ttl, idempotent repeats, FIFO waiters, and restore(snapshot()) then continuing ≡ continuing.
import assert from 'node:assert';
import t from 'tap';
import fc from 'fast-check';
import {
  CoordStateMachine,
  type Command,
  type CommandEnvelope,
  type CommandResult,
} from '../src/index.js';
import { REF_WINDOW_MS, RefModel } from './fixtures/reference-model.js';

const SEED = Number(process.env['COORD_STATE_SEED'] ?? 424242);
const RUNS = Number(process.env['COORD_STATE_RUNS'] ?? 200);
const LIMITS = { idempotencyWindowMs: REF_WINDOW_MS, historyPerNameMax: 100_000 };

const NAMES = ['a', 'b'];
const HOLDERS = ['A', 'B', 'C'];
const CANDS = ['p', 'q', 'r'];

/** A command with symbolic references (token/waiter picks) resolved against the model at run time. */
type Spec = {
  op: number;
  n: number;
  h: number;
  ttl: number;
  wait: number;
  ld: number;
  mh: number;
  pick: number;
  v: number;
};
type Step = { dt: number; spec: Spec; key: number; snapAfter: boolean };

const specArb: fc.Arbitrary<Spec> = fc.record({
  op: fc.integer({ min: 0, max: 30 }),
  n: fc.nat(1),
  h: fc.nat(2),
  ttl: fc.constantFrom(100, 250, 1000, 50),
  wait: fc.constantFrom(0, 300, 2000, 2000),
  ld: fc.constantFrom(0, 0, 500),
  mh: fc.constantFrom(-1, -1, 150, 600),
  pick: fc.nat(20),
  v: fc.nat(3),
});
const stepArb: fc.Arbitrary<Step> = fc.record({
  dt: fc.constantFrom(0, 0, 0, 1, 20, 50, 50, 99, 100, 250, 499, 500, 1000, 6000),
  spec: specArb,
  key: fc.integer({ min: -12, max: 3 }),
  snapAfter: fc.boolean(),
});

/** A session id: usually a live one, sometimes an ended or unknown one. */
function pickSession(spec: Spec, ref: RefModel): string {
  const ids = ref.sessionIds;
  if (spec.pick % 5 === 4 || ids.length === 0) return 's1';
  return ids[ids.length - 1 - (spec.pick % 3 === 2 ? Math.min(1, ids.length - 1) : 0)]!;
}

/** The new commands (ops 17–30): sessions, semaphores, shared and session-bound grants, revoke. */
function resolvePrimitive(spec: Spec, ref: RefModel): Command | null {
  const name = NAMES[spec.n]!;
  const holder = HOLDERS[spec.h]!;
  const sem = ref.sems.get('s');
  const permit = sem?.permits[spec.pick % Math.max(1, sem.permits.length)];
  const tokens = ref.knownTokens();
  const anyToken = tokens[spec.pick % Math.max(1, tokens.length)] ?? 1;
  const bound = spec.v % 2 === 0;
  switch (spec.op) {
    case 17:
      return { type: 'session.create', ttlMs: spec.ttl === 50 ? 50 : spec.ttl * 8, name: null };
    case 18:
      return { type: 'session.keepalive', sessionId: pickSession(spec, ref) };
    case 19:
      return { type: 'session.end', sessionId: pickSession(spec, ref) };
    case 20:
    case 21:
      return {
        type: 'lease.acquire',
        name,
        holder,
        ttlMs: bound ? null : spec.ttl,
        waitMs: spec.wait,
        lockDelayMs: spec.ld,
        maxHoldMs: bound || spec.mh < 0 ? null : spec.mh,
        ...(bound ? { session: pickSession(spec, ref) } : {}),
        ...(spec.op === 21 ? { mode: 'shared' as const } : {}),
      };
    case 22:
    case 23:
      return {
        type: 'semaphore.acquire',
        name: 's',
        holder,
        limit: spec.pick % 7 === 6 ? 2 : 1,
        ttlMs: bound ? null : spec.ttl,
        session: bound ? pickSession(spec, ref) : null,
        waitMs: spec.wait,
      };
    case 24:
      return {
        type: 'semaphore.renew',
        name: 's',
        holder: permit && spec.pick % 3 !== 2 ? permit.holder : holder,
        fencingToken: permit && spec.pick % 3 !== 2 ? permit.token : anyToken,
      };
    case 25:
      return {
        type: 'semaphore.release',
        name: 's',
        holder: permit && spec.pick % 3 !== 2 ? permit.holder : holder,
        fencingToken: permit && spec.pick % 3 !== 2 ? permit.token : anyToken,
      };
    case 26: {
      const ids = ref.semWaiterIds();
      return {
        type: 'semaphore.cancelWait',
        name: 's',
        holder,
        waiterId: ids[spec.pick % Math.max(1, ids.length)] ?? 1,
      };
    }
    case 27: {
      const live = ref.leases.get(name)?.grants ?? [];
      return {
        type: 'lease.revoke',
        name,
        fencingToken:
          spec.v === 0 ? null : (live[spec.pick % Math.max(1, live.length)]?.token ?? anyToken),
        reason: null,
      };
    }
    case 28:
      return {
        type: 'semaphore.revoke',
        name: 's',
        fencingToken: spec.v === 0 ? null : (permit?.token ?? anyToken),
        reason: 'ops',
      };
    case 29:
      return {
        type: 'election.revoke',
        group: 'g',
        fencingToken:
          spec.v === 0
            ? null
            : (ref.groups.get('g')?.leaderToken ?? 0) + (spec.pick % 4 === 3 ? 1 : 0),
        reason: null,
      };
    case 30:
      return {
        type: 'election.campaign',
        group: 'g',
        candidate: CANDS[spec.h]!,
        ttlMs: null,
        value: spec.v,
        session: pickSession(spec, ref),
      };
    default:
      return null;
  }
}

function resolve(spec: Spec, ref: RefModel): Command | null {
  if (spec.op >= 17) return resolvePrimitive(spec, ref);
  const name = NAMES[spec.n]!;
  const holder = HOLDERS[spec.h]!;
  const cand = CANDS[spec.h]!;
  const current = ref.leases.get(name)?.grants[0];
  const tokens = ref.knownTokens();
  const token =
    spec.pick % 3 !== 2 && current
      ? current.token
      : (tokens[spec.pick % Math.max(1, tokens.length)] ?? 1);
  const holderOf = spec.pick % 3 !== 2 && current ? current.holder : holder;
  const leaderToken = ref.groups.get('g')?.leaderToken ?? 0;
  switch (spec.op) {
    case 0:
    case 1:
    case 2:
      return {
        type: 'lease.acquire',
        name,
        holder,
        ttlMs: spec.ttl,
        waitMs: spec.wait,
        lockDelayMs: spec.ld,
        maxHoldMs: spec.mh < 0 ? null : spec.mh,
      };
    case 3:
    case 4:
      return { type: 'lease.renew', name, holder: holderOf, fencingToken: token };
    case 5:
    case 6:
      return { type: 'lease.release', name, holder: holderOf, fencingToken: token };
    case 7: {
      const ids = ref.waiterIds();
      return {
        type: 'lease.cancelWait',
        name,
        holder,
        waiterId: ids[spec.pick % Math.max(1, ids.length)] ?? 1,
      };
    }
    case 8:
    case 9:
      return {
        type: 'election.campaign',
        group: 'g',
        candidate: cand,
        ttlMs: spec.ttl,
        value: spec.v === 0 ? null : spec.v,
      };
    case 10: {
      const cands = ref.groups.get('g')?.cands ?? [];
      return {
        type: 'election.renew',
        group: 'g',
        candidate:
          spec.pick % 3 !== 2 ? (cands[spec.pick % Math.max(1, cands.length)]?.c ?? cand) : cand,
      };
    }
    case 11: {
      const cands = ref.groups.get('g')?.cands ?? [];
      return {
        type: 'election.resign',
        group: 'g',
        candidate:
          spec.pick % 3 !== 2 ? (cands[spec.pick % Math.max(1, cands.length)]?.c ?? cand) : cand,
      };
    }
    case 12:
      return {
        type: 'election.proclaim',
        group: 'g',
        candidate: spec.pick % 2 === 0 ? (ref.groups.get('g')?.cands[0]?.c ?? cand) : cand,
        fencingToken: spec.pick % 4 === 3 ? leaderToken + 1 : leaderToken,
        value: spec.v,
      };
    case 15:
      return { type: 'election.campaign', group: 'g', candidate: cand, ttlMs: 1000, value: null };
    case 13:
      return {
        type: 'kv.put',
        key: 'k',
        value: spec.v,
        fence:
          spec.pick % 3 === 0
            ? { lease: name, fencingToken: token }
            : spec.pick % 3 === 1
              ? { election: 'g', fencingToken: leaderToken }
              : { semaphore: 's', fencingToken: ref.sems.get('s')?.permits[0]?.token ?? token },
        ifRevision: spec.v === 3 ? 0 : null,
      };
    case 14:
      return { type: 'kv.delete', key: 'k', fence: null, ifRevision: spec.v === 3 ? 0 : null };
    case 16:
      return null;
    default:
      return null;
  }
}
// op 16 → null entry (time only); ops 17–30 → resolvePrimitive.

function project(r: CommandResult): unknown {
  const replayed = r.replayed === true ? { replayed: true } : {};
  return r.ok
    ? { ok: true, value: r.value, ...replayed }
    : { ok: false, code: r.error.code, ...replayed };
}

interface Seen {
  token: number;
  holder: string;
  expiresAtMs: number;
}

/** Outcome tallies over all runs, printed so a reader can see what the runs exercised. */
const tally = new Map<string, number>();
function count(label: string): void {
  tally.set(label, (tally.get(label) ?? 0) + 1);
}

function runScenario(steps: Step[]): void {
  const sm = new CoordStateMachine(LIMITS);
  const ref = new RefModel();
  let twin: CoordStateMachine | null = null; // restored from a snapshot part-way, run in lockstep
  let now = 0;
  let index = 0;
  const lastSeen = new Map<string, Seen>(); // lease name → last grant observed (safety checks)
  const maxToken = new Map<string, number>();
  for (const step of steps) {
    now += step.dt;
    index++;
    const cmd = resolve(step.spec, ref);
    const env: CommandEnvelope | null =
      cmd === null
        ? null
        : {
            v: 1,
            command: cmd,
            idempotency:
              step.key < 0 ? null : { key: `i${step.key}`, fingerprint: JSON.stringify(cmd) },
          };
    const out = sm.apply(index, now, env);
    const refRes = ref.apply(index, now, env);
    sm.checkInvariants();
    count(
      `${cmd?.type ?? 'null'} ${out.result.ok ? ((out.result.value as { kind?: string } | null)?.kind ?? 'ok') : out.result.error.code}${out.result.replayed ? ' replayed' : ''}`,
    );
    if (
      out.changed.some((c) => c.startsWith('lease:')) &&
      cmd?.type !== 'lease.acquire' &&
      sm.counts().waiters < ref.waiterIds().length + 1
    )
      count('lease change by expiry/settle');
    assert.deepStrictEqual(
      project(out.result),
      refRes,
      `result of ${JSON.stringify(env)} at ${now}`,
    );
    if (twin !== null) {
      const outTwin = twin.apply(index, now, env);
      assert.deepStrictEqual(outTwin, out, 'restored twin diverged');
    }
    // State views equal the reference.
    for (const name of NAMES) {
      const view = sm.getLease(name, now);
      assert.deepStrictEqual(view, ref.leaseView(name, now), `lease ${name} at ${now}`);
      // Safety: tokens strictly increase per name; no grant disappears before its expiry unless released by its holder.
      const prev = lastSeen.get(name);
      if (view !== null && (prev === undefined || prev.token !== view.fencingToken)) {
        assert(view.fencingToken > (maxToken.get(name) ?? 0), `token of ${name} did not increase`);
        maxToken.set(name, view.fencingToken);
      }
      if (prev !== undefined && (view === null || view.fencingToken !== prev.token)) {
        const released =
          (cmd?.type === 'lease.release' && out.result.ok && cmd.fencingToken === prev.token) ||
          (cmd?.type === 'lease.revoke' && out.result.ok); // an operator revoke ends it early by design
        assert(
          released || now >= prev.expiresAtMs,
          `lease ${name} token ${prev.token} ended at ${now} before ${prev.expiresAtMs}`,
        );
      }
      if (view === null) lastSeen.delete(name);
      else
        lastSeen.set(name, {
          token: view.fencingToken,
          holder: view.holder,
          expiresAtMs: now + view.remainingMs,
        });
    }
    for (const name of NAMES) {
      assert.deepStrictEqual(
        sm.leaseState(name, now),
        ref.leaseStateView(name, now),
        `lease state ${name}`,
      );
      assert.deepStrictEqual(
        sm.history('lease', name, 1000),
        ref.history('lease', name),
        `history ${name}`,
      );
    }
    assert.deepStrictEqual(sm.getSemaphore('s', now), ref.semView('s', now), `semaphore at ${now}`);
    assert.deepStrictEqual(sm.history('semaphore', 's', 1000), ref.history('semaphore', 's'));
    assert.deepStrictEqual(sm.history('election', 'g', 1000), ref.history('election', 'g'));
    const sv = sm.getSemaphore('s', now);
    assert(sv === null || sv.holders.length <= sv.limit, 'semaphore over its limit');
    for (const id of ref.sessionIds)
      assert.equal(sm.getSession(id, now) !== null, ref.sessions.has(id), `session ${id}`);
    const ev = sm.getElection('g');
    assert.deepStrictEqual(ev, ref.electionView('g'), `election at ${now}`);
    if (ev.leader !== null && ev.leader.fencingToken !== (maxToken.get('election:g') ?? 0)) {
      assert(
        ev.leader.fencingToken > (maxToken.get('election:g') ?? 0),
        'election token did not increase',
      );
      maxToken.set('election:g', ev.leader.fencingToken);
    }
    assert.deepStrictEqual(sm.getKv('k')?.revision ?? null, ref.kv.get('k')?.revision ?? null);
    assert.equal(sm.nextDueMs(), ref.nextDueMs(), 'nextDueMs');
    assert.equal(sm.counts().waiters, ref.waiterIds().length);
    for (const id of ref.waiterIds())
      assert.equal(
        sm.waiterOutcome(
          ref.waiterIds().length
            ? [...ref.leases].find(([, l]) => l.waiters.some((w) => w.id === id))![0]
            : '',
          id,
        ).kind,
        'pending',
      );
    // Every waiter the entry finished has the same fate (a timed-out lease waiter: the same holder).
    for (const f of ref.finished) {
      const o = sm.waiterOutcome(f.name, f.id);
      assert.equal(o.kind, f.kind, `waiter ${f.id} on ${f.name}`);
      if (f.holder !== undefined)
        assert.equal((o as { holder?: string | null }).holder, f.holder, `waiter ${f.id} holder`);
    }
    if (step.snapAfter && twin === null) {
      const bytes = sm.snapshot();
      twin = new CoordStateMachine(LIMITS);
      twin.restore(bytes);
      assert.deepStrictEqual(
        Buffer.from(twin.snapshot()),
        Buffer.from(bytes),
        'snapshot bytes after restore',
      );
    }
  }
  if (twin !== null)
    assert.deepStrictEqual(
      Buffer.from(twin.snapshot()),
      Buffer.from(sm.snapshot()),
      'final snapshot of twin',
    );
}

t.test(
  `random command sequences match the reference model and keep the safety properties (seed ${SEED}, ${RUNS} runs)`,
  async (t) => {
    const r = fc.check(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 120, size: 'max' }), (steps) =>
        runScenario(steps),
      ),
      { seed: SEED, numRuns: RUNS },
    );
    if (r.failed)
      t.fail(
        `${fc.defaultReportMessage(r)}\nreplay with COORD_STATE_SEED=${SEED}\n${String(r.errorInstance)}`,
      );
    else t.pass(`seed ${SEED}`);
    t.comment(
      [...tally]
        .sort()
        .map(([k, v]) => `${k}: ${v}`)
        .join('\n'),
    );
  },
);

t.test('FIFO: waiters on one name are granted in queue order', async (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 30 }),
      fc.array(fc.constantFrom(0, 100, 400), { maxLength: 60 }),
      (order, jumps) => {
        const sm = new CoordStateMachine();
        let i = 0;
        let now = 0;
        sm.apply(++i, now, {
          v: 1,
          command: {
            type: 'lease.acquire',
            name: 'L',
            holder: 'H',
            ttlMs: 100,
            waitMs: 0,
            lockDelayMs: 0,
            maxHoldMs: null,
          },
          idempotency: null,
        });
        const queued: string[] = [];
        order.forEach((h, n) => {
          const holder = `W${n}-${h}`;
          const out = sm.apply(++i, now, {
            v: 1,
            command: {
              type: 'lease.acquire',
              name: 'L',
              holder,
              ttlMs: 100,
              waitMs: 60_000,
              lockDelayMs: 0,
              maxHoldMs: null,
            },
            idempotency: null,
          });
          if (out.result.ok && (out.result.value as { kind: string }).kind === 'queued')
            queued.push(holder);
        });
        const granted: string[] = [];
        for (const dt of [...jumps, ...queued.map(() => 100)]) {
          now += dt;
          sm.apply(++i, now, null);
          const h = sm.getLease('L', now)?.holder;
          if (h !== undefined && h !== 'H' && granted.at(-1) !== h) granted.push(h);
        }
        assert.deepStrictEqual(granted, queued.slice(0, granted.length));
        assert.equal(granted.length, queued.length);
      },
    ),
    { seed: SEED, numRuns: 100 },
  );
  t.pass(`seed ${SEED}`);
});

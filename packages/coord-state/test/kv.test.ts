// Proves fenced KV writes (docs/api.md, §5): commit only with the resource's current live token at the entry's cluster time; ifRevision, size and limits.
import t from 'tap';
import { CoordStateMachine, type Command } from '../src/index.js';
import { Driver, errCode, errDetails, okValue } from './fixtures/driver.js';

type Granted = { fencingToken: number };

t.test('put returns revision = log index; get reads it back', async (t) => {
  const d = new Driver();
  const r = okValue(
    d.run({ type: 'kv.put', key: 'k', value: { a: [1, 'x'] }, fence: null, ifRevision: null })
      .result,
  );
  t.same(r, { key: 'k', revision: 1 });
  t.same(d.sm.getKv('k'), { key: 'k', value: { a: [1, 'x'] }, revision: 1 });
  t.equal(d.sm.getKv('nope'), null);
});

t.test(
  'a fenced write with the live token commits; stale or expired token is stale_token with current',
  async (t) => {
    const d = new Driver();
    const a = okValue<Granted>(d.acquire('L', 'A', { ttlMs: 1000 }));
    okValue(
      d.run({
        type: 'kv.put',
        key: 'k',
        value: 1,
        fence: { lease: 'L', fencingToken: a.fencingToken },
        ifRevision: null,
      }).result,
    );
    // At the expiry time the grant is no longer live, even though no entry expired it yet.
    const late = d.run(
      {
        type: 'kv.put',
        key: 'k',
        value: 2,
        fence: { lease: 'L', fencingToken: a.fencingToken },
        ifRevision: null,
      },
      { atMs: 1000 },
    ).result;
    t.equal(errCode(late), 'stale_token');
    t.same(errDetails(late), { current: null });
    const b = okValue<Granted>(d.acquire('L', 'B'));
    const stale = d.run({
      type: 'kv.put',
      key: 'k',
      value: 3,
      fence: { lease: 'L', fencingToken: a.fencingToken },
      ifRevision: null,
    }).result;
    t.same(errDetails(stale), { current: b.fencingToken });
    t.equal(d.sm.getKv('k')?.value, 1, 'nothing written by rejected writes');
  },
);

t.test(
  'ifRevision: 0 creates only if absent; n must match; else revision_mismatch with the current revision',
  async (t) => {
    const d = new Driver();
    const put = (ifRevision: number | null) =>
      d.run({ type: 'kv.put', key: 'k', value: 'v', fence: null, ifRevision }).result;
    t.same(okValue(put(0)), { key: 'k', revision: 1 });
    const r = put(0);
    t.equal(errCode(r), 'revision_mismatch');
    t.same(errDetails(r), { revision: 1 });
    t.same(okValue(put(1)), { key: 'k', revision: 3 });
    t.equal(errCode(put(1)), 'revision_mismatch');
  },
);

t.test('delete: missing key is not_found; ifRevision must match; fenced like put', async (t) => {
  const d = new Driver();
  const del = (
    ifRevision: number | null,
    fence: { lease: string; fencingToken: number } | null = null,
  ) => d.run({ type: 'kv.delete', key: 'k', fence, ifRevision }).result;
  t.equal(errCode(del(null)), 'not_found');
  t.equal(errCode(del(0)), 'not_found');
  d.run({ type: 'kv.put', key: 'k', value: 'v', fence: null, ifRevision: null });
  t.equal(errCode(del(0)), 'revision_mismatch');
  t.equal(errCode(del(null, { lease: 'L', fencingToken: 5 })), 'stale_token');
  const out = d.run({
    type: 'kv.delete',
    key: 'k',
    fence: null,
    ifRevision: d.sm.getKv('k')!.revision,
  });
  t.same(okValue(out.result), { key: 'k', deleted: true });
  t.same(out.changed, ['kv:k']);
  t.equal(d.sm.getKv('k'), null);
});

t.test(
  'values over valueBytesMax are payload_too_large; keysMax gives resource_exhausted; non-JSON is invalid_argument',
  async (t) => {
    const d = new Driver({ valueBytesMax: 8, keysMax: 1 });
    const r = d.run({
      type: 'kv.put',
      key: 'k',
      value: 'é'.repeat(4),
      fence: null,
      ifRevision: null,
    }).result; // "éééé" = 10 bytes
    t.equal(errCode(r), 'payload_too_large');
    okValue(d.run({ type: 'kv.put', key: 'a', value: 1, fence: null, ifRevision: null }).result);
    t.equal(
      errCode(d.run({ type: 'kv.put', key: 'b', value: 1, fence: null, ifRevision: null }).result),
      'resource_exhausted',
    );
    okValue(d.run({ type: 'kv.put', key: 'a', value: 2, fence: null, ifRevision: null }).result);
    const bad = d.run({
      type: 'kv.put',
      key: 'a',
      value: new Date() as never,
      fence: null,
      ifRevision: null,
    }).result;
    t.equal(errDetails(bad)['field'], 'value');
    const badFence = d.run({
      type: 'kv.put',
      key: 'a',
      value: 1,
      fence: { lease: 'L', election: 'G', fencingToken: 1 } as never,
      ifRevision: null,
    }).result;
    t.equal(errDetails(badFence)['field'], 'fence');
  },
);

t.test(
  'the stalled-holder story of the README (docs/concepts.md, BC-02) holds entry by entry',
  async (t) => {
    const sm = new CoordStateMachine();
    const env = (command: Command) => ({ v: 1 as const, command, idempotency: null });
    sm.apply(9, 0, null);
    t.same(
      sm.apply(
        10,
        0,
        env({
          type: 'lease.acquire',
          name: 'L',
          holder: 'A',
          ttlMs: 3000,
          waitMs: 0,
          lockDelayMs: 1000,
          maxHoldMs: null,
        }),
      ).result,
      {
        ok: true,
        value: { kind: 'granted', name: 'L', holder: 'A', fencingToken: 10000, ttlMs: 3000 },
      },
    );
    t.same(
      sm.apply(
        11,
        50,
        env({
          type: 'kv.put',
          key: 'counter',
          value: 1,
          fence: { lease: 'L', fencingToken: 10000 },
          ifRevision: null,
        }),
      ).result,
      { ok: true, value: { key: 'counter', revision: 11 } },
    );
    t.equal(sm.nextDueMs(), 3000);
    t.same(sm.apply(12, 3000, env({ type: 'time.advance' })).changed, ['lease:L']);
    const held = sm.apply(
      13,
      3500,
      env({
        type: 'lease.acquire',
        name: 'L',
        holder: 'B',
        ttlMs: 3000,
        waitMs: 0,
        lockDelayMs: 0,
        maxHoldMs: null,
      }),
    ).result;
    t.same(!held.ok && held.error.details, { holder: null, lockDelayRemainingMs: 500 });
    t.match(
      sm.apply(
        14,
        4100,
        env({
          type: 'lease.acquire',
          name: 'L',
          holder: 'B',
          ttlMs: 3000,
          waitMs: 0,
          lockDelayMs: 0,
          maxHoldMs: null,
        }),
      ).result,
      { ok: true, value: { fencingToken: 14000 } },
    );
    t.same(
      sm.apply(
        15,
        4200,
        env({
          type: 'kv.put',
          key: 'counter',
          value: 2,
          fence: { lease: 'L', fencingToken: 14000 },
          ifRevision: null,
        }),
      ).result,
      { ok: true, value: { key: 'counter', revision: 15 } },
    );
    const stale = sm.apply(
      16,
      5000,
      env({
        type: 'kv.put',
        key: 'counter',
        value: 2,
        fence: { lease: 'L', fencingToken: 10000 },
        ifRevision: null,
      }),
    ).result;
    t.same(!stale.ok && [stale.error.code, stale.error.details], [
      'stale_token',
      { current: 14000 },
    ]);
    const renew = sm.apply(
      17,
      5010,
      env({ type: 'lease.renew', name: 'L', holder: 'A', fencingToken: 10000 }),
    ).result;
    t.equal(!renew.ok && renew.error.code, 'lease_expired');
    t.same(sm.getKv('counter'), { key: 'counter', value: 2, revision: 15 });
  },
);

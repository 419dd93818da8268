// Proves the fencing checker flags a stale-token write the store accepted, one token shared by two
// writers, and a server that reports an older holder after a newer grant was seen (BC-02, BC-07).
import t from 'tap';
import { checkFencing, fencingChecker } from './fencing.js';
import type { FencedWriteRecord } from '@tenure/testkit';
import { HistoryBuilder, ok, fail, runRecord, unknown } from './testing.js';
import type { JsonObject, OpOutcome } from '../types.js';

const rec = (
  seq: number,
  token: number,
  writer: string,
  accepted = true,
  resource = 'lease:L',
): FencedWriteRecord => ({
  seq,
  timeMs: seq * 10,
  resource,
  fencingToken: token,
  writer,
  accepted,
  highestBefore: null,
  payload: null,
});

t.test('a well-behaved store log passes', async (t) => {
  const log = [
    rec(1, 1, 'A'),
    rec(2, 1, 'A'),
    rec(3, 2, 'B'),
    rec(4, 1, 'A', false),
    rec(5, 2, 'B'),
    rec(6, 1, 'X', true, 'lease:M'),
  ];
  const r = checkFencing([], log);
  t.ok(r.ok, JSON.stringify(r.violations));
  t.equal(r.stats['writesAccepted'], 5);
  t.equal(r.stats['writesRejected'], 1);
});

t.test('BC-02: an accepted write with a stale token is flagged', async (t) => {
  const r = checkFencing([], [rec(1, 1, 'A'), rec(2, 2, 'B'), rec(3, 1, 'A')]);
  t.notOk(r.ok);
  t.equal(r.violations[0]!.property, 'fencing-stale-accepted');
});

t.test('two writers under one token is flagged', async (t) => {
  const r = checkFencing([], [rec(1, 3, 'A'), rec(2, 3, 'B')]);
  t.notOk(r.ok);
  t.equal(r.violations[0]!.property, 'fencing-token-shared');
});

t.test('without a store log, accepted fs.write ops in real-time order are checked', async (t) => {
  const h = new HistoryBuilder();
  h.add(
    'b',
    'fs.write',
    { resource: 'lease:L', fencingToken: 2, writer: 'B' },
    0,
    10,
    ok({ accepted: true }),
  );
  h.add(
    'a',
    'fs.write',
    { resource: 'lease:L', fencingToken: 1, writer: 'A' },
    20,
    30,
    ok({ accepted: true }),
  );
  const r = checkFencing(h.ops, null);
  t.notOk(r.ok);
  t.equal(r.violations[0]!.property, 'fencing-stale-accepted');
  const h2 = new HistoryBuilder();
  h2.add(
    'b',
    'fs.write',
    { resource: 'lease:L', fencingToken: 2, writer: 'B' },
    0,
    10,
    ok({ accepted: true }),
  );
  h2.add(
    'a',
    'fs.write',
    { resource: 'lease:L', fencingToken: 1, writer: 'A' },
    20,
    30,
    fail('stale_token'),
  );
  t.ok(checkFencing(h2.ops, null).ok);
});

t.test('BC-07: a renew acked for the old holder after the new grant was observed', async (t) => {
  const h = new HistoryBuilder();
  h.add(
    'a',
    'lease.acquire',
    { name: 'L', holder: 'A', ttlMs: 3000 },
    0,
    10,
    ok({ name: 'L', holder: 'A', fencingToken: 1, ttlMs: 3000 }),
  );
  h.add(
    'b',
    'lease.acquire',
    { name: 'L', holder: 'B', ttlMs: 3000 },
    4000,
    4010,
    ok({ name: 'L', holder: 'B', fencingToken: 2, ttlMs: 3000 }),
  );
  t.ok(checkFencing(h.ops, []).ok);
  const renew = h.add(
    'a',
    'lease.renew',
    { name: 'L', holder: 'A', fencingToken: 1 },
    4100,
    4110,
    ok({ name: 'L', holder: 'A', fencingToken: 1, ttlMs: 3000 }),
  );
  const r = checkFencing(h.ops, []);
  t.notOk(r.ok);
  t.equal(r.violations[0]!.property, 'holder-regression');
  t.ok(r.violations[0]!.opIds!.includes(renew));
});

t.test(
  'BC-10/BC-22: an old leader read after the new leader was seen; concurrent reads are fine',
  async (t) => {
    const h = new HistoryBuilder();
    const leader = (c: string, tok: number) =>
      ok({
        group: 'g',
        leader: { candidate: c, value: null, fencingToken: tok },
        candidates: [],
        revision: tok,
      });
    h.add('q', 'election.get', { group: 'g' }, 0, 100, leader('Q', 2));
    h.add('r', 'election.get', { group: 'g' }, 50, 60, leader('P', 1));
    t.ok(checkFencing(h.ops, []).ok, 'overlapping reads may disagree');
    h.add('r', 'election.get', { group: 'g' }, 200, 210, leader('P', 1));
    t.notOk(checkFencing(h.ops, []).ok);
  },
);

t.test('the checker object reads fenced-store.jsonl from the run folder', async (t) => {
  const dir = t.testdir({
    'fenced-store.jsonl':
      [rec(1, 2, 'B'), rec(2, 1, 'A')].map((r) => JSON.stringify(r)).join('\n') + '\n',
  });
  const r = await fencingChecker().check(runRecord([], { runDir: dir }));
  t.notOk(r.ok);
  t.equal(r.stats['storeLog'], 'fenced-store.jsonl');
});

t.test("BC-15: a write rejected inside the writer's belief interval is flagged", async (t) => {
  const h = new HistoryBuilder();
  h.add(
    'a',
    'fs.write',
    { resource: 'lease:L', fencingToken: 1, writer: 'A', beliefUntilMs: 2000 },
    1000,
    1010,
    fail('stale_token'),
  );
  h.add(
    'a',
    'fs.write',
    { resource: 'lease:L', fencingToken: 1, writer: 'A', beliefUntilMs: 2000 },
    1995,
    2005,
    fail('stale_token'),
  );
  h.add(
    'z',
    'fs.write',
    { resource: 'lease:L', fencingToken: 1, writer: 'Z' },
    5000,
    5010,
    fail('stale_token'),
  );
  h.add(
    'l',
    'fs.write',
    { resource: 'lease:L', fencingToken: 1, writer: 'LIB' },
    6000,
    6010,
    fail('stale_token', 409, { believedAfter: true }),
  );
  h.add(
    'l',
    'fs.write',
    { resource: 'lease:L', fencingToken: 1, writer: 'LIB' },
    7000,
    7010,
    fail('stale_token', 409, { believedAfter: false }),
  );
  const r = checkFencing(h.ops, []);
  t.same(
    r.violations.map((v) => [v.property, v.opIds]),
    [
      ['belief-violated', [1]],
      ['belief-violated', [4]],
    ],
  );
});

t.test(
  'a write rejected after an operator may have revoked its grant is not flagged',
  async (t) => {
    const write = (h: HistoryBuilder, at: number): void => {
      h.add(
        'a',
        'fs.write',
        { resource: 'lease:L', fencingToken: 1, writer: 'A', beliefUntilMs: 2000 },
        at,
        at + 10,
        fail('stale_token'),
      );
    };
    for (const [revoke, outcome, flagged] of [
      [{ name: 'L' }, unknown(), false],
      [{ name: 'L', fencingToken: 1 }, ok({ name: 'L', revoked: [1] }), false],
      [{ name: 'L', fencingToken: 2 }, ok({ name: 'L', revoked: [2] }), true],
      [{ name: 'L', fencingToken: 1 }, fail('not_holder'), true],
      [{ name: 'M' }, ok({ name: 'M', revoked: [1] }), true],
    ] satisfies [JsonObject, OpOutcome, boolean][]) {
      const h = new HistoryBuilder();
      h.add('op', 'lease.revoke', revoke, 900, 950, outcome);
      write(h, 1000);
      t.equal(checkFencing(h.ops, []).ok, !flagged, JSON.stringify([revoke, outcome]));
    }
  },
);

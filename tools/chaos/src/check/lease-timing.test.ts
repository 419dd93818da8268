// Proves the lease-timing checker flags an early expiry (another holder granted before send time +
// ttl × (1 − drift)) and a lease still held long past ttl + Δmax, excuses leaderless time and
// partitions as documented, and reports the lateness distribution of abandoned leases.
import t from 'tap';
import { checkLeaseTiming, leaderlessMs, faultsDuring } from './lease-timing.js';
import { HistoryBuilder, ok, fail, DEFAULT_TIMING } from './testing.js';
import type { FaultEvent, LeaderSample } from '../types.js';

const opts = { timing: DEFAULT_TIMING };
const grant = (holder: string, token: number) =>
  ok({ name: 'L', holder, fencingToken: token, ttlMs: 3000 });

t.test(
  'BC-03/BC-18: a second holder granted before ttl × (1 − drift) is an early expiry',
  async (t) => {
    const h = new HistoryBuilder();
    h.add('a', 'lease.acquire', { name: 'L', holder: 'A', ttlMs: 3000 }, 0, 10, grant('A', 1));
    h.add(
      'a',
      'lease.renew',
      { name: 'L', holder: 'A', fencingToken: 1 },
      1000,
      1010,
      grant('A', 1),
    );
    h.add(
      'b',
      'lease.acquire',
      { name: 'L', holder: 'B', ttlMs: 3000, waitMs: 5000 },
      500,
      3500,
      grant('B', 2),
    );
    const r = checkLeaseTiming(h.ops, [], [], opts);
    t.notOk(r.ok);
    t.equal(r.violations[0]!.property, 'early-expiry');
    t.ok(Number(r.stats['earlyMarginMinMs']) < 0);
  },
);

t.test('expiry at ttl × (1 − drift) after the last renew is fine; so is a release', async (t) => {
  const h = new HistoryBuilder();
  h.add('a', 'lease.acquire', { name: 'L', holder: 'A', ttlMs: 3000 }, 0, 10, grant('A', 1));
  h.add('a', 'lease.renew', { name: 'L', holder: 'A', fencingToken: 1 }, 1000, 1010, grant('A', 1));
  h.add(
    'b',
    'lease.acquire',
    { name: 'L', holder: 'B', ttlMs: 3000, waitMs: 5000 },
    500,
    3980,
    grant('B', 2),
  );
  h.add(
    'b',
    'lease.release',
    { name: 'L', holder: 'B', fencingToken: 2 },
    4000,
    4010,
    ok({ name: 'L', released: true }),
  );
  h.add('c', 'lease.acquire', { name: 'L', holder: 'C', ttlMs: 3000 }, 4020, 4030, grant('C', 3));
  const r = checkLeaseTiming(h.ops, [], [], opts);
  t.ok(r.ok, JSON.stringify(r.violations));
  t.equal(r.stats['grantPairsChecked'], 1);
});

t.test('election: a contender cannot take over while the leader renews (BC-28)', async (t) => {
  const h = new HistoryBuilder();
  const el = (c: string, tok: number) =>
    ok({
      group: 'g',
      candidate: c,
      elected: true,
      fencingToken: tok,
      leader: { candidate: c, value: null, fencingToken: tok },
    });
  h.add('a', 'election.campaign', { group: 'g', candidate: 'A', ttlMs: 30000 }, 0, 10, el('A', 1));
  h.add('a', 'election.renew', { group: 'g', candidate: 'A' }, 10000, 10010, el('A', 1));
  h.add(
    'b',
    'election.campaign',
    { group: 'g', candidate: 'B', ttlMs: 2000 },
    12000,
    12010,
    el('B', 2),
  );
  const r = checkLeaseTiming(h.ops, [], [], opts);
  t.notOk(r.ok);
  t.equal(r.violations[0]!.property, 'early-expiry');
});

t.test(
  'an abandoned lease still held past ttl + Δmax is late; leaderless time is excused',
  async (t) => {
    const h = new HistoryBuilder();
    h.add('a', 'lease.acquire', { name: 'L', holder: 'A', ttlMs: 3000 }, 0, 10, grant('A', 1));
    h.add(
      'p',
      'lease.get',
      { name: 'L' },
      9000,
      9010,
      ok({ name: 'L', holder: 'A', fencingToken: 1, ttlMs: 3000, remainingMs: 0 }),
    );
    h.add('p', 'lease.get', { name: 'L' }, 9100, 9110, fail('not_found', 404));
    const late = checkLeaseTiming(h.ops, [], [], opts);
    t.notOk(late.ok);
    t.equal(late.violations[0]!.property, 'late-expiry');
    t.equal(late.stats['latenessMaxMs'], 9110 - 3000);
    // The same history with 2 s of no leader (n1 killed, no self-claims) between 1000 and 3000 ms.
    const samples: LeaderSample[] = [];
    for (let ms = 0; ms <= 9200; ms += 200) {
      const leaderless = ms >= 1000 && ms < 3000;
      samples.push({
        timeMs: ms,
        node: 'n1',
        reachable: !leaderless,
        leader: leaderless ? null : 'n1',
        term: 1,
        commitIndex: 1,
        appliedIndex: 1,
        incarnation: 1,
      });
    }
    t.ok(
      leaderlessMs(samples, 0, 9200) >= 1700,
      'about 2 s without a leader (300 ms sample window)',
    );
    const excused = checkLeaseTiming(h.ops, samples, [], opts);
    t.ok(excused.ok, JSON.stringify(excused.violations));
  },
);

t.test('lateness under a partition is reported, not failed (unless strict)', async (t) => {
  const h = new HistoryBuilder();
  h.add('a', 'lease.acquire', { name: 'L', holder: 'A', ttlMs: 3000 }, 0, 10, grant('A', 1));
  h.add(
    'p',
    'lease.get',
    { name: 'L' },
    9000,
    9010,
    ok({ name: 'L', holder: 'A', fencingToken: 1, ttlMs: 3000, remainingMs: 0 }),
  );
  const faults: FaultEvent[] = [
    {
      timeMs: 1000,
      kind: 'partition',
      action: 'inject',
      targets: ['n1'],
      detail: 'isolate n1',
      faultId: 1,
    },
    {
      timeMs: 5000,
      kind: 'partition',
      action: 'heal',
      targets: ['n1'],
      detail: 'heal',
      faultId: 1,
    },
  ];
  t.same(faultsDuring(faults, 0, 9000), ['partition']);
  const r = checkLeaseTiming(h.ops, [], faults, opts);
  t.ok(r.ok);
  t.equal(r.stats['lateUnderFaults'], 1);
  t.notOk(checkLeaseTiming(h.ops, [], faults, { ...opts, strictUnderFaults: true }).ok);
});

t.test('a holder with a renew of unknown outcome is not judged late', async (t) => {
  const h = new HistoryBuilder();
  h.add('a', 'lease.acquire', { name: 'L', holder: 'A', ttlMs: 3000 }, 0, 10, grant('A', 1));
  h.add('a', 'lease.renew', { name: 'L', holder: 'A', fencingToken: 1 }, 1000, 6000, {
    status: 'unknown',
    reason: 'timeout',
  });
  h.add(
    'p',
    'lease.get',
    { name: 'L' },
    9000,
    9010,
    ok({ name: 'L', holder: 'A', fencingToken: 1, ttlMs: 3000, remainingMs: 0 }),
  );
  t.ok(checkLeaseTiming(h.ops, [], [], opts).ok);
});

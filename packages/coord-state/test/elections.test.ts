// Proves the election rules of docs/api.md: oldest live candidacy leads, new higher token on every change of leader, proclaim changes value and revision only, not_holder cases.
import t from 'tap';
import type { CampaignValue, ElectionView } from '../src/index.js';
import { Driver, errCode, okValue } from './fixtures/driver.js';

t.test(
  'an empty or never-used group reads {leader: null, candidates: [], revision: 0}',
  async (t) => {
    const d = new Driver();
    t.same(d.sm.getElection('G'), { group: 'G', leader: null, candidates: [], revision: 0 });
  },
);

t.test('the first candidate is elected with a token; later ones queue behind it', async (t) => {
  const d = new Driver();
  const p = okValue<CampaignValue>(d.campaign('G', 'p', { value: 'vp' }));
  t.same(p, {
    group: 'G',
    candidate: 'p',
    elected: true,
    fencingToken: 1000,
    leader: { candidate: 'p', value: 'vp', fencingToken: 1000 },
  });
  const q = okValue<CampaignValue>(d.campaign('G', 'q'));
  t.same(q, {
    group: 'G',
    candidate: 'q',
    elected: false,
    leader: { candidate: 'p', value: 'vp', fencingToken: 1000 },
  });
  t.same(d.sm.getElection('G'), {
    group: 'G',
    leader: { candidate: 'p', value: 'vp', fencingToken: 1000 },
    candidates: [
      { candidate: 'p', value: 'vp' },
      { candidate: 'q', value: null },
    ],
    revision: 1,
  });
});

t.test(
  'resign by the leader passes leadership to the next with a higher token and revision',
  async (t) => {
    const d = new Driver();
    d.campaign('G', 'p');
    d.campaign('G', 'q');
    const before = d.sm.getElection('G');
    t.same(okValue(d.run({ type: 'election.resign', group: 'G', candidate: 'p' }).result), {
      group: 'G',
      resigned: true,
    });
    const after = d.sm.getElection('G');
    t.equal(after.leader?.candidate, 'q');
    t.ok(after.leader!.fencingToken > before.leader!.fencingToken);
    t.ok(after.revision > before.revision);
  },
);

t.test(
  'expiry of the leader candidacy passes leadership on; a renewed candidacy lives',
  async (t) => {
    const d = new Driver();
    d.campaign('G', 'p', { ttlMs: 1000 });
    d.campaign('G', 'q', { ttlMs: 3000 });
    t.equal(d.sm.nextDueMs(), 1000);
    const out = d.at(1000);
    t.same(out.changed, ['election:G']);
    t.equal(d.sm.getElection('G').leader?.candidate, 'q');
    okValue(d.run({ type: 'election.renew', group: 'G', candidate: 'q' }, { atMs: 2900 }).result);
    d.at(5000);
    t.equal(d.sm.getElection('G').leader?.candidate, 'q');
    d.at(5900);
    t.equal(d.sm.getElection('G').leader, null);
  },
);

t.test(
  'leader and next candidate due in the same entry: one new grant, tokens still increase',
  async (t) => {
    const d = new Driver();
    d.campaign('G', 'p', { ttlMs: 1000 });
    d.campaign('G', 'q', { ttlMs: 1000 });
    d.campaign('G', 'r', { ttlMs: 5000 });
    const first = d.sm.getElection('G').leader!.fencingToken;
    d.at(2000);
    const v = d.sm.getElection('G');
    t.equal(v.leader?.candidate, 'r');
    t.same(
      v.candidates.map((c) => c.candidate),
      ['r'],
    );
    t.ok(v.leader!.fencingToken > first);
  },
);

t.test(
  'campaign by an existing candidate refreshes ttl, replaces a non-null value, keeps the token',
  async (t) => {
    const d = new Driver();
    const p = okValue<CampaignValue>(d.campaign('G', 'p', { ttlMs: 1000, value: 'a' }));
    const rev = d.sm.getElection('G').revision;
    const again = okValue<CampaignValue>(d.campaign('G', 'p', { ttlMs: 2000, atMs: 900 }));
    t.equal(again.fencingToken, p.fencingToken);
    t.equal(again.leader?.value, 'a', 'a null value keeps the old one');
    t.equal(d.sm.getElection('G').revision, rev);
    d.campaign('G', 'p', { ttlMs: 2000, value: 'b', atMs: 950 });
    t.ok(d.sm.getElection('G').revision > rev);
    d.at(2800);
    t.equal(d.sm.getElection('G').leader?.candidate, 'p');
  },
);

t.test(
  'proclaim changes value and revision, not the token; non-leader or stale token is not_holder',
  async (t) => {
    const d = new Driver();
    const p = okValue<CampaignValue>(d.campaign('G', 'p'));
    d.campaign('G', 'q');
    const rev = d.sm.getElection('G').revision;
    const r = okValue(
      d.run({
        type: 'election.proclaim',
        group: 'G',
        candidate: 'p',
        fencingToken: p.fencingToken!,
        value: { addr: 'x' },
      }).result,
    );
    t.same(r, {
      group: 'G',
      leader: { candidate: 'p', value: { addr: 'x' }, fencingToken: p.fencingToken },
    });
    const v: ElectionView = d.sm.getElection('G');
    t.ok(v.revision > rev);
    t.equal(v.leader?.fencingToken, p.fencingToken);
    t.equal(
      errCode(
        d.run({
          type: 'election.proclaim',
          group: 'G',
          candidate: 'q',
          fencingToken: p.fencingToken!,
          value: 1,
        }).result,
      ),
      'not_holder',
    );
    t.equal(
      errCode(
        d.run({
          type: 'election.proclaim',
          group: 'G',
          candidate: 'p',
          fencingToken: p.fencingToken! + 1,
          value: 1,
        }).result,
      ),
      'not_holder',
    );
    t.equal(
      errCode(
        d.run({ type: 'election.proclaim', group: 'H', candidate: 'p', fencingToken: 1, value: 1 })
          .result,
      ),
      'not_holder',
    );
  },
);

t.test('renew or resign by an unknown candidate is not_holder', async (t) => {
  const d = new Driver();
  d.campaign('G', 'p');
  t.equal(
    errCode(d.run({ type: 'election.renew', group: 'G', candidate: 'x' }).result),
    'not_holder',
  );
  t.equal(
    errCode(d.run({ type: 'election.resign', group: 'G', candidate: 'x' }).result),
    'not_holder',
  );
  t.equal(
    errCode(d.run({ type: 'election.renew', group: 'none', candidate: 'x' }).result),
    'not_holder',
  );
});

t.test('a non-leader resign leaves leader, token and revision alone', async (t) => {
  const d = new Driver();
  d.campaign('G', 'p');
  d.campaign('G', 'q');
  const before = d.sm.getElection('G');
  d.run({ type: 'election.resign', group: 'G', candidate: 'q' });
  const after = d.sm.getElection('G');
  t.same(after.leader, before.leader);
  t.equal(after.revision, before.revision);
});

t.test(
  'an emptied group keeps its revision (never back to 0 while remembered) and a new leader gets a higher token',
  async (t) => {
    const d = new Driver();
    const p = okValue<CampaignValue>(d.campaign('G', 'p'));
    d.run({ type: 'election.resign', group: 'G', candidate: 'p' });
    const empty = d.sm.getElection('G');
    t.equal(empty.leader, null);
    t.ok(empty.revision > 0);
    t.equal(d.sm.counts().elections, 0);
    const q = okValue<CampaignValue>(d.campaign('G', 'q'));
    t.ok(q.fencingToken! > p.fencingToken!);
    t.ok(d.sm.getElection('G').revision > empty.revision);
  },
);

t.test(
  'limits: electionsMax and candidatesPerGroupMax give resource_exhausted; values over valueBytesMax are payload_too_large',
  async (t) => {
    const d = new Driver({ electionsMax: 1, candidatesPerGroupMax: 2, valueBytesMax: 10 });
    d.campaign('G', 'p');
    d.campaign('G', 'q');
    t.equal(errCode(d.campaign('G', 'r')), 'resource_exhausted');
    t.equal(errCode(d.campaign('H', 'r')), 'resource_exhausted');
    t.equal(errCode(d.campaign('G', 'p', { value: 'x'.repeat(20) })), 'payload_too_large');
    t.equal(errCode(d.campaign('G', 'r', { ttlMs: 50 })), 'invalid_argument');
  },
);

t.test('a fence on an election checks the current leader token', async (t) => {
  const d = new Driver();
  const p = okValue<CampaignValue>(d.campaign('G', 'p'));
  t.same(d.sm.fenceCheck({ election: 'G', fencingToken: p.fencingToken! }), {
    valid: true,
    current: p.fencingToken,
  });
  d.run({ type: 'election.resign', group: 'G', candidate: 'p' });
  t.same(d.sm.fenceCheck({ election: 'G', fencingToken: p.fencingToken! }), {
    valid: false,
    current: null,
  });
});

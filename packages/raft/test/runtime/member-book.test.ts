// Proves the runtime's membership bookkeeping (member-book.ts, docs/operations.md): a peer list
// bootstraps voters (none when joining), the address book keeps the newest address and lists
// unreachable members, a disagreeing peer list is described exactly, and config entries and
// snapshot records carry the address book through encode/validate.
import t from 'tap';
import {
  addressesOf,
  bootstrapFromPeers,
  MemberBook,
  ownAddressDrift,
  peersDisagreement,
} from '../../src/member-book.js';
import { applyChange, decodeMembership, encodeMembership } from '../../src/core/membership.js';
import { parseEntry, parseSnapshotMeta } from '../../src/validate.js';

const peers = [
  { id: 'n1', raftAddress: 'h1:1', httpAddress: 'h1:2' },
  { id: 'n2', raftAddress: 'h2:1' },
];

t.test('bootstrap membership from a peer list', async (t) => {
  t.same(bootstrapFromPeers(peers, false), {
    voters: ['n1', 'n2'],
    learners: [],
    addresses: { n1: { raftAddress: 'h1:1', httpAddress: 'h1:2' }, n2: { raftAddress: 'h2:1' } },
  });
  t.same(bootstrapFromPeers(peers, true).voters, [], 'a joining node boots outside the cluster');
});

t.test('the book keeps the newest address and names members without one', async (t) => {
  const book = new MemberBook();
  book.learn(addressesOf(peers));
  book.learn({ n2: { raftAddress: 'moved:1' } });
  book.learn(undefined);
  const { peers: reach, missing } = book.peersOf(
    { voters: ['n1', 'n2', 'n3'], learners: ['n4'] },
    'n1',
  );
  t.same(reach, [{ id: 'n2', raftAddress: 'moved:1' }]);
  t.same(missing, ['n3', 'n4']);
  t.same(Object.keys(book.bookFor(['n2', 'n9', 'n1'])), ['n2', 'n1']);
});

t.test('a peer list that disagrees with the membership is described', async (t) => {
  const m = { voters: ['n1', 'n2', 'n3'], learners: ['n4'] };
  t.equal(peersDisagreement([...peers, { id: 'n3', raftAddress: 'x:1' }], m), null);
  t.same(
    peersDisagreement(
      ['n1', 'n2', 'n4', 'n5'].map((id) => ({ id, raftAddress: 'x:1' })),
      m,
    ),
    { notMembers: ['n5'], votersNotListed: ['n3'], learnersListed: ['n4'] },
  );
});

t.test("a node's own start addresses are compared with its stored entry", async (t) => {
  const moved = { raftAddress: 'new:1', httpAddress: 'new:2' };
  const m = { voters: ['n1', 'n2'], learners: [], addresses: { n1: moved } };
  t.equal(ownAddressDrift('n1', moved, m), null, 'same addresses');
  t.equal(ownAddressDrift('n2', { raftAddress: 'old:1' }, m), null, 'no stored address');
  t.same(ownAddressDrift('n1', { raftAddress: 'old:1', httpAddress: 'new:2' }, m), {
    stored: moved,
    given: { raftAddress: 'old:1', httpAddress: 'new:2' },
  });
  t.ok(ownAddressDrift('n1', { raftAddress: 'new:1', httpAddress: 'old:2' }, m), 'http differs');
});

t.test('config entries and snapshot records carry the address book', async (t) => {
  const before = { voters: ['n1'], learners: [], addresses: { n1: { raftAddress: 'h1:1' } } };
  const after = applyChange(before, { type: 'addLearner', id: 'n2' });
  t.same(after, { voters: ['n1'], learners: ['n2'], addresses: { n1: { raftAddress: 'h1:1' } } });
  const added = applyChange(before, {
    type: 'addLearner',
    id: 'n2',
    addresses: {
      n1: { raftAddress: 'h1:1' },
      n2: { raftAddress: 'h2:1' },
      n9: { raftAddress: 'x' },
    },
  });
  t.same(added, {
    voters: ['n1'],
    learners: ['n2'],
    addresses: { n1: { raftAddress: 'h1:1' }, n2: { raftAddress: 'h2:1' } },
  });
  if (typeof added === 'string') throw new Error('refused');
  const data = encodeMembership(added);
  t.same(decodeMembership(data), added, 'round trip');
  const entry = { term: 1, index: 3, type: 'config', clusterTimeMs: 5, data };
  t.same(parseEntry(entry)?.data, data, 'a config entry validates');
  t.equal(parseEntry({ ...entry, data: new TextEncoder().encode('{"voters":1}') }), null);
  const bad = new TextEncoder().encode('{"voters":[],"learners":[],"addresses":{"n1":{}}}');
  t.equal(decodeMembership(bad), null, 'an address without raftAddress is refused');
  const meta = { index: 9, term: 2, clusterTimeMs: 7, membership: added, configIndex: 3 };
  t.same(parseSnapshotMeta(meta), meta, 'snapshot records keep the membership');
  t.equal(parseSnapshotMeta({ ...meta, configIndex: 10 }), null, 'configIndex ≤ index');
  t.same(parseSnapshotMeta({ index: 9, term: 2, clusterTimeMs: 7 }), {
    index: 9,
    term: 2,
    clusterTimeMs: 7,
  });
});

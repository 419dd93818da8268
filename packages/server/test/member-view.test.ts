// Proves where a follower forwards to: the membership's address of the leader (a member that moved
// under its old id is reached at its new address), --peers only when the membership has none, and
// nothing when neither knows the id.
import t from 'tap';
import type { MemberAddress } from '@tenure/raft';
import { httpAddressOf } from '../src/member-view.js';
import type { PeerConfig } from '../src/config.js';

const peers: PeerConfig[] = [
  { id: 'n1', raftAddress: '10.0.0.1:7100', httpAddress: '10.0.0.1:7000' },
  { id: 'n2', raftAddress: '10.0.0.2:7100', httpAddress: '10.0.0.2:7000' },
];
const book = new Map<string, MemberAddress>([
  ['n2', { raftAddress: '10.0.1.2:7100', httpAddress: '10.0.1.2:7000' }],
  ['n4', { raftAddress: '10.0.0.4:7100', httpAddress: '10.0.0.4:7000' }],
  ['n5', { raftAddress: '10.0.0.5:7100' }],
]);
const lookup = (id: string) => book.get(id);

t.test('the membership address wins; --peers is the fallback', async (t) => {
  t.equal(httpAddressOf(peers, 'n2', lookup), '10.0.1.2:7000', 'moved: its new address');
  t.equal(httpAddressOf(peers, 'n4', lookup), '10.0.0.4:7000', 'added at run time');
  t.equal(httpAddressOf(peers, 'n1', lookup), '10.0.0.1:7000', 'not in the book: --peers');
  t.equal(httpAddressOf(peers, 'n5', lookup), null, 'in the book without an HTTP address');
  t.equal(httpAddressOf(peers, 'n9', lookup), null, 'unknown');
  t.equal(
    httpAddressOf([{ id: 'n5', raftAddress: 'x:1', httpAddress: 'x:2' }], 'n5', lookup),
    'x:2',
    'a book entry without an HTTP address falls back to --peers',
  );
});

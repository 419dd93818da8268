// Proves log replication and commitment (Raft §5.3, §5.4.2): entries reach every follower in order,
// commit only on a current-term majority (Figure 8, and the unsafe flag that breaks it), conflicting
// logs are repaired with fast backtracking, and batching / pipelining stay within their limits.
import t from 'tap';
import { RaftCore } from '../../src/core/raft-core.js';
import { asIndex, asTerm } from '../../src/core/types.js';
import type { AppendEntriesMsg, Entry, Message, NodeId, Term } from '../../src/core/types.js';
import {
  ManualClock,
  ScriptedNetwork,
  scriptedDefaults,
} from '../../src/testing/scripted-network.js';
import { SeededRandom } from '../../src/random.js';

const three = ['n1', 'n2', 'n3'];
const five = ['n1', 'n2', 'n3', 'n4', 'n5'];
const isAppend = (m: Message): m is AppendEntriesMsg => m.type === 'AppendEntries';
const carries = (m: Message, index: number) =>
  isAppend(m) && m.entries.some((e) => e.index === index);
const logTerms = (net: ScriptedNetwork, id: NodeId) =>
  net.disks.get(id)!.entries.map((e) => e.term);
const entry = (index: number, term: number, clusterTimeMs = 0): Entry => ({
  term: asTerm(term),
  index: asIndex(index),
  type: 'command',
  clusterTimeMs,
  data: new TextEncoder().encode(`e${index}t${term}`),
});
const logOf = (terms: number[]) => terms.map((term, i) => entry(i + 1, term));

t.test(
  '§5.3 replication: proposals reach every follower in order and are applied everywhere',
  async (t) => {
    const net = new ScriptedNetwork(three);
    net.elect('n1');
    for (const text of ['a', 'b', 'c']) t.ok(net.propose('n1', text).ok);
    net.stabilize();
    net.tick('n1');
    net.stabilize();
    for (const id of three) {
      t.same(net.appliedTexts(id), ['a', 'b', 'c'], `${id} applied in order`);
      t.same(logTerms(net, id), [1, 1, 1, 1], `${id} log`);
    }
  },
);

t.test('§5.3 propose on a non-leader is refused with a leader hint', async (t) => {
  const net = new ScriptedNetwork(three);
  t.same(net.core('n2').propose(new Uint8Array([1])), {
    ok: false,
    reason: 'not_leader',
    leaderHint: null,
  });
  net.elect('n1');
  t.same(net.core('n2').propose(new Uint8Array([1])), {
    ok: false,
    reason: 'not_leader',
    leaderHint: 'n1',
  });
});

t.test('§5.3 an entry does not commit without a majority', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.isolate('n1');
  net.propose('n1', 'lonely');
  net.tick('n1', 5);
  net.stabilize();
  t.equal(net.core('n1').hardState().commitIndex, 1);
  t.same(net.appliedTexts('n1'), []);
  net.heal();
  net.tick('n1');
  net.stabilize();
  t.same(net.appliedTexts('n1'), ['lonely'], 'commits once a majority has it');
});

t.test('the leader counts itself toward a commit only after persisting (advance)', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  const leader = net.core('n1');
  leader.propose(new Uint8Array([7]));
  const rd = leader.ready();
  t.equal(rd.entries.length, 1);
  for (const m of rd.messages) net.core(m.to).step(m);
  for (const id of ['n2', 'n3']) {
    const frd = net.core(id).ready();
    for (const m of frd.messages) leader.step(m);
    net.core(id).advance(frd);
  }
  t.equal(
    leader.hardState().commitIndex,
    2,
    'followers persisted: their acks form a majority without the leader',
  );
  leader.advance(rd);
  leader.checkInvariants();

  // Now with one follower only: the leader's own unpersisted copy must not count.
  const net2 = new ScriptedNetwork(three);
  net2.elect('n1');
  net2.isolate('n3');
  const l2 = net2.core('n1');
  l2.propose(new Uint8Array([8]));
  const rd2 = l2.ready();
  const toN2 = rd2.messages.filter((m) => m.to === 'n2');
  for (const m of toN2) net2.core('n2').step(m);
  const frd = net2.core('n2').ready();
  for (const m of frd.messages) l2.step(m);
  net2.core('n2').advance(frd);
  t.equal(l2.hardState().commitIndex, 1, 'not committed: the leader has not persisted index 2 yet');
  l2.advance(rd2);
  t.equal(l2.hardState().commitIndex, 2, 'committed once the leader persisted it');
  const rd3 = l2.ready();
  t.match(rd3.committedEntries, [{ index: 2 }]);
  l2.advance(rd3);
});

t.test('a follower never commits beyond the index its log was verified to match', async (t) => {
  const initial = {
    hardState: { term: asTerm(1), votedFor: null, commitIndex: asIndex(0) },
    snapshot: null,
    entries: logOf([1, 1, 1]),
  };
  const core = new RaftCore(
    { ...scriptedDefaults, id: 'n2', voters: three },
    initial,
    new ManualClock(),
    new SeededRandom(1),
  );
  core.step({
    type: 'AppendEntries',
    from: 'n1',
    to: 'n2',
    term: asTerm(2),
    prevLogIndex: asIndex(1),
    prevLogTerm: asTerm(1),
    entries: [],
    leaderCommit: asIndex(3),
    clusterTimeMs: 0,
    heartbeatSeq: 1,
  });
  t.equal(
    core.hardState().commitIndex,
    1,
    'stale entries 2..3 may differ from the leader: commit stops at 1',
  );
  const rd = core.ready();
  t.match(rd.messages, [
    { type: 'AppendEntriesResponse', success: true, matchIndex: 1, heartbeatSeq: 1 },
  ]);
  t.equal(rd.committedEntries.length, 1);
  core.advance(rd);
});

for (const unsafe of [false, true]) {
  t.test(
    `§5.4.2 Figure 8: an old-term entry on a majority ${unsafe ? 'IS (unsafe flag)' : 'is not'} committed by counting`,
    async (t) => {
      const net = new ScriptedNetwork(five, {
        config: { entriesPerMessageMax: 1 },
        perNode: unsafe
          ? { n1: { unsafe: { commitPreviousTermByCounting: true }, entriesPerMessageMax: 1 } }
          : {},
      });
      // Figure 8 (b): S1 and S2 hold index 2 of term 2, S5 holds index 2 of term 3.
      const disks: Record<string, number[]> = {
        n1: [1, 2],
        n2: [1, 2],
        n3: [1],
        n4: [1],
        n5: [1, 3],
      };
      for (const id of five) {
        // S5 already knows term 4 (it timed out once while cut off), so its next campaign is for term 5.
        net.setDisk(id, {
          hardState: { term: asTerm(id === 'n5' ? 4 : 3), votedFor: null, commitIndex: asIndex(1) },
          snapshot: null,
          entries: logOf(disks[id]!),
        });
        net.crash(id);
        net.restart(id);
      }
      // (c) S1 wins term 4 (S2, S3) and replicates index 2 to S3: a majority (S1, S2, S3) holds it.
      net.cut('n1', 'n4', 'n5');
      net.campaign('n1');
      net.deliver((m) => m.type === 'RequestVote');
      net.deliver((m) => m.type === 'RequestVoteResponse');
      t.same(net.core('n1').softState(), { role: 'leader', leaderId: 'n1', term: 4 });
      for (
        let i = 0;
        i < 20 && net.queue.length > 0 && net.core('n1').hardState().commitIndex < 2;
        i++
      ) {
        if (net.core('n3').lastIndex() >= 2) net.drop((m) => m.to === 'n3' && carries(m, 3)); // S3 never gets the term-4 entry
        net.deliver();
      }
      t.equal(net.diskTerm('n3', asIndex(2)), 2, 'index 2 (term 2) is on S1, S2, S3');
      t.equal(net.diskTerm('n3', asIndex(3)), undefined, 'the term-4 entry is not on a majority');
      t.equal(
        net.core('n1').hardState().commitIndex,
        unsafe ? 2 : 1,
        unsafe ? 'committed by counting' : 'not committed',
      );
      const appliedByN1 = net.applied.get('n1')!.map((e) => e.term);
      // (d) S1 crashes (its unsent commit notices are lost); S5 wins term 5 with S3, S4 (its last
      // term 3 beats theirs) and overwrites index 2.
      net.crash('n1');
      net.drop((m) => m.from === 'n1');
      net.heal();
      net.cut('n5', 'n2');
      net.tick('n3', 10); // their memory of S1's leadership lapses (stickiness)
      net.tick('n4', 10);
      net.campaign('n5');
      net.stabilize();
      t.same(net.core('n5').softState(), { role: 'leader', leaderId: 'n5', term: 5 });
      net.tick('n5');
      net.stabilize();
      t.equal(net.diskTerm('n3', asIndex(2)), 3, 'S3 index 2 overwritten by the term-3 entry');
      const appliedByN5 = net.applied.get('n5')!.map((e) => e.term);
      t.equal(appliedByN5[1], 3, 'S5 applied the term-3 entry at index 2');
      if (unsafe) {
        t.equal(appliedByN1[1], 2, 'S1 had applied a different entry at index 2: safety broken');
      } else {
        t.same(appliedByN1, [1], 'S1 only applied index 1: safety holds');
      }
    },
  );
}

/** Figure 7: leader log [1,1,1,4,4,5,5,6,6,6]; each follower log is repaired to match. */
const figure7: Record<string, number[]> = {
  a: [1, 1, 1, 4, 4, 5, 5, 6, 6],
  b: [1, 1, 1, 4],
  c: [1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 6],
  d: [1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 7, 7],
  e: [1, 1, 1, 4, 4, 4, 4],
  f: [1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3],
};
const figure7Leader = [1, 1, 1, 4, 4, 5, 5, 6, 6, 6];
const expectedRejections: Record<string, number> = { a: 1, b: 1, c: 0, d: 1, e: 2, f: 2 };

for (const [name, followerLog] of Object.entries(figure7)) {
  t.test(`§5.3 Figure 7(${name}): conflicting log repaired with fast backtracking`, async (t) => {
    const net = new ScriptedNetwork(three);
    const hs = { term: asTerm(7), votedFor: null, commitIndex: asIndex(0) };
    net.setDisk('n1', { hardState: hs, snapshot: null, entries: logOf(figure7Leader) });
    net.setDisk('n2', { hardState: hs, snapshot: null, entries: logOf(followerLog) });
    net.setDisk('n3', { hardState: hs, snapshot: null, entries: logOf(figure7Leader) });
    for (const id of three) {
      net.crash(id);
      net.restart(id);
    }
    net.cut('n1', 'n2');
    net.elect('n1'); // term 8 with n3's vote
    net.heal();
    let rejections = 0;
    for (let i = 0; i < 50 && (i === 0 || net.queue.length > 0); i++) {
      if (i % 5 === 0) net.tick('n1');
      rejections += net.queue.filter(
        (m) => m.type === 'AppendEntriesResponse' && m.from === 'n2' && !m.success,
      ).length;
      net.deliver();
    }
    net.stabilize();
    t.same(logTerms(net, 'n2'), [...figure7Leader, 8], 'follower log equals the leader log');
    t.ok(
      rejections <= expectedRejections[name]!,
      `${rejections} rejection(s), at most one per conflicting term`,
    );
    t.equal(net.core('n2').hardState().commitIndex, 11);
  });
}

t.test(
  '§5.3 lagging follower catches up in batches bounded by entriesPerMessageMax and bytesPerMessageMax',
  async (t) => {
    const net = new ScriptedNetwork(three, {
      config: { entriesPerMessageMax: 3, bytesPerMessageMax: 200 },
    });
    net.elect('n1');
    net.isolate('n3');
    for (let i = 0; i < 20; i++) net.propose('n1', `small-${i}`);
    net.propose('n1', 'x'.repeat(500)); // one entry larger than the byte limit still goes alone
    net.propose('n1', 'tail');
    net.stabilize();
    net.heal();
    const sizes: number[] = [];
    const bytes: number[] = [];
    net.tick('n1');
    for (let i = 0; i < 200 && net.queue.length > 0; i++) {
      for (const m of net.queue) {
        if (isAppend(m) && m.to === 'n3' && m.entries.length > 0) {
          sizes.push(m.entries.length);
          bytes.push(m.entries.reduce((s, e) => s + e.data.byteLength + 32, 0));
        }
      }
      net.deliver();
    }
    t.equal(net.core('n3').lastIndex(), 23, 'caught up');
    t.ok(
      sizes.every((n) => n <= 3),
      `every batch ≤ 3 entries (${sizes.join(',')})`,
    );
    t.ok(
      bytes.every((b, i) => b <= 200 || sizes[i] === 1),
      'every batch ≤ 200 bytes unless a single entry',
    );
    t.ok(sizes.includes(3), 'batches are filled up to the limit');
  },
);

t.test(
  'pipelining: at most inflightMessagesMax AppendEntries with entries in flight per follower',
  async (t) => {
    const net = new ScriptedNetwork(three, {
      config: { entriesPerMessageMax: 1, inflightMessagesMax: 2 },
    });
    net.elect('n1');
    for (let i = 0; i < 5; i++) net.core('n1').propose(new Uint8Array([i]));
    net.process('n1');
    const toN2 = () =>
      net.queue.filter((m) => isAppend(m) && m.to === 'n2' && m.entries.length > 0);
    t.equal(toN2().length, 2, 'window of 2 for five entries');
    t.equal(net.core('n1').progress().get('n2')!.inflightMessages, 2);
    net.deliver((m) => m.to === 'n2' && carries(m, 2)); // first in flight reaches n2 …
    net.deliver((m) => m.from === 'n2'); // … its ack frees one slot
    t.equal(toN2().length, 2, 'one delivered, one more sent: still 2 in flight');
    t.equal(net.core('n1').progress().get('n2')!.nextIndex, 5, 'nextIndex advanced optimistically');
    net.stabilize();
    t.equal(net.core('n2').lastIndex(), 6);
  },
);

t.test(
  'probe state after a rejection: one AppendEntries at a time until the follower matches',
  async (t) => {
    const net = new ScriptedNetwork(three, { config: { entriesPerMessageMax: 1 } });
    const hs = { term: asTerm(2), votedFor: null, commitIndex: asIndex(0) };
    net.setDisk('n1', { hardState: hs, snapshot: null, entries: logOf([1, 2, 2, 2]) });
    net.setDisk('n2', { hardState: hs, snapshot: null, entries: logOf([1, 1, 1, 1]) });
    net.setDisk('n3', { hardState: hs, snapshot: null, entries: logOf([1, 2, 2, 2]) });
    for (const id of three) {
      net.crash(id);
      net.restart(id);
    }
    net.cut('n1', 'n2');
    net.elect('n1');
    net.heal();
    net.tick('n1');
    net.deliver((m) => m.to === 'n2' && m.type === 'AppendEntries');
    net.deliver((m) => m.from === 'n2');
    t.equal(net.core('n1').progress().get('n2')!.state, 'probe');
    t.equal(
      net.queue.filter((m) => isAppend(m) && m.to === 'n2').length,
      1,
      'exactly one probe outstanding',
    );
    net.stabilize();
    t.same(logTerms(net, 'n2'), [1, 2, 2, 2, 3]);
    t.equal(net.core('n1').progress().get('n2')!.state, 'replicate');
  },
);

t.test('lost AppendEntries are detected through heartbeat responses and re-sent', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.propose('n1', 'lost');
  t.equal(
    net.drop((m) => m.to === 'n2'),
    1,
    'the entries for n2 are lost',
  );
  net.stabilize();
  t.equal(net.core('n2').lastIndex(), 1);
  net.tick('n1');
  net.stabilize();
  net.tick('n1');
  net.stabilize();
  t.equal(net.core('n2').lastIndex(), 2, 'resent after the heartbeat round showed the gap');
  t.same(net.appliedTexts('n2'), ['lost']);
});

t.test(
  'UNSAFE truncateMatchingEntries: a stale duplicate AppendEntries drops acknowledged entries',
  async (t) => {
    for (const unsafe of [false, true]) {
      const net = new ScriptedNetwork(
        three,
        unsafe ? { perNode: { n2: { unsafe: { truncateMatchingEntries: true } } } } : {},
      );
      net.elect('n1');
      net.propose('n1', 'a');
      net.propose('n1', 'b');
      const stale = net.queue.find((m) => m.to === 'n2' && carries(m, 2))!;
      net.deliver((m) => m.to === 'n2'); // n2 appends and acknowledges 2 and 3; it knows commit 1 only
      t.equal(net.core('n2').lastIndex(), 3);
      t.equal(net.core('n2').hardState().commitIndex, 1);
      net.core('n2').step(stale); // a duplicate of the old message arrives late
      t.equal(
        net.core('n2').lastIndex(),
        unsafe ? 2 : 3,
        unsafe ? 'acknowledged entry 3 dropped' : 'log kept',
      );
    }
  },
);

t.test('§5.3 commit index reaches followers promptly after the leader commits', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.propose('n1', 'p');
  net.stabilize(); // no tick: the commit notice must not wait for the heartbeat timer
  for (const id of three) t.same(net.appliedTexts(id), ['p'], id);
});

t.test('follower hints: conflictTerm/conflictIndex follow the contract', async (t) => {
  const initial = {
    hardState: { term: asTerm(3), votedFor: null, commitIndex: asIndex(1) },
    snapshot: null,
    entries: logOf([1, 2, 2, 3]),
  };
  const core = new RaftCore(
    { ...scriptedDefaults, id: 'n2', voters: three },
    initial,
    new ManualClock(),
    new SeededRandom(1),
  );
  const probe = (prevLogIndex: number, prevLogTerm: Term) => {
    core.step({
      type: 'AppendEntries',
      from: 'n1',
      to: 'n2',
      term: asTerm(4),
      prevLogIndex: asIndex(prevLogIndex),
      prevLogTerm,
      entries: [],
      leaderCommit: asIndex(1),
      clusterTimeMs: 0,
      heartbeatSeq: 1,
    });
    const rd = core.ready();
    core.advance(rd);
    return rd.messages[0];
  };
  t.match(
    probe(9, asTerm(4)),
    { success: false, conflictTerm: 0, conflictIndex: 5 },
    'no entry: lastIndex + 1',
  );
  t.match(
    probe(3, asTerm(3)),
    { success: false, conflictTerm: 2, conflictIndex: 2 },
    'first index of the conflicting term',
  );
  t.match(probe(4, asTerm(3)), { success: true, matchIndex: 4 });
});

// Proves the Ready contract of types.ts: hard/soft state only when changed, entries handed out once
// (again from the overwritten index after a truncation), committed entries only once persisted-or-
// handed-out, messages after the state they depend on, and a strict ready → advance alternation.
import t from 'tap';
import { RaftCore } from '../../src/core/raft-core.js';
import { committedEntriesPerReadyMax } from '../../src/core/config.js';
import { asIndex, asTerm } from '../../src/core/types.js';
import type { AppendEntriesMsg, Entry } from '../../src/core/types.js';
import {
  ManualClock,
  ScriptedNetwork,
  scriptedDefaults,
} from '../../src/testing/scripted-network.js';
import { SeededRandom } from '../../src/random.js';

const three = ['n1', 'n2', 'n3'];
const fresh = {
  hardState: { term: asTerm(0), votedFor: null, commitIndex: asIndex(0) },
  snapshot: null,
  entries: [],
};
const entry = (index: number, term: number): Entry => ({
  term: asTerm(term),
  index: asIndex(index),
  type: 'command',
  clusterTimeMs: 0,
  data: new Uint8Array([index]),
});
const append = (
  term: number,
  prevLogIndex: number,
  prevLogTerm: number,
  entries: Entry[],
  leaderCommit: number,
): AppendEntriesMsg => ({
  type: 'AppendEntries',
  from: 'n1',
  to: 'n2',
  term: asTerm(term),
  prevLogIndex: asIndex(prevLogIndex),
  prevLogTerm: asTerm(prevLogTerm),
  entries,
  leaderCommit: asIndex(leaderCommit),
  clusterTimeMs: 0,
  heartbeatSeq: 1,
});
const follower = () =>
  new RaftCore(
    { ...scriptedDefaults, id: 'n2', voters: three },
    fresh,
    new ManualClock(),
    new SeededRandom(1),
  );

t.test('hard state and soft state appear only when they changed', async (t) => {
  const core = follower();
  t.equal(core.hasReady(), false, 'a fresh node has nothing to say');
  core.step(append(1, 0, 0, [entry(1, 1)], 0));
  const rd = core.ready();
  t.same(rd.hardState, { term: 1, votedFor: null, commitIndex: 0 });
  t.same(rd.softState, { role: 'follower', leaderId: 'n1', term: 1 });
  core.advance(rd);
  core.step(append(1, 1, 1, [], 0));
  const rd2 = core.ready();
  t.equal(rd2.hardState, null);
  t.equal(rd2.softState, null);
  t.equal(rd2.entries.length, 0);
  core.advance(rd2);
});

t.test(
  'entries are handed out once; an overwrite hands out again from the overwritten index',
  async (t) => {
    const core = follower();
    core.step(append(1, 0, 0, [entry(1, 1), entry(2, 1), entry(3, 1)], 1));
    const rd = core.ready();
    t.same(
      rd.entries.map((e) => e.index),
      [1, 2, 3],
    );
    t.same(
      rd.committedEntries.map((e) => e.index),
      [1],
      'committed in the same Ready as persisted: fine, persisted first',
    );
    core.advance(rd);
    core.step(append(2, 1, 1, [entry(2, 2)], 1));
    const rd2 = core.ready();
    t.same(
      rd2.entries.map((e) => [e.index, e.term]),
      [[2, 2]],
      'index 2 replaces old 2 and 3',
    );
    t.equal(core.lastIndex(), 2);
    core.advance(rd2);
    core.checkInvariants();
  },
);

t.test(
  'inputs between ready() and advance() land in the next Ready, nothing is handed out twice',
  async (t) => {
    const core = follower();
    core.step(append(1, 0, 0, [entry(1, 1)], 0));
    const rd = core.ready();
    core.step(append(1, 1, 1, [entry(2, 1)], 2));
    t.equal(core.hasReady(), true);
    core.advance(rd);
    const rd2 = core.ready();
    t.same(
      rd2.entries.map((e) => e.index),
      [2],
    );
    t.same(
      rd2.committedEntries.map((e) => e.index),
      [1, 2],
    );
    t.match(rd2.messages, [{ type: 'AppendEntriesResponse', success: true, matchIndex: 2 }]);
    core.advance(rd2);
    t.equal(core.hasReady(), false);
  },
);

t.test('ready() and advance() must alternate', async (t) => {
  const core = follower();
  core.step(append(1, 0, 0, [entry(1, 1)], 0));
  const rd = core.ready();
  t.throws(() => core.ready(), /before advance/);
  core.advance(rd);
  t.throws(() => core.advance(rd), /without an outstanding Ready/);
});

t.test('committed entries are handed out in bounded batches', async (t) => {
  const net = new ScriptedNetwork(['n1']);
  net.elect('n1');
  const core = net.core('n1');
  const n = committedEntriesPerReadyMax + 10;
  for (let i = 0; i < n; i++) core.propose(new Uint8Array([i & 0xff]));
  core.advance(core.ready()); // persist the entries; the leader's commit follows
  const rd = core.ready();
  t.equal(rd.committedEntries.length, committedEntriesPerReadyMax);
  core.advance(rd);
  const rd2 = core.ready();
  t.equal(rd2.committedEntries.length, 10);
  core.advance(rd2);
});

t.test(
  'a follower hands out for applying only entries it has handed out for persistence',
  async (t) => {
    const core = follower();
    core.step(append(1, 0, 0, [entry(1, 1), entry(2, 1)], 2));
    const rd = core.ready();
    const persisted = new Set(rd.entries.map((e) => e.index));
    t.ok(rd.committedEntries.every((e) => persisted.has(e.index)));
    t.equal(rd.hardState!.commitIndex, 2, 'the commit index is persisted with them');
    core.advance(rd);
  },
);

t.test('UNSAFE dontPersistVotedFor hands out votedFor: null while voting', async (t) => {
  const core = new RaftCore(
    { ...scriptedDefaults, id: 'n2', voters: three, unsafe: { dontPersistVotedFor: true } },
    fresh,
    new ManualClock(),
    new SeededRandom(1),
  );
  core.step({
    type: 'RequestVote',
    from: 'n1',
    to: 'n2',
    term: asTerm(1),
    lastLogIndex: asIndex(0),
    lastLogTerm: asTerm(0),
    transfer: false,
  });
  const rd = core.ready();
  t.same(rd.hardState, { term: 1, votedFor: null, commitIndex: 0 });
  t.match(rd.messages, [{ granted: true }]);
  t.equal(core.hardState().votedFor, 'n1', 'in memory it did vote');
});

t.test('config relations are checked at construction', async (t) => {
  const base = { ...scriptedDefaults, id: 'n1', voters: three };
  const mk = (c: object) => () =>
    new RaftCore({ ...base, ...c }, fresh, new ManualClock(), new SeededRandom(1));
  t.throws(mk({ heartbeatTicks: 10 }), /electionTimeoutTicks/);
  t.doesNotThrow(
    mk({ id: 'n9' }),
    'a joining node may start outside the bootstrap voters (§4.2.1)',
  );
  t.throws(mk({ catchUpEntriesMax: -1 }), /catchUpEntriesMax/);
  t.throws(mk({ voters: ['n1', 'n1'] }), /unique/);
  t.throws(mk({ inflightMessagesMax: 0 }), /inflightMessagesMax/);
  t.throws(mk({ entriesPerMessageMax: 0 }), /entriesPerMessageMax/);
});

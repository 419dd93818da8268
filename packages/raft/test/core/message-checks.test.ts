// Proves malformed peer messages are dropped before they can move the core (no term bump, no append,
// no assertion), while well-formed ones pass.
import t from 'tap';
import { isWellFormedMessage } from '../../src/core/message-checks.js';
import { RaftCore } from '../../src/core/raft-core.js';
import { asIndex, asTerm } from '../../src/core/types.js';
import type { AppendEntriesMsg, Entry } from '../../src/core/types.js';
import { ManualClock, scriptedDefaults } from '../../src/testing/scripted-network.js';
import { SeededRandom } from '../../src/random.js';

const three = ['n1', 'n2', 'n3'];
const fresh = {
  hardState: { term: asTerm(0), votedFor: null, commitIndex: asIndex(0) },
  snapshot: null,
  entries: [],
};
const entry = (index: number, term: number, clusterTimeMs = 0): Entry => ({
  term: asTerm(term),
  index: asIndex(index),
  type: 'command',
  clusterTimeMs,
  data: new Uint8Array([1]),
});
const append = (entries: Entry[], extra: Partial<AppendEntriesMsg> = {}): AppendEntriesMsg => ({
  type: 'AppendEntries',
  from: 'n1',
  to: 'n2',
  term: asTerm(3),
  prevLogIndex: asIndex(0),
  prevLogTerm: asTerm(0),
  entries,
  leaderCommit: asIndex(0),
  clusterTimeMs: 0,
  heartbeatSeq: 1,
  ...extra,
});

t.test('AppendEntries shape rules', async (t) => {
  t.ok(isWellFormedMessage(append([entry(1, 1), entry(2, 3)])));
  t.notOk(isWellFormedMessage(append([entry(2, 1)])), 'gap after prevLogIndex');
  t.notOk(isWellFormedMessage(append([entry(1, 2), entry(2, 1)])), 'decreasing terms');
  t.notOk(isWellFormedMessage(append([entry(1, 4)])), 'entry term above message term');
  t.notOk(
    isWellFormedMessage(append([entry(1, 1, 50), entry(2, 1, 40)])),
    'cluster time going back',
  );
  t.notOk(isWellFormedMessage(append([], { prevLogIndex: asIndex(-1) })), 'negative index');
  t.notOk(isWellFormedMessage(append([], { clusterTimeMs: Number.NaN })), 'NaN time');
  t.notOk(
    isWellFormedMessage({
      type: 'RequestVote',
      from: 'n1',
      to: 'n2',
      term: asTerm(1),
      lastLogIndex: asIndex(0),
      lastLogTerm: asTerm(2),
      transfer: false,
    }),
  );
});

t.test('a malformed message does not move the core', async (t) => {
  const core = new RaftCore(
    { ...scriptedDefaults, id: 'n2', voters: three },
    fresh,
    new ManualClock(),
    new SeededRandom(1),
  );
  core.step(append([entry(2, 1)]));
  t.equal(core.softState().term, 0, 'no term bump');
  t.equal(core.lastIndex(), 0);
  t.equal(core.hasReady(), false);
  core.step({
    type: 'RequestVote',
    from: 'n9',
    to: 'n2',
    term: asTerm(5),
    lastLogIndex: asIndex(9),
    lastLogTerm: asTerm(4),
    transfer: false,
  });
  t.equal(core.hasReady(), false, 'vote requests from non-voters are ignored (§4.2.3)');
  t.equal(core.softState().term, 0, 'and move no term');
  core.step(append([entry(1, 1)]));
  t.equal(core.lastIndex(), 1, 'a well-formed one is accepted');
  t.equal(core.tickCount(), 0);
  core.tick();
  t.equal(core.tickCount(), 1);
});

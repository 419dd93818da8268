// Proves the core's building blocks in isolation: RaftLog cursors and searches, quorum arithmetic,
// Progress flow control, the ReadIndex queue and ClusterTime's per-term reference.
import t from 'tap';
import { ClusterTime } from '../../src/core/cluster-time.js';
import { Progress } from '../../src/core/progress.js';
import { quorumSize, quorumValue, tallyVotes } from '../../src/core/quorum.js';
import { RaftLog } from '../../src/core/raft-log.js';
import { ReadOnlyQueue } from '../../src/core/read-only.js';
import { asIndex, asTerm } from '../../src/core/types.js';
import type { Entry } from '../../src/core/types.js';
import { ManualClock } from '../../src/testing/scripted-network.js';

const entry = (index: number, term: number, clusterTimeMs = 0, sizeBytes = 1): Entry => ({
  term: asTerm(term),
  index: asIndex(index),
  type: 'command',
  clusterTimeMs,
  data: new Uint8Array(sizeBytes),
});
const logOf = (terms: number[]) => terms.map((term, i) => entry(i + 1, term));

t.test('RaftLog: terms, snapshot boundary, searches', async (t) => {
  const log = new RaftLog(
    { index: asIndex(3), term: asTerm(1), clusterTimeMs: 0 },
    [entry(4, 1), entry(5, 2), entry(6, 2), entry(7, 3)],
    5,
  );
  t.equal(log.firstIndex(), 4);
  t.equal(log.term(0), 0);
  t.equal(log.term(2), undefined, 'compacted');
  t.equal(log.term(3), 1, 'snapshot point');
  t.equal(log.term(8), undefined, 'beyond last');
  t.equal(log.lastTerm(), 3);
  t.equal(log.firstIndexOfTermAt(6, 1), 5);
  t.equal(log.firstIndexOfTermAt(6, 6), 6, 'stops at the floor');
  t.equal(log.lastIndexOfTerm(asTerm(2), 7, 0), 6);
  t.equal(log.lastIndexOfTerm(asTerm(4), 7, 0), null);
  t.equal(log.lastIndexOfTerm(asTerm(1), 7, 0), 4);
  t.ok(log.isUpToDate(7, asTerm(3)));
  t.notOk(log.isUpToDate(9, asTerm(2)));
  t.ok(log.isUpToDate(1, asTerm(4)));
  log.checkInvariants();
});

t.test('RaftLog: slice honours count and byte limits, at least one entry', async (t) => {
  const log = new RaftLog(
    null,
    [entry(1, 1, 0, 10), entry(2, 1, 0, 10), entry(3, 1, 0, 500), entry(4, 1, 0, 10)],
    0,
  );
  t.same(
    log.slice(1, 2, 1e6).map((e) => e.index),
    [1, 2],
  );
  t.same(
    log.slice(1, 10, 90).map((e) => e.index),
    [1, 2],
    '2 × (10 + 32) = 84 ≤ 90',
  );
  t.same(
    log.slice(3, 10, 90).map((e) => e.index),
    [3],
    'one oversized entry still goes',
  );
  t.same(log.slice(5, 10, 90), []);
});

t.test(
  'RaftLog: appendFromLeader skips matches, truncates conflicts, protects commits',
  async (t) => {
    const log = new RaftLog(null, logOf([1, 1, 1]), 1);
    log.appendFromLeader(1, [entry(2, 1), entry(3, 1)], false);
    t.equal(log.lastIndex(), 3, 'matching entries kept');
    t.same(log.takeUnstable(), [], 'nothing new to persist');
    log.appendFromLeader(1, [entry(2, 2)], false);
    t.equal(log.lastIndex(), 2);
    t.same(
      log.takeUnstable().map((e) => e.term),
      [2],
    );
    t.throws(() => log.appendFromLeader(0, [entry(1, 3)], false), /committed/);
    t.throws(() => log.append(entry(3, 1)), /terms must not decrease/);
    t.throws(() => log.append(entry(5, 2)), /contiguous/);
  },
);

t.test('RaftLog: stableTo ignores an acknowledgement for an entry overwritten since', async (t) => {
  const log = new RaftLog(null, [], 0);
  log.append(entry(1, 1));
  log.append(entry(2, 1));
  t.equal(log.takeUnstable().length, 2);
  log.appendFromLeader(1, [entry(2, 2)], false);
  log.stableTo(2, asTerm(1));
  t.equal(log.persistedIndex(), 0, 'old index 2 (term 1) no longer exists');
  log.stableTo(1, asTerm(1));
  t.equal(log.persistedIndex(), 1);
  t.equal(log.takeUnstable().length, 1);
  log.stableTo(2, asTerm(2));
  t.equal(log.persistedIndex(), 2);
});

t.test('RaftLog: cluster time must not decrease along the log', async (t) => {
  const log = new RaftLog(null, [entry(1, 1, 100)], 0);
  t.throws(() => log.append(entry(2, 1, 99)), /clusterTimeMs/);
  t.throws(
    () =>
      new RaftLog(
        { index: asIndex(1), term: asTerm(1), clusterTimeMs: 500 },
        [entry(2, 1, 400)],
        0,
      ),
    /clusterTimeMs/,
  );
});

t.test('quorum arithmetic', async (t) => {
  t.same([1, 2, 3, 4, 5].map(quorumSize), [1, 2, 2, 3, 3]);
  t.equal(quorumValue([5, 3, 9]), 5);
  t.equal(quorumValue([5, 3, 9, 1, 7]), 5);
  t.equal(quorumValue([1, 2, 3, 4]), 2);
  t.equal(
    tallyVotes(
      new Map([
        ['a', true],
        ['b', true],
      ]),
      3,
    ),
    'won',
  );
  t.equal(
    tallyVotes(
      new Map([
        ['a', true],
        ['b', false],
      ]),
      3,
    ),
    'pending',
  );
  t.equal(
    tallyVotes(
      new Map([
        ['a', true],
        ['b', false],
        ['c', false],
      ]),
      3,
    ),
    'lost',
  );
  t.equal(
    tallyVotes(
      new Map([
        ['a', true],
        ['b', false],
      ]),
      4,
    ),
    'pending',
  );
});

t.test('Progress: probe sends one at a time, replicate fills the window', async (t) => {
  const pr = new Progress(5, 2);
  t.equal(pr.state, 'probe');
  t.notOk(pr.isPaused());
  pr.onSent(6, true);
  t.ok(pr.isPaused(), 'one probe outstanding');
  t.equal(pr.nextIndex, 5, 'probe does not advance nextIndex');
  t.ok(pr.maybeUpdate(6));
  pr.becomeReplicate();
  t.equal(pr.nextIndex, 7);
  pr.onSent(8, true);
  pr.onSent(10, true);
  t.ok(pr.isPaused(), 'window of 2 full');
  t.equal(pr.nextIndex, 11);
  t.ok(pr.maybeUpdate(8));
  t.notOk(pr.isPaused());
  t.equal(pr.inflightCount(), 1);
  pr.becomeProbe(3);
  t.equal(pr.nextIndex, 9, 'never below matchIndex + 1');
  pr.checkInvariants(12);
});

t.test('ReadOnlyQueue: waiting, confirming in seq order, draining', async (t) => {
  const q = new ReadOnlyQueue();
  q.addWaiting(1);
  q.addConfirming(2, asIndex(5), 3);
  q.addConfirming(3, asIndex(5), 4);
  t.equal(q.maxPendingSeq(), 4);
  t.same(q.confirm(3), [{ requestId: 2, index: 5 }]);
  t.equal(q.admitWaiting(asIndex(6), 5), 1);
  t.same(q.confirm(4), [{ requestId: 3, index: 5 }]);
  t.equal(q.size(), 1);
  t.same(q.drainAll(), [1]);
  t.equal(q.size(), 0);
});

t.test('ClusterTime: leader time = termStart + elapsed, frozen otherwise', async (t) => {
  const clock = new ManualClock(1_000);
  const ct = new ClusterTime(clock, asTerm(1), 50);
  clock.advance(500);
  t.equal(ct.nowMs(), 50, 'follower: frozen');
  ct.observe(asTerm(1), 80);
  ct.observe(asTerm(1), 70);
  t.equal(ct.nowMs(), 80, 'same term: the highest reading');
  ct.startLeading(asTerm(2), asTerm(1), 60);
  t.equal(ct.nowMs(), 80, 'starts from the reference of the last entry term');
  clock.advance(20);
  t.equal(ct.nowMs(), 100);
  ct.stopLeading();
  clock.advance(1_000);
  t.equal(ct.nowMs(), 100, 'keeps what it handed out, then freezes');
  t.same(ct.reference(), { term: 2, ms: 100 });
});

t.test('ClusterTime: the reference follows the newest term, even downwards', async (t) => {
  const clock = new ManualClock(0);
  const ct = new ClusterTime(clock, asTerm(1), 9_000); // e.g. a stale leader's inflated reading
  ct.observe(asTerm(2), 4_000);
  t.same(ct.reference(), { term: 2, ms: 4_000 }, 'a newer term replaces a higher value');
  ct.observe(asTerm(1), 9_500);
  t.equal(ct.nowMs(), 4_000, 'an older term is ignored');
  ct.observe(asTerm(2), 4_100);
  ct.startLeading(asTerm(3), asTerm(2), 4_050);
  t.equal(
    ct.nowMs(),
    4_100,
    'term start: max of the reference and the last entry of the same term',
  );
});

t.test('ClusterTime: a newer timeline without an entry in the log is not mixed in', async (t) => {
  const clock = new ManualClock(0);
  const ct = new ClusterTime(clock, asTerm(2), 5_000);
  ct.observe(asTerm(3), 7_000); // heard term 3's leader, but the log still ends with a term-2 entry
  ct.startLeading(asTerm(4), asTerm(2), 5_000);
  t.equal(
    ct.nowMs(),
    5_000,
    'term start: the last entry, the newer timeline never reached the log',
  );
  t.throws(() => ct.startLeading(asTerm(4), asTerm(2), 5_000), /newer/, 'a term is led once');
});

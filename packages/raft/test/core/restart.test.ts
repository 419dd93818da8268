// Proves a core restarts from CoreInitialState exactly as persisted through Ready: term, vote, log
// and commit survive; committed entries are re-applied from appliedIndex; a log may begin after a
// snapshot (firstIndex > 1), and followers behind the leader's firstIndex are skipped, not crashed on.
import t from 'tap';
import { RaftCore } from '../../src/core/raft-core.js';
import { asIndex, asTerm } from '../../src/core/types.js';
import type { Entry } from '../../src/core/types.js';
import {
  ManualClock,
  ScriptedNetwork,
  scriptedDefaults,
} from '../../src/testing/scripted-network.js';
import { SeededRandom } from '../../src/random.js';

const three = ['n1', 'n2', 'n3'];
const entry = (index: number, term: number, clusterTimeMs: number): Entry => ({
  term: asTerm(term),
  index: asIndex(index),
  type: 'command',
  clusterTimeMs,
  data: new TextEncoder().encode(`e${index}`),
});

t.test(
  'a restarted follower recovers term, vote, log and re-applies committed entries',
  async (t) => {
    const net = new ScriptedNetwork(three);
    net.elect('n1');
    net.propose('n1', 'a');
    net.propose('n1', 'b');
    net.stabilize();
    net.tickAll();
    net.stabilize();
    net.crash('n2');
    net.restart('n2');
    const n2 = net.core('n2');
    t.same(n2.hardState(), { term: 1, votedFor: 'n1', commitIndex: 3 });
    t.equal(n2.lastIndex(), 3);
    t.same(n2.softState(), { role: 'follower', leaderId: null, term: 1 });
    net.process('n2');
    t.same(net.appliedTexts('n2'), ['a', 'b'], 're-applied from the start (no snapshot)');
    net.propose('n1', 'c');
    net.stabilize();
    net.tickAll();
    net.stabilize();
    t.same(net.appliedTexts('n2'), ['a', 'b', 'c']);
  },
);

t.test('a restarted leader comes back as a follower with its log intact and rejoins', async (t) => {
  const net = new ScriptedNetwork(three);
  net.elect('n1');
  net.propose('n1', 'a');
  net.stabilize();
  net.crash('n1');
  net.restart('n1');
  t.same(net.core('n1').softState(), { role: 'follower', leaderId: null, term: 1 });
  t.equal(net.core('n1').lastIndex(), 2);
  net.tick('n2', 10);
  net.tick('n3', 10);
  net.elect('n2');
  net.tickAll();
  net.stabilize();
  t.equal(net.core('n1').softState().leaderId, 'n2');
  t.equal(net.core('n1').hardState().commitIndex, 3);
});

t.test('CoreInitialState.appliedIndex: only entries after it are handed out again', async (t) => {
  const initial = {
    hardState: { term: asTerm(1), votedFor: null, commitIndex: asIndex(3) },
    snapshot: null,
    entries: [entry(1, 1, 0), entry(2, 1, 10), entry(3, 1, 20), entry(4, 1, 30)],
    appliedIndex: asIndex(2),
  };
  const core = new RaftCore(
    { ...scriptedDefaults, id: 'n1', voters: three },
    initial,
    new ManualClock(),
    new SeededRandom(1),
  );
  const rd = core.ready();
  t.same(
    rd.committedEntries.map((e) => e.index),
    [3],
  );
  t.same(rd.entries, [], 'recovered entries are already persisted');
  t.equal(rd.hardState, null, 'hard state unchanged');
  core.advance(rd);
  t.equal(core.appliedIndex(), 3);
  t.equal(core.clusterTimeMs(), 30, 'highest cluster time recovered from the log');
});

t.test(
  '§7 a log that begins after a snapshot: elect, replicate, commit from firstIndex > 1',
  async (t) => {
    const net = new ScriptedNetwork(three);
    const snapshot = { index: asIndex(10), term: asTerm(2), clusterTimeMs: 5_000 };
    for (const id of three) {
      net.setDisk(id, {
        hardState: { term: asTerm(2), votedFor: null, commitIndex: asIndex(12) },
        snapshot,
        entries: [entry(11, 2, 5_000), entry(12, 2, 5_100)],
      });
      net.crash(id);
      net.restart(id);
    }
    t.equal(net.core('n1').lastIndex(), 12);
    t.equal(net.core('n1').appliedIndex(), 10, 'applied starts at the snapshot');
    t.equal(net.core('n1').clusterTimeMs(), 5_100);
    net.processAll();
    t.same(
      net.applied.get('n1')!.map((e) => e.index),
      [11, 12],
      'entries after the snapshot re-applied',
    );
    net.elect('n1');
    const noop = net.disks.get('n1')!.entries.at(-1)!;
    t.match(noop, { index: 13, term: 3, type: 'noop' });
    t.ok(noop.clusterTimeMs >= 5_100, 'cluster time continues from the snapshot/log');
    net.propose('n1', 'after-snapshot');
    net.stabilize();
    net.tickAll();
    net.stabilize();
    for (const id of three) t.same(net.appliedTexts(id).at(-1), 'after-snapshot', id);
    t.same(
      net.disks.get('n2')!.entries.map((e) => e.index),
      [11, 12, 13, 14],
    );
  },
);

t.test(
  "§7 a follower that needs entries before the leader's firstIndex is skipped (InstallSnapshot later)",
  async (t) => {
    const net = new ScriptedNetwork(three);
    const snapshot = { index: asIndex(10), term: asTerm(2), clusterTimeMs: 5_000 };
    for (const id of ['n1', 'n2']) {
      net.setDisk(id, {
        hardState: { term: asTerm(2), votedFor: null, commitIndex: asIndex(10) },
        snapshot,
        entries: [],
      });
      net.crash(id);
      net.restart(id);
    }
    net.cut('n1', 'n3');
    net.elect('n1');
    net.heal();
    for (let i = 0; i < 5; i++) {
      net.tick('n1');
      net.stabilize();
    }
    t.equal(net.core('n3').lastIndex(), 0, 'n3 gets nothing it cannot use');
    t.equal(
      net.core('n1').progress().get('n3')!.needsSnapshot,
      true,
      'reported as needing a snapshot',
    );
    t.equal(net.core('n1').progress().get('n2')!.needsSnapshot, false);
    t.equal(net.core('n1').softState().role, 'leader', 'no crash, still leading');
    net.propose('n1', 'x');
    net.stabilize();
    t.equal(net.core('n1').hardState().commitIndex, 12, 'the majority (n1, n2) keeps committing');
  },
);

t.test('restart rejects inconsistent recovered state', async (t) => {
  const cfg = { ...scriptedDefaults, id: 'n1', voters: three };
  t.throws(
    () =>
      new RaftCore(
        cfg,
        {
          hardState: { term: asTerm(1), votedFor: null, commitIndex: asIndex(0) },
          snapshot: null,
          entries: [entry(1, 2, 0)],
        },
        new ManualClock(),
        new SeededRandom(1),
      ),
    'log term above hard state term',
  );
  t.throws(
    () =>
      new RaftCore(
        cfg,
        {
          hardState: { term: asTerm(1), votedFor: null, commitIndex: asIndex(0) },
          snapshot: null,
          entries: [entry(2, 1, 0)],
        },
        new ManualClock(),
        new SeededRandom(1),
      ),
    'entries not starting at snapshot.index + 1',
  );
});

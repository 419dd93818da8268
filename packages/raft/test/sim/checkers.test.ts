// Proves each SafetyChecker property fires on a hand-made bad history and stays quiet on a good one.
import t, { type Test } from 'tap';
import type { Entry, LogIndex, Term } from '../../src/core/types.js';
import { asIndex, asTerm } from '../../src/core/types.js';
import { SafetyChecker, SimViolation, encodeCommand } from '../../src/testing/index.js';
import type { LogView, ViolationKind } from '../../src/testing/index.js';

function entry(index: number, term: number, commandId = 0, clusterTimeMs = index * 10): Entry {
  return {
    index: asIndex(index),
    term: asTerm(term),
    type: commandId === 0 ? 'noop' : 'command',
    clusterTimeMs,
    data: commandId === 0 ? new Uint8Array(0) : encodeCommand(commandId, 1),
  };
}

function log(entries: readonly Entry[]): LogView {
  return {
    get lastIndex(): LogIndex {
      return asIndex(entries.length);
    },
    entryAt: (i) => (i >= 1 ? entries[i - 1] : undefined),
    termAt: (i): Term | undefined => (i === 0 ? asTerm(0) : entries[i - 1]?.term),
  };
}

function checker(nowMs = 1_000_000): SafetyChecker {
  return new SafetyChecker({ nowMs: () => nowMs, driftRatioMax: 0.01, clusterTimeSlackMs: 1 });
}

function throwsKind(t: Test, kind: ViolationKind, fn: () => void): void {
  try {
    fn();
    t.fail(`expected a ${kind} violation`);
  } catch (err) {
    t.ok(err instanceof SimViolation && err.kind === kind, `${kind}: ${(err as Error).message}`);
  }
}

t.test('election safety: two leaders in one term', async (t) => {
  const c = checker();
  const l = log([entry(1, 1)]);
  c.observeRole('n1', 'leader', asTerm(1), l);
  c.observeRole('n1', 'leader', asTerm(1), l);
  c.observeRole('n2', 'leader', asTerm(2), l);
  throwsKind(t, 'election-safety', () => c.observeRole('n3', 'leader', asTerm(1), l));
});

t.test('log matching: same index and term, different entry or prefix', async (t) => {
  const c = checker();
  c.observePersisted('n1', log([entry(1, 1), entry(2, 1, 7)]), asIndex(1));
  c.observePersisted('n2', log([entry(1, 1), entry(2, 1, 7)]), asIndex(1));
  throwsKind(t, 'log-matching', () =>
    c.observePersisted('n3', log([entry(1, 1), entry(2, 1, 8)]), asIndex(1)),
  );
  const c2 = checker();
  c2.observePersisted('n1', log([entry(1, 1), entry(2, 2)]), asIndex(1));
  throwsKind(t, 'log-matching', () =>
    c2.observePersisted('n2', log([entry(1, 2), entry(2, 2)]), asIndex(1)),
  );
});

t.test('leader completeness: a later leader lacks a committed entry', async (t) => {
  const c = checker();
  c.observeApply('n1', entry(1, 1, 5), asTerm(1), 0);
  c.observeRole('n2', 'leader', asTerm(2), log([entry(1, 1, 5), entry(2, 2)]));
  throwsKind(t, 'leader-completeness', () =>
    c.observeRole('n3', 'leader', asTerm(3), log([entry(1, 2)])),
  );
  // A stale leader of an earlier term may lack it (it can never commit).
  const c2 = checker();
  c2.observeApply('n1', entry(1, 3, 5), asTerm(3), 0);
  c2.observeRole('n3', 'leader', asTerm(2), log([]));
  t.pass('a leader of an earlier term is not held to later commits');
});

t.test('state machine safety and apply order', async (t) => {
  const c = checker();
  c.observeApply('n1', entry(1, 1, 5), asTerm(1), 0);
  c.observeApply('n2', entry(1, 1, 5), asTerm(1), 0);
  throwsKind(t, 'state-machine-safety', () => c.observeApply('n3', entry(1, 1, 6), asTerm(1), 0));
  throwsKind(t, 'apply-order', () => c.observeApply('n2', entry(3, 1), asTerm(1), 1));
});

t.test(
  'commit index: monotonic in memory and durably; committed entries never rewritten',
  async (t) => {
    const c = checker();
    c.observeCommitIndex('n1', asIndex(3));
    throwsKind(t, 'commit-monotonic', () => c.observeCommitIndex('n1', asIndex(2)));
    c.observeRestart('n1', asIndex(1));
    c.observeCommitIndex('n1', asIndex(1));
    const l = log([entry(1, 1), entry(2, 1), entry(3, 1)]);
    c.observeDurableCommit('n1', asIndex(2), l, asTerm(1));
    throwsKind(t, 'commit-monotonic', () => c.observeDurableCommit('n1', asIndex(1), l, asTerm(1)));
    throwsKind(t, 'committed-entry-rewritten', () =>
      c.observeRewrite('n1', log([entry(1, 1)]), asIndex(2), asIndex(2), [asTerm(1)]),
    );
    throwsKind(t, 'committed-entry-rewritten', () =>
      c.observeRewrite('n1', log([entry(1, 1), entry(2, 2)]), asIndex(2), asIndex(2), [asTerm(1)]),
    );
  },
);

t.test(
  'durable commit teaches committed entries: a conflicting durable commit is caught',
  async (t) => {
    const c = checker();
    c.observeDurableCommit('n1', asIndex(2), log([entry(1, 1), entry(2, 1, 4)]), asTerm(1));
    throwsKind(t, 'state-machine-safety', () =>
      c.observeDurableCommit('n2', asIndex(2), log([entry(1, 1), entry(2, 2, 9)]), asTerm(2)),
    );
  },
);

t.test('acknowledged writes and linearizable reads', async (t) => {
  const c = checker();
  const w = entry(1, 1, 5);
  c.observeApply('n1', w, asTerm(1), 0);
  c.observeWriteAcked(w, asTerm(1));
  t.equal(c.maxAckedIndex, 1);
  c.observeReadCompleted('n1', 10, 1, 1);
  throwsKind(t, 'stale-read', () => c.observeReadCompleted('n2', 10, 1, 0));
  const c2 = checker();
  c2.observeWriteAcked(w, asTerm(1));
  throwsKind(t, 'acked-write-lost', () => c2.observeRole('n2', 'leader', asTerm(2), log([])));
});

t.test('cluster time: never decreases along the log, never ahead of real time', async (t) => {
  const c = checker(1000);
  c.observeApply('n1', entry(1, 1, 0, 500), asTerm(1), 0);
  throwsKind(t, 'cluster-time', () => c.observeApply('n1', entry(2, 1, 0, 400), asTerm(1), 1));
  const c2 = checker(1000);
  throwsKind(t, 'cluster-time', () => c2.observeApply('n1', entry(1, 1, 0, 1012), asTerm(1), 0));
  const c3 = checker();
  throwsKind(t, 'cluster-time', () =>
    c3.observePersisted('n1', log([entry(1, 1, 0, 50), entry(2, 1, 0, 40)]), asIndex(1)),
  );
});

t.test('cluster time: never advances faster than real time along the committed log', async (t) => {
  const c = checker();
  c.observeStamped(asIndex(1), asTerm(1), 1_000);
  c.observeStamped(asIndex(2), asTerm(2), 5_000); // after a 3 s leaderless freeze: slower is fine
  c.observeStamped(asIndex(3), asTerm(2), 6_000);
  c.observeStamped(asIndex(4), asTerm(3), 6_100);
  c.observeApply('n1', entry(1, 1, 0, 700), asTerm(1), 0);
  c.observeApply('n1', entry(2, 2, 0, 1_700), asTerm(2), 1);
  c.observeApply('n1', entry(3, 2, 0, 2_700), asTerm(2), 2);
  // Term 3 starts 1 s ahead of term 2's timeline: 100 ms of real time, 1100 ms of cluster time.
  throwsKind(t, 'cluster-time', () => c.observeApply('n1', entry(4, 3, 0, 3_800), asTerm(3), 3));
  const ok = checker();
  ok.observeStamped(asIndex(1), asTerm(1), 1_000);
  ok.observeStamped(asIndex(2), asTerm(1), 2_000);
  ok.observeApply('n1', entry(1, 1, 0, 700), asTerm(1), 0);
  ok.observeApply('n1', entry(2, 1, 0, 1_710), asTerm(1), 1); // 1000 ms × (1 + drift) allowed
  t.equal(ok.committedCount, 2);
});

t.test('a newly committed entry must already be durable on a majority', async (t) => {
  const held = log([entry(1, 1, 5)]);
  const empty = log([]);
  const c = new SafetyChecker({
    nowMs: () => 1e6,
    driftRatioMax: 0.01,
    clusterTimeSlackMs: 1,
    durableLogs: () => [held, held, empty],
  });
  c.observeApply('n1', entry(1, 1, 5), asTerm(1), 0);
  const c2 = new SafetyChecker({
    nowMs: () => 1e6,
    driftRatioMax: 0.01,
    clusterTimeSlackMs: 1,
    durableLogs: () => [held, empty, empty],
  });
  throwsKind(t, 'committed-not-durable', () => c2.observeApply('n1', entry(1, 1, 5), asTerm(1), 0));
});

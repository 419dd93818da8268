// Proves SimStorage keeps only fsynced writes across a crash and applies Ready's replace-the-tail rule.
import t from 'tap';
import { asIndex, asTerm } from '../../src/core/types.js';
import type { Entry } from '../../src/core/types.js';
import { SimStorage } from '../../src/testing/index.js';

const e = (index: number, term: number): Entry => ({
  index: asIndex(index),
  term: asTerm(term),
  type: 'noop',
  clusterTimeMs: 0,
  data: new Uint8Array(0),
});

t.test('unsynced writes are lost on crash; synced ones survive', async (t) => {
  const s = new SimStorage();
  s.stage({ term: asTerm(1), votedFor: 'n1', commitIndex: asIndex(0) }, [e(1, 1), e(2, 1)]);
  t.equal(s.fsync(), 1);
  s.stage({ term: asTerm(2), votedFor: null, commitIndex: asIndex(1) }, [e(3, 2)]);
  s.dropUnsynced();
  const init = s.initialState();
  t.equal(init.hardState.term, 1);
  t.equal(init.hardState.votedFor, 'n1');
  t.equal(init.entries.length, 2);
});

t.test(
  'an entry at an existing index replaces it and everything after it; gaps are refused',
  async (t) => {
    const s = new SimStorage();
    s.stage(null, [e(1, 1), e(2, 1), e(3, 1)]);
    s.fsync();
    s.stage(null, [e(2, 2)]);
    t.equal(s.fsync(), 2);
    t.equal(s.lastIndex, 2);
    t.equal(s.termAt(2), 2);
    s.stage(null, [e(5, 2)]);
    t.throws(() => s.fsync(), 'a gap in the log is a Ready contract violation');
  },
);

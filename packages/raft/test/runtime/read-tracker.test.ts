// Proves ReadTracker resolves a read barrier only once its confirmed index is applied (ReadIndex,
// §6.4), fails unconfirmed reads on losing leadership, and refuses past its bound.
import t from 'tap';
import { ReadTracker } from '../../src/read-tracker.js';
import { asIndex } from '../../src/core/types.js';
import { NotLeaderError, ResourceExhaustedError } from '../../src/errors.js';

const DEADLINE_MS = 60_000;

t.test('resolves at the confirmed index once applied, not before', async (t) => {
  const reads = new ReadTracker(10);
  const read = reads.start(DEADLINE_MS, undefined);
  let settled = false;
  void read.promise.then(() => (settled = true));
  reads.answered([{ requestId: read.requestId, index: asIndex(7) }], []);
  reads.serve(asIndex(6));
  await Promise.resolve();
  t.equal(settled, false, 'not served below its index');
  reads.serve(asIndex(7));
  t.equal(await read.promise, 7);
  t.equal(reads.size, 0);
});

t.test('a read the core fails, and unconfirmed reads on losing leadership, reject', async (t) => {
  const reads = new ReadTracker(10);
  const failed = reads.start(DEADLINE_MS, undefined);
  const unconfirmed = reads.start(DEADLINE_MS, undefined);
  const confirmed = reads.start(DEADLINE_MS, undefined);
  reads.answered(
    [{ requestId: confirmed.requestId, index: asIndex(2) }],
    [{ requestId: failed.requestId, leaderHint: 'b' }],
  );
  reads.failUnconfirmed('b');
  await t.rejects(failed.promise, NotLeaderError);
  await t.rejects(unconfirmed.promise, NotLeaderError);
  t.equal(reads.size, 1, 'the confirmed read still waits for its index');
  reads.serve(asIndex(2));
  t.equal(await confirmed.promise, 2);
});

t.test('full at readsPendingMax', async (t) => {
  const reads = new ReadTracker(1);
  const read = reads.start(DEADLINE_MS, undefined);
  t.ok(reads.full() instanceof ResourceExhaustedError);
  reads.checkInvariants();
  reads.failAll(new Error('stopped'));
  await t.rejects(read.promise, { message: 'stopped' });
  t.equal(reads.full(), null);
});

// Proves ProposalTracker settles a proposal by the term of the entry applied at its index (§5.3,
// §5.4.2), fails the proposals an installed snapshot covers, and refuses past its bound.
import t from 'tap';
import { ProposalTracker } from '../../src/proposal-tracker.js';
import { asIndex, asTerm, type Entry } from '../../src/core/types.js';
import { NotLeaderError, ResourceExhaustedError, TimeoutError } from '../../src/errors.js';

const DEADLINE_MS = 60_000;
const entry = (index: number, term: number): Entry => ({
  index: asIndex(index),
  term: asTerm(term),
  clusterTimeMs: 5,
  type: 'command',
  data: new Uint8Array(),
});

t.test('our term at our index resolves with the result; another term rejects', async (t) => {
  const tracker = new ProposalTracker<string>(10);
  const ours = tracker.track(asIndex(1), asTerm(2), 'a', DEADLINE_MS, undefined);
  const theirs = tracker.track(asIndex(2), asTerm(2), 'a', DEADLINE_MS, undefined);
  tracker.applied(entry(1, 2), 'r1', 'a');
  tracker.applied(entry(2, 3), 'r2', 'b');
  t.same(await ours, { index: 1, clusterTimeMs: 5, result: 'r1' });
  const err = await theirs.catch((e: unknown) => e);
  t.ok(err instanceof NotLeaderError && err.leaderHint === 'b', 'NotLeaderError names the leader');
  t.equal(tracker.size, 0);
  tracker.checkInvariants(asIndex(2));
});

t.test('a newer-term proposal at the same index fails the older one', async (t) => {
  const tracker = new ProposalTracker<string>(10);
  const older = tracker.track(asIndex(3), asTerm(1), 'a', DEADLINE_MS, undefined);
  const newer = tracker.track(asIndex(3), asTerm(2), 'a', DEADLINE_MS, undefined);
  await t.rejects(older, NotLeaderError);
  tracker.applied(entry(3, 2), 'ok', 'a');
  t.equal((await newer).result, 'ok');
});

t.test('an installed snapshot fails the proposals it covers, outcome unknown', async (t) => {
  const tracker = new ProposalTracker<string>(10);
  const covered = tracker.track(asIndex(4), asTerm(1), 'a', DEADLINE_MS, undefined);
  const after = tracker.track(asIndex(6), asTerm(1), 'a', DEADLINE_MS, undefined);
  tracker.compacted(asIndex(5));
  await t.rejects(covered, TimeoutError);
  t.equal(tracker.size, 1);
  tracker.failAll(new Error('stopped'));
  await t.rejects(after, { message: 'stopped' });
});

t.test('full at proposalsPendingMax', async (t) => {
  const tracker = new ProposalTracker<string>(1);
  t.equal(tracker.full(), null);
  const p = tracker.track(asIndex(1), asTerm(1), 'a', DEADLINE_MS, undefined);
  t.ok(tracker.full() instanceof ResourceExhaustedError);
  tracker.failAll(new Error('done'));
  await t.rejects(p);
});

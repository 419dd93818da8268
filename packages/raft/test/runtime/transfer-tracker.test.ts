// Proves TransferTracker resolves a leadership transfer when its target leads (§3.10) and fails
// it when another node does.
import t from 'tap';
import { TransferTracker } from '../../src/transfer-tracker.js';
import { NotLeaderError } from '../../src/errors.js';

const DEADLINE_MS = 60_000;

t.test('resolves when the target leads; rejects when another node does', async (t) => {
  const transfers = new TransferTracker();
  const toB = transfers.start('b', DEADLINE_MS, undefined);
  const toC = transfers.start('c', DEADLINE_MS, undefined);
  transfers.leaderSeen('a', true);
  t.equal(transfers.size, 2, 'still leader: both wait');
  transfers.leaderSeen(null, false);
  t.equal(transfers.size, 2, 'no leader known: both wait');
  transfers.leaderSeen('b', false);
  await toB;
  const err = await toC.catch((e: unknown) => e);
  t.ok(err instanceof NotLeaderError && err.leaderHint === 'b', 'names the new leader');
  t.equal(transfers.size, 0);
});

t.test('failAll rejects every transfer', async (t) => {
  const transfers = new TransferTracker();
  const p = transfers.start('b', DEADLINE_MS, undefined);
  transfers.failAll(new Error('stopped'));
  await t.rejects(p, { message: 'stopped' });
});

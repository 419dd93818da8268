// Proves a run's owner counts as dead only when verifiably gone (no such pid, exited, pid reused,
// other boot) and that cleanup decisions never remove an own, live, unknown or unowned run.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { currentOwner, ownerLiveness, readProcStat, type RunOwner } from './run-owner.js';
import { decideLeftover, type RunStateFile } from './netns.js';

const onLinux = readProcStat(process.pid) !== null && readProcStat(process.pid) !== 'unreadable';

t.test('ownerLiveness', { skip: onLinux ? false : 'needs /proc' }, async (t) => {
  const me = currentOwner();
  t.equal(ownerLiveness(me), 'alive', 'this process');
  t.equal(
    ownerLiveness({ ...me, startTicks: (me.startTicks ?? 0) + 1 }),
    'dead',
    'same pid, other start time = pid reused',
  );
  t.equal(ownerLiveness({ ...me, bootId: 'another-boot' }), 'dead', 'other boot');
  t.equal(
    ownerLiveness({ ...me, startTicks: null }),
    'alive',
    'old state file without start time: pid only',
  );
  t.equal(
    ownerLiveness({ pid: 2 ** 22 + 1, startTicks: 1, bootId: null }),
    'dead',
    'pid above pid_max',
  );
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  t.equal(
    ownerLiveness({ pid: Number(child.stdout), startTicks: 1, bootId: me.bootId }),
    'dead',
    'an exited process',
  );
  t.equal(ownerLiveness({ pid: 0, startTicks: null, bootId: null }), 'unknown');
});

t.test('decideLeftover', async (t) => {
  const state: RunStateFile = {
    prefix: 'tn000001',
    pid: 123,
    startTicks: 5,
    bootId: 'b',
    subnetIndex: 7,
    createdAtIso: '',
  };
  const says = (answer: 'alive' | 'dead' | 'unknown') => (_owner: RunOwner) => answer;
  t.equal(
    decideLeftover({ ownLiveRun: false, state, unowned: false, liveness: says('dead') }),
    'remove',
  );
  t.equal(
    decideLeftover({ ownLiveRun: false, state, unowned: true, liveness: says('alive') }),
    'keep-owner-alive',
    'unowned never overrides a live owner',
  );
  t.equal(
    decideLeftover({ ownLiveRun: false, state, unowned: false, liveness: says('unknown') }),
    'keep-owner-unknown',
  );
  t.equal(
    decideLeftover({ ownLiveRun: true, state, unowned: true, liveness: says('dead') }),
    'keep-own-live-run',
  );
  t.equal(
    decideLeftover({
      ownLiveRun: false,
      state: 'unreadable',
      unowned: true,
      liveness: says('dead'),
    }),
    'keep-owner-unknown',
    'a state file being written',
  );
  t.equal(
    decideLeftover({ ownLiveRun: false, state: null, unowned: false, liveness: says('dead') }),
    'keep-unowned',
    'a sibling run with another state dir',
  );
  t.equal(
    decideLeftover({ ownLiveRun: false, state: null, unowned: true, liveness: says('dead') }),
    'remove',
    'operator --cleanup --all',
  );
  let asked: RunOwner | null = null;
  decideLeftover({
    ownLiveRun: false,
    state: { prefix: 'tn000002', pid: 9, subnetIndex: null, createdAtIso: '' },
    unowned: false,
    liveness: (o) => ((asked = o), 'alive'),
  });
  t.same(
    asked,
    { pid: 9, startTicks: null, bootId: null },
    'old state files are checked by pid only',
  );
});

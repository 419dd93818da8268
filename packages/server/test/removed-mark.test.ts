// Proves the removed member's mark (docs/operations.md "Membership changes"): written by
// markRemoved, seen by hasRemovedMark (the launcher's "it was removed" hint) and refused at start
// by refuseIfRemoved with the way back; a directory without it, or no directory, passes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { hasRemovedMark, markRemoved, refuseIfRemoved } from '../src/cluster/removed-mark.js';
import { StartRefusedError } from '../src/cluster/membership-startup.js';

t.test('the mark: written, seen, refused at start', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'removed-mark-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.equal(hasRemovedMark(dir), false, 'no mark yet');
  t.equal(hasRemovedMark(join(dir, 'missing')), false, 'no directory');
  refuseIfRemoved(dir, 'n3');
  markRemoved(dir, 'n3');
  t.equal(hasRemovedMark(dir), true);
  t.throws(() => refuseIfRemoved(dir, 'n3'), StartRefusedError);
  t.throws(() => refuseIfRemoved(dir, 'n3'), /n3, which was removed[\s\S]*--join/);
});

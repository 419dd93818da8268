// Proves the liveness checker measures recovery per fault kind and flags a cluster that serves no
// write within the bound after the last heal.
import t from 'tap';
import { checkLiveness } from './liveness.js';
import { HistoryBuilder, ok, fail } from './testing.js';
import type { FaultEvent } from '../types.js';

const faults: FaultEvent[] = [
  {
    timeMs: 1000,
    kind: 'crash',
    action: 'inject',
    targets: ['n1'],
    detail: 'SIGKILL leader n1',
    faultId: 1,
  },
  {
    timeMs: 3000,
    kind: 'crash',
    action: 'heal',
    targets: ['n1'],
    detail: 'restart n1',
    faultId: 1,
  },
  {
    timeMs: 4000,
    kind: 'partition',
    action: 'inject',
    targets: ['n2'],
    detail: 'isolate n2',
    faultId: 2,
  },
  { timeMs: 8000, kind: 'partition', action: 'heal', targets: ['n2'], detail: 'heal', faultId: 2 },
];

t.test('recovery times per fault kind; ok when writes resume', async (t) => {
  const h = new HistoryBuilder();
  h.add('a', 'kv.put', { key: 'k', value: 1 }, 3100, 3500, ok({ key: 'k', revision: 1 }));
  h.add('a', 'kv.put', { key: 'k', value: 2 }, 8000, 9200, ok({ key: 'k', revision: 2 }));
  const r = checkLiveness(h.ops, faults, 30000, 9000);
  t.ok(r.ok, JSON.stringify(r.violations));
  t.equal(r.stats['recovery.crash.maxMs'], 500);
  t.equal(r.stats['recovery.partition.maxMs'], 1200);
  t.equal(r.stats['finalRecoveryMs'], 1200);
});

t.test('no write after the final heal within the bound is flagged', async (t) => {
  const h = new HistoryBuilder();
  h.add('a', 'kv.put', { key: 'k', value: 1 }, 3100, 3500, ok({ key: 'k', revision: 1 }));
  h.add('a', 'kv.put', { key: 'k', value: 2 }, 8000, 13000, fail('no_leader', 503));
  const r = checkLiveness(h.ops, faults, 30000, 9000);
  t.notOk(r.ok);
  t.equal(r.violations[0]!.property, 'no-recovery');
  t.ok(checkLiveness(h.ops, faults, 12000, 9000).ok, 'run ended before the bound: not judged');
  const slow = new HistoryBuilder();
  slow.add('a', 'kv.put', { key: 'k', value: 2 }, 8000, 20000, ok({ key: 'k', revision: 2 }));
  t.notOk(checkLiveness(slow.ops, faults, 30000, 9000).ok, 'first write 12 s after the heal');
});

// Proves runChecks loads a run folder (history.jsonl, faults.jsonl, leader-samples.jsonl,
// fenced-store.jsonl), pairs and merges the history, writes check-verdicts.json/.md, and fails the
// run when one checker finds a violation or throws.
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runChecks, loadRunRecord, createCheckers, DEFAULT_RUN_TIMING } from './index.js';
import type { HistoryEvent } from '../types.js';

const events: HistoryEvent[] = [
  {
    type: 'invoke',
    opId: 1,
    process: 'a',
    node: 'n1',
    kind: 'lease.acquire',
    args: { name: 'L', holder: 'A', ttlMs: 3000, idempotencyKey: 'k', attempt: 1 },
    timeMs: 0,
  },
  {
    type: 'complete',
    opId: 1,
    process: 'a',
    node: 'n1',
    kind: 'lease.acquire',
    timeMs: 2000,
    outcome: { status: 'unknown', reason: 'timeout' },
  },
  {
    type: 'invoke',
    opId: 2,
    process: 'a',
    node: 'n2',
    kind: 'lease.acquire',
    args: { name: 'L', holder: 'A', ttlMs: 3000, idempotencyKey: 'k', attempt: 2 },
    timeMs: 2100,
  },
  {
    type: 'complete',
    opId: 2,
    process: 'a',
    node: 'n2',
    kind: 'lease.acquire',
    timeMs: 2110,
    outcome: {
      status: 'ok',
      httpStatus: 200,
      value: { name: 'L', holder: 'A', fencingToken: 1, ttlMs: 3000 },
    },
  },
  {
    type: 'invoke',
    opId: 3,
    process: 'q',
    node: 'n3',
    kind: 'lease.get',
    args: { name: 'L' },
    timeMs: 2200,
  },
  {
    type: 'complete',
    opId: 3,
    process: 'q',
    node: 'n3',
    kind: 'lease.get',
    timeMs: 2210,
    outcome: {
      status: 'ok',
      httpStatus: 200,
      value: { name: 'L', holder: 'A', fencingToken: 1, ttlMs: 3000, remainingMs: 2800 },
    },
  },
];
const jsonl = (xs: unknown[]): string => xs.map((x) => JSON.stringify(x)).join('\n') + '\n';

t.test('a passing run folder', async (t) => {
  const dir = t.testdir({
    'history.jsonl': jsonl(events),
    'faults.jsonl': '',
    'leader-samples.jsonl': '',
  });
  const rec = loadRunRecord(dir);
  t.equal(rec.ops.length, 3);
  t.same(rec.timing, DEFAULT_RUN_TIMING);
  const v = await runChecks(dir);
  t.ok(v.ok, JSON.stringify(v.results));
  t.same(
    Object.keys(v.results),
    createCheckers({ timing: DEFAULT_RUN_TIMING }).map((c) => c.name),
  );
  t.ok(existsSync(join(dir, 'check-verdicts.json')));
  t.match(readFileSync(join(dir, 'check-verdicts.md'), 'utf8'), /PASS/);
});

t.test('a failing run folder (store accepted a stale token) and a throwing checker', async (t) => {
  const store = [
    {
      seq: 1,
      timeMs: 1,
      resource: 'lease:L',
      fencingToken: 2,
      writer: 'B',
      accepted: true,
      highestBefore: null,
      payload: null,
    },
    {
      seq: 2,
      timeMs: 2,
      resource: 'lease:L',
      fencingToken: 1,
      writer: 'A',
      accepted: true,
      highestBefore: 2,
      payload: null,
    },
  ];
  const dir = t.testdir({ 'history.jsonl': jsonl(events), 'fenced-store.jsonl': jsonl(store) });
  const v = await runChecks(dir);
  t.notOk(v.ok);
  t.notOk(v.results['fencing']!.ok);
  t.match(
    readFileSync(join(dir, 'check-verdicts.md'), 'utf8'),
    /FAIL[\s\S]*fencing-stale-accepted/,
  );
  const boom = await runChecks(loadRunRecord(dir), {
    write: false,
    checkers: [
      {
        name: 'boom',
        check: () => {
          throw new Error('bug');
        },
      },
    ],
  });
  t.notOk(boom.ok);
  t.equal(boom.results['boom']!.violations[0]!.property, 'checker-error');
});

// Proves the workload drives every primitive against a correct (fake, in-process) Tenure, records a
// history and fenced-store log that every checker accepts, and that its `?consistency=stale` mode
// against a lagging node produces a history the checkers reject (BC-08).
import t, { type Test } from 'tap';
import { createRandom } from '../util/random.js';
import { createRunClock } from '../util/clock.js';
import { createTenureWorkload } from './tenure-workload.js';
import { createRecorder } from './history.js';
import { startFakeTenure, fakeClusterHandle } from './fake-tenure.js';
import { runChecks } from '../check/index.js';
import type { HistoryOp, RunRecord } from '../types.js';
import { DEFAULT_TIMING } from '../check/testing.js';

/** How a test run ends: once `done(ops)` holds (checked every 100 ms), after at least 1.5 s. */
interface RunPlan {
  readonly staleLagMs: number;
  readonly staleReads: boolean;
  readonly ttlMs: number;
  readonly requestTimeoutMs: number;
  readonly done: (ops: readonly HistoryOp[]) => boolean;
}

/** Upper bound of a run; only a broken workload gets near it (the test then fails on `done`). */
const runMsMax = 120_000;

async function run(
  t: Test,
  plan: RunPlan,
): Promise<{ record: RunRecord; verdict: Awaited<ReturnType<typeof runChecks>> }> {
  const dir = t.testdir({});
  const clock = createRunClock();
  const fake = await startFakeTenure({
    random: createRandom(7),
    clock,
    staleLagMs: plan.staleLagMs,
  });
  const cluster = fakeClusterHandle(fake.url, clock);
  const history = createRecorder(clock);
  const wl = createTenureWorkload({
    seed: 42,
    random: createRandom(42),
    runDir: dir,
    log: () => {},
    ttlMs: plan.ttlMs,
    workload: {
      thinkMs: [5, 30],
      leaseWorkers: 3,
      electionWorkers: 2,
      counterWorkers: 2,
      readers: 2,
      libraryWorkers: 1,
      semaphoreWorkers: 0,
      sharedLockWorkers: 0,
      sessionWorkers: 0,
      watchers: 0,
      operatorPauseMs: [20, 150],
      staleReads: plan.staleReads,
      finalPhaseMs: 10_000,
      requestTimeoutMs: plan.requestTimeoutMs,
    },
  });
  const stop = new AbortController();
  await wl.start(cluster, history, stop.signal);
  // Wait on what the assertions need (events in the history), not on a fixed time: on a loaded
  // machine the same work takes several times longer.
  while (clock.now() < runMsMax && (clock.now() < 1500 || !plan.done(history.ops())))
    await new Promise((r) => setTimeout(r, 100));
  stop.abort();
  await wl.stop();
  await fake.close();
  const record: RunRecord = {
    runDir: dir,
    seed: 42,
    scenario: 'workload-test',
    nodeIds: cluster.nodeIds,
    durationMs: clock.now(),
    timing: DEFAULT_TIMING,
    history: history.events(),
    ops: history.ops(),
    faults: [],
    leaderSamples: [],
  };
  // A budget, not a speed claim: generous so a slow machine still finishes every search.
  const verdict = await runChecks(record, { searchBudgetMs: 60_000 });
  return { record, verdict };
}

/** The client library acquired (ok) and then released through the recording fetch. */
const libraryCycled = (ops: readonly HistoryOp[]): boolean =>
  ops.some((o) => o.args['lib'] === true && o.kind === 'lease.release') &&
  ops.some(
    (o) => o.args['lib'] === true && o.kind === 'lease.acquire' && o.outcome.status === 'ok',
  );

t.test('a correct server passes every checker under the full workload', async (t) => {
  const kindsNeeded = [
    'lease.renew',
    'election.renew',
    'fence.check',
    'kv.get',
    'lease.history',
    'lease.revoke',
  ];
  const { record, verdict } = await run(t, {
    staleLagMs: 0,
    staleReads: false,
    // Generous: a lease must outlive a library cycle (acquire, writes, release) with the other
    // core busy; the fake answers in-process, so this costs run time only.
    ttlMs: 2000,
    requestTimeoutMs: 5000,
    done: (ops) =>
      libraryCycled(ops) &&
      kindsNeeded.every((k) => ops.some((o) => o.kind === k)) &&
      ops.filter((o) => o.kind === 'fs.write' && o.outcome.status === 'ok').length > 10,
  });
  const kinds = new Set(record.ops.map((o) => o.kind));
  for (const k of [
    'lease.acquire',
    'lease.renew',
    'lease.get',
    'election.campaign',
    'election.renew',
    'kv.put',
    'kv.get',
    'fs.write',
    'fence.check',
    'lease.history',
    'lease.revoke',
  ])
    t.ok(kinds.has(k as never), `workload issued ${k}`);
  t.ok(
    record.ops.some((o) => o.args['final'] === true),
    'final reads recorded',
  );
  t.ok(
    record.ops.some(
      (o) => o.args['lib'] === true && o.kind === 'lease.acquire' && o.outcome.status === 'ok',
    ),
    'the client library acquired through the recording fetch',
  );
  t.ok(
    record.ops.some((o) => o.args['lib'] === true && o.kind === 'lease.release'),
    'and released',
  );
  const writes = record.ops.filter((o) => o.kind === 'fs.write');
  t.ok(
    writes.filter((o) => o.outcome.status === 'ok').length > 10,
    'side effects accepted by the fenced store',
  );
  t.notOk(
    writes.some((o) => o.outcome.status === 'fail' && o.outcome.code !== 'stale_token'),
    'the store never refused a write as malformed',
  );
  for (const [name, r] of Object.entries(verdict.results))
    t.ok(r.ok, `${name}: ${JSON.stringify(r.violations.slice(0, 2))}`);
  t.equal(
    verdict.results['linearizability']!.stats['partitionsUnknown'],
    0,
    'every search finished',
  );
});

t.test('stale reads from a lagging node are rejected by the checkers', async (t) => {
  const { verdict } = await run(t, {
    staleLagMs: 600,
    staleReads: true,
    ttlMs: 400,
    requestTimeoutMs: 5000,
    done: (ops) => ops.filter((o) => o.args['consistency'] === 'stale').length >= 50,
  });
  t.notOk(verdict.ok);
  t.notOk(verdict.results['linearizability']!.ok, 'linearizability flags the stale reads');
});

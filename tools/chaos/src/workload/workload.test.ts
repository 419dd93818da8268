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
import type { RunRecord } from '../types.js';
import { DEFAULT_TIMING } from '../check/testing.js';

async function run(
  t: Test,
  staleLagMs: number,
  staleReads: boolean,
): Promise<{ record: RunRecord; verdict: Awaited<ReturnType<typeof runChecks>> }> {
  const dir = t.testdir({});
  const clock = createRunClock();
  const fake = await startFakeTenure({ random: createRandom(7), clock, staleLagMs });
  const cluster = fakeClusterHandle(fake.url, clock);
  const history = createRecorder(clock);
  const wl = createTenureWorkload({
    seed: 42,
    random: createRandom(42),
    runDir: dir,
    log: () => {},
    ttlMs: 400,
    workload: {
      thinkMs: [5, 30],
      leaseWorkers: 3,
      electionWorkers: 2,
      counterWorkers: 2,
      readers: 2,
      libraryWorkers: 1,
      staleReads,
      finalPhaseMs: 3000,
      requestTimeoutMs: 1000,
    },
  });
  const stop = new AbortController();
  await wl.start(cluster, history, stop.signal);
  await new Promise((r) => setTimeout(r, 1500));
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
  const verdict = await runChecks(record, { searchBudgetMs: 8000 });
  return { record, verdict };
}

t.test('a correct server passes every checker under the full workload', async (t) => {
  const { record, verdict } = await run(t, 0, false);
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
  const { verdict } = await run(t, 600, true);
  t.notOk(verdict.ok);
  t.notOk(verdict.results['linearizability']!.ok, 'linearizability flags the stale reads');
});

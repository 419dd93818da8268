// Proves the stall metrics (docs/operations.md, Monitoring): a blocked event loop shows as the
// largest delay of the window, each scrape starts a new window (a HEAD probe does not), and GC
// pauses are counted by kind.
import t from 'tap';
import { Registry } from 'prom-client';
import { watchRuntime } from '../src/runtime-metrics.js';
import { harness } from './fixtures/harness.js';

/** The value of `name` with `labels` in the registry's current reading. */
async function value(registry: Registry, name: string, labels: Record<string, string>) {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const v = metric?.values.find((x) =>
    Object.entries(labels).every(([k, want]) => String(x.labels[k]) === want),
  );
  return v?.value;
}

t.test('a blocked event loop is the largest delay of its window; a scrape resets it', async (t) => {
  const registry = new Registry();
  const stop = watchRuntime(registry);
  t.teardown(stop);
  await value(registry, 'tenure_event_loop_delay_seconds', { quantile: '1' }); // a fresh window
  // Let the monitor's timer run, then block the loop for 300 ms and let the timer see it.
  await new Promise((resolve) => setTimeout(resolve, 30));
  const until = performance.now() + 300;
  while (performance.now() < until);
  await new Promise((resolve) => setTimeout(resolve, 30));
  const largest = await value(registry, 'tenure_event_loop_delay_seconds', { quantile: '1' });
  t.ok(largest !== undefined && largest >= 0.25, `largest delay ${largest} s ≥ the 0.3 s block`);
  // No timer can run between two synchronous-looking scrapes: the new window is empty.
  const next = await value(registry, 'tenure_event_loop_delay_seconds', { quantile: '1' });
  t.equal(next, 0, 'the scrape started a new, empty window');
});

t.test('GC pauses are counted by kind', async (t) => {
  const registry = new Registry();
  const stop = watchRuntime(registry);
  t.teardown(stop);
  for (const kind of ['minor', 'major', 'incremental', 'weakcb'])
    t.not(
      await value(registry, 'tenure_gc_pause_seconds_total', { kind }),
      undefined,
      `${kind} exists`,
    );
  // Allocate until a minor GC has been reported (the observer is called asynchronously).
  let seen: number | undefined;
  let keep: unknown[] = [];
  for (let round = 0; round < 200 && !(seen !== undefined && seen > 0); round++) {
    keep = Array.from({ length: 50_000 }, (_, i) => ({ i, s: `x${i}` }));
    await new Promise((resolve) => setImmediate(resolve));
    seen = await value(registry, 'tenure_gc_pause_seconds_total', { kind: 'minor' });
  }
  t.ok(keep.length > 0);
  t.ok(seen !== undefined && seen > 0, `minor GC pause time counted: ${seen} s`);
});

t.test('a HEAD of /metrics is not a scrape: the window keeps its stall', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const stop = watchRuntime(h.metrics.registry);
  t.teardown(stop);
  const largest = async () =>
    value(h.metrics.registry, 'tenure_event_loop_delay_seconds', { quantile: '1' });
  await largest(); // a fresh window; let its first tick run, then block for 300 ms
  await new Promise((resolve) => setTimeout(resolve, 30));
  const until = performance.now() + 300;
  while (performance.now() < until);
  await new Promise((resolve) => setTimeout(resolve, 30));
  const head = await h.app.inject({ method: 'HEAD', url: '/metrics' });
  t.equal(head.statusCode, 200, 'HEAD answers');
  const seen = await largest();
  t.ok(seen !== undefined && seen >= 0.25, `the block is in the window after a HEAD: ${seen} s`);
});

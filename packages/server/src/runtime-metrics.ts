/**
 * Stall metrics of the Node.js runtime (docs/operations.md, Monitoring): how late the event loop
 * ran and how long garbage collection paused it. A latency tail that no request explains by itself
 * (a p99 far above the p50 while CPU is not saturated) shows up here first.
 *
 * - `tenure_event_loop_delay_seconds{quantile}`: how much later than scheduled a timer of
 *   EVENT_LOOP_RESOLUTION_MS ran, over the window since the previous scrape, at quantiles 0.5, 0.99
 *   and 1 (the largest). Each scrape reads and then restarts the window, so one scraper should own
 *   it (as Prometheus does); 0 when no timer ran in the window.
 * - `tenure_gc_pause_seconds_total{kind}`: time the process spent paused in garbage collection, by
 *   `minor`, `major`, `incremental`, `weakcb` (node:perf_hooks 'gc' entries).
 */
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * Sampling period of the event-loop monitor, ms: a timer this often, run by Node outside
 * JavaScript, so an idle node's CPU barely moves (a JavaScript timer at this rate cost an idle node
 * about 1 % of a core). Stalls of interest (a latency tail) are longer than that. The monitor
 * starts each window afresh at the first tick after a scrape: a stall that begins within one
 * period after a scrape is not counted (docs/operations.md).
 */
export const EVENT_LOOP_RESOLUTION_MS = 10;

const NS_PER_S = 1e9;

/** GC kind names by node:perf_hooks constant. */
const GC_KINDS: ReadonlyMap<number, string> = new Map([
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weakcb'],
]);

/**
 * Registers the two stall metrics in `registry` and starts their monitors. Returns the function
 * that stops the monitors (call it when the node stops; the metrics then read 0 and stay put).
 */
export function watchRuntime(registry: Registry): () => void {
  const delay = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  delay.enable();
  /** Lateness (s) of a recorded timer interval of `ns`; 0 for a window without samples. */
  const lateS = (ns: number): number =>
    delay.count === 0 ? 0 : Math.max(0, ns / NS_PER_S - EVENT_LOOP_RESOLUTION_MS / 1000);
  new Gauge({
    name: 'tenure_event_loop_delay_seconds',
    help: `How much later than scheduled a ${EVENT_LOOP_RESOLUTION_MS} ms timer ran since the previous scrape, by quantile (1 = the largest)`,
    labelNames: ['quantile'],
    registers: [registry],
    collect() {
      this.set({ quantile: '0.5' }, lateS(delay.percentile(50)));
      this.set({ quantile: '0.99' }, lateS(delay.percentile(99)));
      this.set({ quantile: '1' }, lateS(delay.max));
      delay.reset();
    },
  });
  const gc = new Counter({
    name: 'tenure_gc_pause_seconds_total',
    help: 'Time the process was paused in garbage collection, by kind (minor, major, incremental, weakcb)',
    labelNames: ['kind'],
    registers: [registry],
  });
  for (const kind of GC_KINDS.values()) gc.inc({ kind }, 0); // every series exists from the start
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as { readonly detail?: { readonly kind?: number } }).detail?.kind;
      gc.inc({ kind: GC_KINDS.get(kind ?? -1) ?? 'other' }, entry.duration / 1000);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    delay.disable();
    observer.disconnect();
  };
}

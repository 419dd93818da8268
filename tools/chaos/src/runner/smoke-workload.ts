/**
 * The harness's fallback workload (used only when workload/index.ts is missing): a few client
 * processes loop acquire → renew → release on eight lease names through random nodes, recording
 * every call in the history. Outcomes per types.ts: 2xx ok, 4xx and 503 fail, anything else
 * unknown. Bounded: each call has a 3 s client deadline and the loop ends with the signal.
 */
import type { Random, Workload } from '../types.js';
import { LeaseClient, tokenOf } from './client-call.js';

/** The fallback workload. */
export function createSmokeWorkload(random: Random, processCount = 4, ttlMs = 3_000): Workload {
  const controller = new AbortController();
  const loops: Promise<void>[] = [];
  return {
    name: 'harness-smoke',
    async start(cluster, history, signal) {
      signal.addEventListener('abort', () => controller.abort(), { once: true });
      for (let p = 0; p < processCount; p++) {
        const r = random.fork(`p${p}`);
        const proc = `p${p}`;
        loops.push(
          (async () => {
            let incarnation = 0;
            while (!controller.signal.aborted) {
              const name = `smoke-${r.int(0, 7)}`;
              const holder = `${proc}-${incarnation++}`;
              const node = r.pick(cluster.nodeIds);
              const client = new LeaseClient(history, cluster, proc);
              const acquired = await client.acquire(node, name, holder, ttlMs);
              const token = tokenOf(acquired.outcome);
              if (token !== null && !controller.signal.aborted) {
                await client.renew(r.pick(cluster.nodeIds), name, holder, token);
                await client.release(r.pick(cluster.nodeIds), name, holder, token);
              } else {
                await client.get(r.pick(cluster.nodeIds), name);
                await new Promise((resolve) => setTimeout(resolve, r.int(20, 200)));
              }
            }
          })(),
        );
      }
    },
    async stop() {
      controller.abort();
      await Promise.all(loops);
    },
  };
}

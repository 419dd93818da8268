/**
 * Test support: a tiny retrying JSON client over a LocalCluster for workloads. Rotates through
 * the nodes on network errors, 503 and 504, retrying with the same Idempotency-Key (docs/api.md), so
 * an outcome-unknown request is answered by its first outcome.
 */
import { randomUUID } from 'node:crypto';
import type { HttpAnswer, LocalCluster } from './cluster.js';

export interface RetryOptions {
  /** Give up after this long overall (ms). */
  readonly totalMs?: number;
  /** Start at this node (index into cluster.nodes); rotates on failures. */
  readonly startNode?: number;
  /** Per-attempt HTTP timeout (ms). */
  readonly attemptMs?: number;
}

/**
 * Outcome of a retried call: the final answer, how many attempts it took, and the node and
 * moment (`performance.now()` ms) the answering attempt was sent. A value the server read while
 * serving it (a lease's `remainingMs`, say) was read at or after `sentAtMs` — and possibly long
 * before the answer arrived on a loaded machine — so time spans a server value promises must be
 * measured from `sentAtMs` (docs/concepts.md, "What a client must do").
 */
export interface RetriedAnswer<T> extends HttpAnswer<T> {
  readonly attempts: number;
  /** Node the answering attempt was sent to (it may have forwarded it to the leader). */
  readonly sentTo: string;
  /** `performance.now()` (ms) just before the answering attempt was sent. */
  readonly sentAtMs: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Send a mutating request until it gets an answer that is not 503/504/network error. Every
 * attempt carries the same Idempotency-Key. Throws when `totalMs` passes.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test answers are read field by field
export async function retrying<T = any>(
  cluster: LocalCluster,
  method: string,
  path: string,
  body: unknown,
  opts: RetryOptions = {},
): Promise<RetriedAnswer<T>> {
  const key = randomUUID();
  const until = Date.now() + (opts.totalMs ?? 30_000);
  let nodeIndex = opts.startNode ?? 0;
  let attempts = 0;
  let last = 'no attempt';
  while (Date.now() < until) {
    attempts++;
    const id = cluster.nodes[nodeIndex % cluster.nodes.length]!.id;
    const sentAtMs = performance.now();
    try {
      const a = await cluster.request<T>(
        id,
        method,
        path,
        body,
        { 'idempotency-key': key },
        opts.attemptMs ?? 15_000,
      );
      if (a.status !== 503 && a.status !== 504) return { ...a, attempts, sentTo: id, sentAtMs };
      last = `${a.status} from ${id}`;
    } catch (err) {
      last = `${(err as Error).message} from ${id}`;
    }
    nodeIndex++;
    await sleep(Math.min(200, 20 * attempts));
  }
  throw new Error(`${method} ${path} failed for ${opts.totalMs ?? 30_000} ms; last: ${last}`);
}

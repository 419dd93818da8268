/**
 * The operator of the chaos workload (docs/primitives.md "Holder history and operator revoke"):
 * now and then it reads a lease's holder history (`GET /v1/leases/{name}/history`) and, less
 * often, revokes the lease (`POST /v1/leases/{name}/revoke`) — the live grant it just read, by its
 * token, or every live grant (no token). Revoke needs the `admin` role only under `--auth`
 * (docs/api.md Authentication); the chaos cluster runs without it, so any client may revoke.
 * Every request is recorded like the other workers' (`lease.history`, `lease.revoke`).
 */
import type { JsonObject, Random } from '../types.js';
import { bodyOf, type RequestResult, type Requester, type RequestSpec } from './request.js';
import { sleepUnlessAborted } from '../util/sleep.js';

/** What the operator needs from the workload. */
export interface OperatorContext {
  readonly signal: AbortSignal;
  /** The lease names it reads and revokes (the lease workers' names). */
  readonly leases: readonly string[];
  /** Pause before each step, ms [min, max]. */
  readonly pauseMs: readonly [number, number];
  /** Probability that a step revokes after its history read. */
  readonly revokeProbability: number;
  /** Sends a mutation (the workload remembers unknown ones to resolve them at the end). */
  readonly mutate: (req: Requester, spec: RequestSpec) => Promise<RequestResult>;
}

/** Largest `limit` of a history read (docs/api.md Holder history: 1–100). */
export const HISTORY_LIMIT_MAX = 100;

/** A linearizable holder-history read of lease `name` (newest `limit` grants). */
export function historyRead(name: string, limit: number, extra: JsonObject = {}): RequestSpec {
  return {
    kind: 'lease.history',
    method: 'GET',
    path: `/v1/leases/${encodeURIComponent(name)}/history`,
    query: `limit=${limit}`,
    argsExtra: { name, limit, ...extra },
  };
}

/** The token of the live entry of a history answer (`endReason: null`), else null. */
function liveToken(answer: JsonObject | null): number | null {
  const grants = answer?.['grants'];
  if (!Array.isArray(grants)) return null;
  for (const g of grants) {
    if (g === null || typeof g !== 'object' || Array.isArray(g) || g['endReason'] !== null)
      continue;
    if (typeof g['fencingToken'] === 'number') return g['fencingToken'];
  }
  return null;
}

/** The operator loop: pause, read a history, sometimes revoke. Ends when `signal` aborts. */
export async function operatorWorker(c: OperatorContext, req: Requester, r: Random): Promise<void> {
  while (!c.signal.aborted) {
    await sleepUnlessAborted(r.int(c.pauseMs[0], c.pauseMs[1]), c.signal);
    if (c.signal.aborted) break;
    const name = r.pick(c.leases);
    const read = await req.send(historyRead(name, r.pick([3, 20])));
    if (r.next() >= c.revokeProbability) continue;
    const token = liveToken(bodyOf(read.outcome));
    const byToken = token !== null && r.next() < 0.6;
    await c.mutate(req, {
      kind: 'lease.revoke',
      method: 'POST',
      path: `/v1/leases/${encodeURIComponent(name)}/revoke`,
      body: { ...(byToken ? { fencingToken: token } : {}), reason: 'chaos operator' },
      argsExtra: { name },
    });
  }
}

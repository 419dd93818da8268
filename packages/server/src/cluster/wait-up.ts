/**
 * How the launcher decides its cluster is up: every node it started answers `/healthz` with its own
 * node id AND this launch's cluster id (so another cluster on the same ports never counts), then a
 * verified node names a leader that is one of ours.
 */

/** Who a node must be. */
export interface NodeIdentity {
  readonly id: string;
  readonly clusterId: string;
  readonly httpAddress: string;
}

/** Outcome of waitUntilUp. */
export type UpResult =
  | { readonly kind: 'up'; readonly leader: string }
  | { readonly kind: 'foreign'; readonly node: string; readonly answer: string }
  | { readonly kind: 'exited'; readonly node: string }
  | { readonly kind: 'timeout'; readonly waitingFor: string };

/** Whether a `/healthz` body is from `expected` (same node id and cluster id). */
export function isOwnNode(body: unknown, expected: NodeIdentity): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as { id?: unknown; clusterId?: unknown };
  return b.id === expected.id && b.clusterId === expected.clusterId;
}

/** How the launcher reaches its nodes: URL scheme and fetch (a TLS launch trusts its CA). */
export interface Reach {
  readonly scheme: 'http' | 'https';
  readonly fetch: typeof fetch;
}

const PLAIN: Reach = { scheme: 'http', fetch: (input, init) => fetch(input, init) };

async function getJson(reach: Reach, address: string, path: string): Promise<unknown> {
  const res = await reach.fetch(`${reach.scheme}://${address}${path}`, {
    signal: AbortSignal.timeout(2000),
  });
  return res.json();
}

/** `'own'`, `'none'` (no answer yet) or the foreign answer as text. */
async function probe(n: NodeIdentity, reach: Reach): Promise<string> {
  let body: unknown;
  try {
    body = await getJson(reach, n.httpAddress, '/healthz');
  } catch {
    return 'none';
  }
  return isOwnNode(body, n) ? 'own' : JSON.stringify(body);
}

async function leaderOf(
  n: NodeIdentity,
  ids: ReadonlySet<string>,
  reach: Reach,
): Promise<string | null> {
  try {
    const body = (await getJson(reach, n.httpAddress, '/v1/cluster')) as { leader?: unknown };
    return typeof body.leader === 'string' && ids.has(body.leader) ? body.leader : null;
  } catch {
    return null;
  }
}

/**
 * Poll (through `o.reach`) until every node in `nodes` is verified and a leader among `allIds` is known (`leader`
 * empty when `needLeader` is false), a node answers as someone else, a node's process exits
 * (`running(id)` false), or `timeoutMs` passes.
 */
export async function waitUntilUp(
  nodes: readonly NodeIdentity[],
  allIds: ReadonlySet<string>,
  o: {
    running: (id: string) => boolean;
    timeoutMs: number;
    needLeader: boolean;
    /** Default plain HTTP with the global fetch. */
    reach?: Reach;
  },
): Promise<UpResult> {
  const reach = o.reach ?? PLAIN;
  const until = Date.now() + o.timeoutMs;
  const verified = new Set<string>();
  while (Date.now() < until) {
    for (const n of nodes) {
      if (verified.has(n.id)) continue;
      if (!o.running(n.id)) return { kind: 'exited', node: n.id };
      const answer = await probe(n, reach);
      if (answer === 'own') verified.add(n.id);
      else if (answer !== 'none') return { kind: 'foreign', node: n.id, answer };
    }
    if (verified.size === nodes.length) {
      if (!o.needLeader) return { kind: 'up', leader: '' };
      const leader = await leaderOf(nodes[0]!, allIds, reach);
      if (leader !== null) return { kind: 'up', leader };
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const pending = nodes.filter((n) => !verified.has(n.id)).map((n) => n.id);
  return { kind: 'timeout', waitingFor: pending.length > 0 ? pending.join(', ') : 'a leader' };
}

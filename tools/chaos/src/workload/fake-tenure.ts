/**
 * Test support: a single-process, CORRECT stand-in for a Tenure cluster over HTTP (node:http),
 * backed by the reference state machine of check/reference-sim.ts, plus a `ClusterHandle` whose
 * three "nodes" all point at it. Lets the workload and checkers be tested end to end without the
 * real server. `staleLagMs > 0` makes `?consistency=stale` GETs answer from a cache up to that old
 * (a lagging follower), so the unsafe mode produces really stale reads.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ClusterHandle, JsonObject, OpOutcome, Random, RunClock } from '../types.js';
import { routeOf } from './routes.js';
import { createReferenceTenure } from '../check/reference-sim.js';

/** A running fake. */
export interface FakeTenure {
  readonly url: string;
  close(): Promise<void>;
}

function reply(res: ServerResponse, o: OpOutcome): void {
  const status = o.status === 'ok' ? 200 : o.status === 'fail' ? o.httpStatus : 504;
  const body =
    o.status === 'ok'
      ? o.value
      : o.status === 'fail'
        ? (o.value ?? { error: { code: o.code, message: o.code } })
        : { error: { code: 'timeout', message: 'timeout' } };
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Starts the fake on 127.0.0.1 (port 0). */
export async function startFakeTenure(options: {
  random: Random;
  clock: RunClock;
  staleLagMs?: number;
}): Promise<FakeTenure> {
  const ref = createReferenceTenure(options.random, 0);
  const idem = new Map<string, OpOutcome>();
  const staleCache = new Map<string, { atMs: number; outcome: OpOutcome }>();
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const r = routeOf(req.method ?? 'GET', url.pathname);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (r === null) {
      reply(res, { status: 'fail', httpStatus: 404, code: 'not_found' });
      return;
    }
    const body =
      chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonObject) : {};
    const args: JsonObject = { ...r.args, ...body };
    const key = req.headers['idempotency-key'];
    if (typeof key === 'string' && idem.has(key)) {
      reply(res, idem.get(key)!);
      return;
    }
    const stale = url.searchParams.get('consistency') === 'stale' && (options.staleLagMs ?? 0) > 0;
    if (stale) {
      const cached = staleCache.get(url.pathname);
      if (cached !== undefined && options.clock.now() - cached.atMs < options.staleLagMs!) {
        reply(res, cached.outcome);
        return;
      }
    }
    let out = ref.serve(r.kind, args, options.clock.now());
    const waitMs = typeof args['waitMs'] === 'number' ? args['waitMs'] : 0;
    const deadline = options.clock.now() + waitMs;
    while (
      r.kind === 'lease.acquire' &&
      out.status === 'fail' &&
      out.code === 'held' &&
      options.clock.now() < deadline
    ) {
      await new Promise((done) => setTimeout(done, 20));
      out = ref.serve(r.kind, args, options.clock.now());
    }
    if (stale) staleCache.set(url.pathname, { atMs: options.clock.now(), outcome: out });
    if (typeof key === 'string') idem.set(key, out);
    reply(res, out);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => reply(res, { status: 'unknown', reason: 'error' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A ClusterHandle of three nodes that all reach `url` (no samples, leader n1). */
export function fakeClusterHandle(url: string, clock: RunClock): ClusterHandle {
  const ids = ['n1', 'n2', 'n3'];
  const endpoint = (id: string) => ({
    id,
    httpUrl: url,
    httpAddress: url.replace('http://', ''),
    raftAddress: '127.0.0.1:1',
  });
  return {
    nodeIds: ids,
    endpoints: () => ids.map(endpoint),
    endpoint: (id) => {
      if (!ids.includes(id)) throw new Error(`unknown node ${id}`);
      return endpoint(id);
    },
    clientAddresses: [{ id: 'c0', localAddress: null }],
    clock,
    leaderSamples: () => [],
    currentLeader: () => 'n1',
    waitForLeader: async () => 'n1',
    nodeState: () => 'running',
  };
}

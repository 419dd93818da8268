// Proves the membership fault follows docs/operations.md "Replace a failed node" step by step
// against a scripted member API: kill (lost disk) or remove a live node and wait for it to exit,
// wipe, then on heal start it with --join, wait for /readyz and promote it, retrying while a change
// is in progress or the learner lags; a removal that is refused restarts the node on its data.
import t from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRunClock } from '../util/clock.js';
import { createRandom } from '../util/random.js';
import { runTiming } from '../runner/session.js';
import type { ChaosBackend, NodeStartOptions } from '../topology/backend.js';
import type { FaultEvent, NodeEndpoint, NodeId, NodeProcessState } from '../types.js';
import { BlockSet, type FaultContext } from './fault.js';
import { inject } from './membership.js';

/** What the scripted cluster answers, in order, per route; the last answer repeats. */
interface Script {
  readonly remove: readonly number[];
  readonly readyz: readonly number[];
  readonly promote: readonly number[];
  /** A live removed node exits when its removal is answered 200. */
  readonly exitOnRemove: boolean;
}

const codeOf: Record<number, string> = { 409: 'reconfiguration_in_progress', 400: 'bad' };

/** A fake backend over one scripted HTTP server; `steps` lists what happened, in order. */
async function harness(script: Script) {
  const steps: string[] = [];
  const states = new Map<NodeId, NodeProcessState>(['n1', 'n2', 'n3'].map((id) => [id, 'running']));
  const counts = new Map<string, number>();
  let target: NodeId | null = null;
  const answer = (route: string, statuses: readonly number[], res: ServerResponse): number => {
    const n = counts.get(route) ?? 0;
    counts.set(route, n + 1);
    const status = statuses[Math.min(n, statuses.length - 1)]!;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(status === 200 ? {} : { error: { code: codeOf[status] ?? 'x' } }));
    return status;
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const route = `${req.method} ${req.url}`;
    steps.push(route);
    if (req.method === 'DELETE') {
      target = req.url!.split('/').pop()!;
      const status = answer('remove', script.remove, res);
      if (status === 200 && script.exitOnRemove) states.set(target, 'stopped');
    } else if (req.url === '/readyz') answer('readyz', script.readyz, res);
    else answer('promote', script.promote, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const endpoint = (id: NodeId): NodeEndpoint => ({
    id,
    httpUrl: `http://127.0.0.1:${port}`,
    httpAddress: `127.0.0.1:${port}`,
    raftAddress: `127.0.0.1:1`,
  });
  const unsupported = (): never => {
    throw new Error('not used by the membership fault');
  };
  const backend: ChaosBackend = {
    kind: 'netns',
    nodeIds: ['n1', 'n2', 'n3'],
    capabilities: {
      linkBlocks: true,
      netemLoss: true,
      netemDelay: true,
      clockRate: true,
      wallClockStep: true,
      membership: true,
    },
    endpoints: () => ['n1', 'n2', 'n3'].map(endpoint),
    endpoint,
    clientAddresses: [{ id: 'c0', localAddress: null }],
    nodeState: (id) => states.get(id)!,
    incarnation: () => 1,
    dataGeneration: () => 0,
    wipeNode: async (id) => {
      if (states.get(id) !== 'stopped') throw new Error(`wipe ${id}: running`);
      steps.push(`wipe ${id}`);
    },
    up: unsupported,
    startNode: async (id: NodeId, options?: NodeStartOptions) => {
      steps.push(`start ${id}${options?.join !== undefined ? ' --join' : ''}`);
      states.set(id, 'running');
    },
    stopNode: unsupported,
    killNode: async (id) => {
      if (states.get(id) === 'stopped') return;
      steps.push(`kill ${id}`);
      states.set(id, 'stopped');
    },
    pauseNode: unsupported,
    resumeNode: unsupported,
    setBlocks: async () => undefined,
    setNetem: unsupported,
    setWallClockOffset: unsupported,
    logPath: (id) => `/tmp/${id}.log`,
    down: async () => undefined,
    downSync: () => undefined,
  };
  const events: FaultEvent[] = [];
  const clock = createRunClock();
  let nextId = 1;
  const ctx: FaultContext = {
    backend,
    clock,
    random: createRandom(1),
    timing: runTiming(),
    currentLeader: () => 'n1',
    waitForLeader: async () => 'n1',
    record: (event) => {
      const full = { ...event, timeMs: clock.now() };
      events.push(full);
      return full;
    },
    nextFaultId: () => nextId++,
    network: new BlockSet(backend),
  };
  return { ctx, steps, events, states, close: () => server.close() };
}

t.test('lost disk: kill, remove, wipe; heal: --join, ready, promote', async (t) => {
  const h = await harness({
    remove: [503, 409, 200],
    readyz: [503, 503, 200],
    promote: [409, 200],
    exitOnRemove: false,
  });
  t.teardown(h.close);
  const fault = await inject(h.ctx, { target: 'follower', removal: 'lost-disk' });
  const node = fault.detail.split(' ')[0]!;
  t.not(node, 'n1', 'a follower (n1 leads)');
  t.same(h.steps, [
    `kill ${node}`,
    `DELETE /v1/cluster/members/${node}`,
    `DELETE /v1/cluster/members/${node}`,
    `DELETE /v1/cluster/members/${node}`,
    `wipe ${node}`,
  ]);
  t.equal(h.states.get(node), 'stopped', 'out of the cluster during the hold');
  await fault.heal();
  t.same(h.steps.slice(5), [
    `start ${node} --join`,
    'GET /readyz',
    'GET /readyz',
    'GET /readyz',
    `POST /v1/cluster/members/${node}/promote`,
    `POST /v1/cluster/members/${node}/promote`,
  ]);
  t.same(
    h.events.map((e) => `${e.kind} ${e.action} ${e.targets.join(',')}`),
    [`membership inject ${node}`, `membership heal ${node}`],
  );
});

t.test('live removal: the removed node exits on its own before the wipe', async (t) => {
  const h = await harness({ remove: [200], readyz: [200], promote: [200], exitOnRemove: true });
  t.teardown(h.close);
  const fault = await inject(h.ctx, { target: 'leader', removal: 'live' });
  t.same(h.steps, ['DELETE /v1/cluster/members/n1', 'wipe n1'], 'no SIGKILL needed');
  t.match(fault.detail, /n1 rejoined .*exited on its own/);
  await fault.heal();
  t.equal(h.states.get('n1'), 'running');
});

t.test('a refused removal restarts the killed node on its data and says so', async (t) => {
  const h = await harness({ remove: [400], readyz: [200], promote: [200], exitOnRemove: false });
  t.teardown(h.close);
  await t.rejects(
    inject(h.ctx, { target: { node: 'n2' }, removal: 'lost-disk' }),
    /DELETE \/v1\/cluster\/members\/n2: .* answered 400/,
  );
  t.same(h.steps, ['kill n2', 'DELETE /v1/cluster/members/n2', 'start n2']);
  t.match(h.events.at(-1), { kind: 'membership', action: 'heal', detail: /removal of n2 failed/ });
});

t.test('refused while a node is down', async (t) => {
  const h = await harness({ remove: [200], readyz: [200], promote: [200], exitOnRemove: false });
  t.teardown(h.close);
  h.states.set('n3', 'stopped');
  await t.rejects(inject(h.ctx, { target: 'follower', removal: 'live' }), /every node running/);
  t.same(h.steps, []);
});

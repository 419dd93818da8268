/**
 * Test harness: `buildApp` over the in-process FakeRaft and the real CoordStateMachine, with a
 * recording forwarder, a silent logger and a running TimeAdvancer.
 */
import { pino } from 'pino';
import { CoordStateMachine, decodeEnvelope, encodeEnvelope, type ApplyOutput } from '@tenure/coord-state';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { ChangeHub } from '../src/change-hub.js';
import { loadConfig, type ServerConfig } from '../src/config.js';
import type { Forwarder, ForwardRequest, ForwardResponse } from '../src/forwarder.js';
import { createMetrics } from '../src/metrics.js';
import { CoordStateAdapter } from '../src/state-adapter.js';
import { TimeAdvancer } from '../src/time-advancer.js';
import { FakeRaft } from './fake-raft.js';

/** Records forwarded requests and answers with `respond` (default: 200 {forwarded:true}). */
export class RecordingForwarder implements Forwarder {
  readonly calls: { httpAddress: string; req: ForwardRequest }[] = [];
  respond: (req: ForwardRequest) => ForwardResponse = () => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"forwarded":true}' });
  async forward(httpAddress: string, req: ForwardRequest): Promise<ForwardResponse> {
    this.calls.push({ httpAddress, req });
    return this.respond(req);
  }
  close(): void {}
}

export interface Harness {
  readonly app: FastifyInstance;
  readonly raft: FakeRaft<ApplyOutput>;
  readonly coord: CoordStateMachine;
  readonly config: ServerConfig;
  readonly forwarder: RecordingForwarder;
  close(): Promise<void>;
}

export const PEERS = 'n1=127.0.0.1:7101@127.0.0.1:7001,n2=127.0.0.1:7102@127.0.0.1:7002,n3=127.0.0.1:7103@127.0.0.1:7003';

/** Build a node "n1" of a three-node config, leader of its fake Raft. `args` are extra flags. */
export async function harness(args: string[] = []): Promise<Harness> {
  const config = loadConfig(['--id', 'n1', '--peers', PEERS, '--data-dir', '/nonexistent', ...args], {});
  const hub = new ChangeHub();
  const coord = new CoordStateMachine({ ...config.limits });
  const raft = new FakeRaft<ApplyOutput>('n1', new CoordStateAdapter(coord, hub, decodeEnvelope));
  const logger = pino({ level: 'silent' });
  const forwarder = new RecordingForwarder();
  const metrics = createMetrics(() => raft, () => coord);
  const app = await buildApp({ config, raft, coord, hub, encodeEnvelope, forwarder, logger, metrics });
  const advancer = new TimeAdvancer({
    raft,
    coord,
    hub,
    encodeTimeAdvance: () => encodeEnvelope({ v: 1, command: { type: 'time.advance' }, idempotency: null }),
    logger,
    proposeTimeoutMs: 1000,
    retryMs: 10,
  });
  return {
    app,
    raft,
    coord,
    config,
    forwarder,
    close: async () => {
      advancer.stop();
      await app.close();
    },
  };
}

/** POST/PUT/DELETE JSON through app.inject. */
export function send(app: FastifyInstance, method: 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method,
    url,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

/**
 * A RaftNode in its own process with a trivial state machine and a tiny HTTP control channel, for
 * the real-process test and `npm run bench:raft`. Not a product entry point.
 *
 * Usage: node demo-node.js '<json DemoNodeConfig>'. Prints one JSON line `{"controlPort": n}` on
 * stdout when ready. Logs (pino) go to stderr at $LOG_LEVEL (default warn).
 * Control routes (JSON): GET /status; GET /applied → {count, digest, values?}; POST /propose
 * {value: string} → {index, clusterTimeMs, result}; POST /read → {index};
 * POST /load {proposers, durationMs, sizeBytes} → {commits, elapsedMs, latenciesMs: number[]}.
 */
import http from 'node:http';
import { pino } from 'pino';
import type { PeerInfo } from '../api.js';
import type { AppliedEntry, StateMachine } from '../state-machine.js';
import { RaftNode } from '../raft-node.js';

/** Process arguments of the demo node. */
export interface DemoNodeConfig {
  readonly id: string;
  readonly clusterId: string;
  readonly peers: readonly PeerInfo[];
  readonly dataDir: string;
  /** Keep every applied command as a string (tests); off for benchmarks. */
  readonly recordValues: boolean;
  readonly electionTimeoutMs?: number;
  readonly heartbeatMs?: number;
  readonly tickMs?: number;
}

/** Counts commands, folds them into an FNV-1a digest, optionally records them. */
class DemoStateMachine implements StateMachine<number> {
  count = 0;
  digest = 0x811c9dc5;
  readonly values: string[] = [];
  readonly #decoder = new TextDecoder();

  constructor(readonly recordValues: boolean) {}

  apply(entry: AppliedEntry): number {
    if (entry.type !== 'command') return this.count;
    this.count++;
    for (const byte of entry.data) this.digest = Math.imul(this.digest ^ byte, 0x01000193) >>> 0;
    if (this.recordValues) this.values.push(this.#decoder.decode(entry.data));
    return this.count;
  }
  snapshot(): Uint8Array {
    return new Uint8Array();
  }
  restore(): void {}
}

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

/** Runs `proposers` concurrent loops of propose() for `durationMs`; latencies in ms. */
async function load(
  node: RaftNode<number>,
  proposers: number,
  durationMs: number,
  sizeBytes: number,
) {
  const latenciesMs: number[] = [];
  const payload = new Uint8Array(sizeBytes).fill(7);
  const start = performance.now();
  const endMs = start + durationMs;
  let errors = 0;
  const loop = async (): Promise<void> => {
    while (performance.now() < endMs) {
      const t0 = performance.now();
      try {
        await node.propose(payload, { timeoutMs: 5000 });
        latenciesMs.push(performance.now() - t0);
      } catch {
        errors++;
        if (errors > 1000) return;
      }
    }
  };
  await Promise.all(Array.from({ length: proposers }, loop));
  return { commits: latenciesMs.length, errors, elapsedMs: performance.now() - start, latenciesMs };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as DemoNodeConfig;
  const logger = pino({ level: process.env.LOG_LEVEL ?? 'warn' }, process.stderr);
  const sm = new DemoStateMachine(config.recordValues);
  const node = await RaftNode.open<number>({
    id: config.id,
    clusterId: config.clusterId,
    peers: config.peers,
    dataDir: config.dataDir,
    stateMachine: sm,
    logger,
    ...(config.electionTimeoutMs !== undefined
      ? { electionTimeoutMs: config.electionTimeoutMs }
      : {}),
    ...(config.heartbeatMs !== undefined ? { heartbeatMs: config.heartbeatMs } : {}),
    ...(config.tickMs !== undefined ? { tickMs: config.tickMs } : {}),
  });
  const server = http.createServer((req, res) => {
    const reply = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const fail = (err: unknown): void => {
      const e = err as { code?: string; message?: string; leaderHint?: string | null };
      reply(503, {
        error: { code: e.code ?? 'internal', message: e.message, leaderHint: e.leaderHint ?? null },
      });
    };
    const route = `${req.method} ${req.url}`;
    if (route === 'GET /status') return reply(200, node.status());
    if (route === 'GET /applied')
      return reply(200, { count: sm.count, digest: sm.digest, values: sm.values });
    readJson(req)
      .then(async (body) => {
        if (route === 'POST /propose') {
          const applied = await node.propose(new TextEncoder().encode(String(body.value)), {
            timeoutMs: 5000,
          });
          return reply(200, applied);
        }
        if (route === 'POST /read')
          return reply(200, { index: await node.readBarrier({ timeoutMs: 5000 }) });
        if (route === 'POST /load') {
          return reply(
            200,
            await load(
              node,
              Number(body.proposers),
              Number(body.durationMs),
              Number(body.sizeBytes),
            ),
          );
        }
        return reply(404, { error: { code: 'not_found' } });
      })
      .catch(fail);
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    const controlPort = typeof address === 'object' && address !== null ? address.port : 0;
    process.stdout.write(JSON.stringify({ controlPort }) + '\n');
  });
  const shutdown = (): void => {
    server.close();
    void node.stop().then(() => process.exit(0));
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch((err: unknown) => {
  process.stderr.write(`demo-node failed: ${String((err as Error).stack ?? err)}\n`);
  process.exit(1);
});

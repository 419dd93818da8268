/**
 * Watch fan-out bench (`npm run bench:watch`): one node of a local three-node cluster (real
 * processes) serves N streaming watches (`GET /v1/watch`, default 1,000) while a writer puts KV
 * values through the leader at a steady rate. Each value carries the writer's send time, so the
 * bench (one process, one clock) measures the delivery lag of every event to every watcher: it
 * prints events delivered per second (all watchers together), the puts' own latency and the
 * p50/p99/max lag from a put's send to its delivery, and checks that every watcher got every put
 * exactly once, in revision order.
 *
 * Options: `--watchers N`, `--seconds S`, `--rate R` (puts per second), `--target leader|follower`;
 * `--smoke` is a small slice (20 watchers, 2 s) for a quick check.
 */
import { Agent, request } from 'node:http';
import { Command } from 'commander';
import { createParser } from 'eventsource-parser';
import { latencyHistogram } from '@tenure/testkit';
import { LocalCluster } from '../support/cluster.js';

/** Concurrent writers (and kept-alive sockets) of the write load. */
const WRITERS = 8;

interface Options {
  watchers: number;
  seconds: number;
  rate: number;
  target: 'leader' | 'follower';
  smoke: boolean;
}

/** One watcher's tally. */
interface Tally {
  received: number;
  outOfOrder: number;
  lastRevision: number;
}

function parseOptions(argv: readonly string[]): Options {
  const int = (v: string): number => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`not a positive integer: ${v}`);
    return n;
  };
  const o = new Command('watch-bench')
    .option('--watchers <n>', 'open watches on the target node', int, 1000)
    .option('--seconds <s>', 'duration of the write load', int, 10)
    .option('--rate <r>', 'puts per second', int, 200)
    .option('--target <node>', 'leader or follower', 'follower')
    .option('--smoke', 'small slice: 20 watchers, 2 s')
    .parse([...argv], { from: 'user' })
    .opts<Options>();
  return o.smoke ? { ...o, watchers: 20, seconds: 2 } : o;
}

/** Opens one watch from `fromRevision`; resolves once the stream is open. */
function openWatch(
  host: string,
  port: number,
  fromRevision: number,
  agent: Agent,
  onChange: (data: { revision: number; value: { sentMs: number } }) => void,
): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host, port, agent, path: `/v1/watch?prefix=bench-&kinds=kv&fromRevision=${fromRevision}` },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`watch answered ${res.statusCode}`));
        const parser = createParser({
          onEvent: (m) => {
            if (m.event === undefined) onChange(JSON.parse(m.data));
          },
        });
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => parser.feed(chunk));
        resolve(() => req.destroy());
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** PUT one value through the leader; resolves with its revision. */
function put(
  host: string,
  port: number,
  agent: Agent,
  key: string,
  value: unknown,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ value });
    const req = request(
      {
        host,
        port,
        agent,
        method: 'PUT',
        path: `/v1/kv/${key}`,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve((JSON.parse(text) as { revision: number }).revision)
            : reject(new Error(`put answered ${res.statusCode}: ${text}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const cluster = await LocalCluster.start({
    extraArgs: ['--watches-max', String(opts.watchers + 10)],
  });
  try {
    const leaderId = await cluster.leader();
    const leader = cluster.node(leaderId);
    const target =
      opts.target === 'leader' ? leader : cluster.nodes.find((n) => n.id !== leaderId)!;
    const [lh, lp] = leader.httpAddress.split(':') as [string, string];
    const [th, tp] = target.httpAddress.split(':') as [string, string];
    const writeAgent = new Agent({ keepAlive: true, maxSockets: WRITERS });
    const watchAgent = new Agent({ keepAlive: false, maxSockets: Infinity });
    const startRevision = await put(lh, Number(lp), writeAgent, 'bench-start', {
      seq: -1,
      sentMs: 0,
    });

    const lag = latencyHistogram();
    const tallies: Tally[] = [];
    const closers: (() => void)[] = [];
    let delivered = 0;
    for (let i = 0; i < opts.watchers; i++) {
      const tally: Tally = { received: 0, outOfOrder: 0, lastRevision: startRevision };
      tallies.push(tally);
      closers.push(
        await openWatch(th, Number(tp), startRevision, watchAgent, (data) => {
          lag.recordValue(Math.max(1, Math.round((performance.now() - data.value.sentMs) * 1000)));
          if (data.revision <= tally.lastRevision) tally.outOfOrder++;
          tally.lastRevision = data.revision;
          tally.received++;
          delivered++;
        }),
      );
    }
    console.log(`${opts.watchers} watches open on ${target.id} (${opts.target})`);

    // WRITERS closed-loop writers share one schedule of `rate` puts per second; each put is stamped
    // when it is sent, so a lag counts the commit and the delivery, never a client-side queue.
    const intervalMs = 1000 / opts.rate;
    const total = opts.rate * opts.seconds;
    const putLatency = latencyHistogram();
    const t0 = performance.now();
    let next = 0;
    const writer = async (): Promise<void> => {
      while (next < total) {
        const seq = next++;
        const waitMs = t0 + seq * intervalMs - performance.now();
        if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
        const sentMs = performance.now();
        await put(lh, Number(lp), writeAgent, `bench-${seq % 100}`, { seq, sentMs });
        putLatency.recordValue(Math.max(1, Math.round((performance.now() - sentMs) * 1000)));
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, writer));
    const writeMs = performance.now() - t0;
    const expected = total * opts.watchers;
    const deadline = performance.now() + 120_000;
    while (delivered < expected && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const elapsedMs = performance.now() - t0;
    for (const close of closers) close();

    const complete = tallies.filter((x) => x.received === total && x.outOfOrder === 0).length;
    const ms = (us: number): string => (us / 1000).toFixed(1);
    console.log(
      JSON.stringify(
        {
          watchers: opts.watchers,
          target: opts.target,
          puts: total,
          putsPerSecond: Math.round(total / (writeMs / 1000)),
          eventsDelivered: delivered,
          eventsExpected: expected,
          eventsPerSecond: Math.round(delivered / (elapsedMs / 1000)),
          putLatencyMs: {
            p50: ms(putLatency.getValueAtPercentile(50)),
            p99: ms(putLatency.getValueAtPercentile(99)),
          },
          lagMs: {
            p50: ms(lag.getValueAtPercentile(50)),
            p99: ms(lag.getValueAtPercentile(99)),
            max: ms(lag.maxValue),
          },
          watchersComplete: complete,
        },
        null,
        2,
      ),
    );
    if (complete !== opts.watchers) process.exitCode = 1;
  } finally {
    await cluster.teardown();
  }
}

await main();

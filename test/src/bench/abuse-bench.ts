/**
 * Abuse bench (`npm run bench:abuse`; docs/security.md, Abuse resistance): a local three-node
 * cluster (real processes) is attacked at its leader, phase after phase — 2,000 idle connections,
 * 200 slowloris connections, 1 MiB headers, 10 MB bodies, JSON nested 100,000 deep and (with
 * `--auth`) a flood of made-up tokens — while one legitimate client acquires and releases a lease
 * in a loop. Prints, per phase, the legitimate p50/p99/max latency, its errors, what the attack got
 * back and the RSS of every node, plus the machine's load; writes the same as JSON (`--out`).
 *
 * The legitimate client runs in a worker thread, so the attack's own work in this process does
 * not delay it. The attack connects from 127.0.0.2 (any 127.x address reaches loopback on Linux) so that the
 * per-address bound applies to it and not to the legitimate client on 127.0.0.1.
 * Options: `--auth`, `--seconds S` per phase (default 8), `--smoke` (2 s phases, smaller counts),
 * `--out file`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import net from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Command } from 'commander';
import { percentiles } from '@tenure/testkit';
import { LocalCluster, type NodeInfo } from '../support/cluster.js';

const ATTACK_ADDRESS = '127.0.0.2';
const ROOT = 'abuse-bench-root-secret-0123456789';

interface Options {
  auth: boolean;
  seconds: number;
  smoke: boolean;
  out: string;
}

interface PhaseResult {
  phase: string;
  legit: {
    ops: number;
    errors: number;
    p50Ms: number | null;
    p99Ms: number | null;
    maxMs: number | null;
  };
  attack: Record<string, number>;
  rssMiB: Record<string, number | null>;
  loadavg1: number;
}

function parseOptions(argv: readonly string[]): Options {
  const o = new Command('abuse-bench')
    .option('--auth', 'run the cluster with --auth (adds the bad-token phase)', false)
    .option('--seconds <s>', 'seconds per phase', (v) => Number(v), 8)
    .option('--smoke', 'short phases and smaller counts', false)
    .option('--out <file>', 'JSON result file', join(tmpdir(), 'tenure-abuse-bench.json'))
    .parse([...argv], { from: 'user' })
    .opts<Options>();
  return o.smoke ? { ...o, seconds: 2 } : o;
}

/** Resident memory of a process, MiB (Linux /proc), or null. */
function rssMiB(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? null : Math.round(Number(m[1]) / 1024);
  } catch {
    return null;
  }
}

/** The legitimate client: acquire + release in a loop over one kept-alive connection. */
class LegitClient {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 });
  #latencies: number[] = [];
  #errors = 0;
  #running = true;
  readonly #done: Promise<void>;

  constructor(node: NodeInfo, token: string | null) {
    this.#done = this.#loop(node, token);
  }

  async #loop(node: NodeInfo, token: string | null): Promise<void> {
    const auth: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
    for (let i = 0; this.#running; i++) {
      const start = performance.now();
      try {
        const a = await call(node, this.#agent, 'POST', '/v1/leases/bench-legit/acquire', auth, {
          holder: `legit-${i}`,
          ttlMs: 10_000,
        });
        if (a.status !== 200) throw new Error(`acquire ${a.status}`);
        const token = (JSON.parse(a.body) as { fencingToken: number }).fencingToken;
        const r = await call(node, this.#agent, 'POST', '/v1/leases/bench-legit/release', auth, {
          holder: `legit-${i}`,
          fencingToken: token,
        });
        if (r.status !== 200) throw new Error(`release ${r.status}`);
        this.#latencies.push(performance.now() - start);
      } catch {
        this.#errors++;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  /** Results since the last call, and a new tally. */
  take(): PhaseResult['legit'] {
    const p = percentiles(this.#latencies);
    const out = {
      ops: this.#latencies.length,
      errors: this.#errors,
      p50Ms: round(p.p50),
      p99Ms: round(p.p99),
      maxMs: round(p.max),
    };
    this.#latencies = [];
    this.#errors = 0;
    return out;
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#done;
    this.#agent.destroy();
  }
}

const round = (v: number | null) => (v === null ? null : Math.round(v * 10) / 10);

function call(
  node: NodeInfo,
  agent: Agent,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port: node.httpPort,
        method,
        path,
        agent,
        headers: {
          ...headers,
          ...(text === undefined ? {} : { 'content-type': 'application/json' }),
        },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(text);
  });
}

/**
 * A tally of what attack connections got: the status of the first answer, `closed` when the
 * server closed one without an answer (refused at arrival, or timed out before a byte).
 */
class Tally {
  readonly counts: Record<string, number> = {};
  add(what: string, n = 1): void {
    this.counts[what] = (this.counts[what] ?? 0) + n;
  }
}

/** One attack connection: writes `head` (and `more()` while open); tallies how it ended. */
function attackSocket(port: number, tally: Tally, write: (s: net.Socket) => void): net.Socket {
  const s = net.connect({ host: '127.0.0.1', port, localAddress: ATTACK_ADDRESS });
  let first = '';
  s.on('connect', () => write(s));
  s.on('data', (c: Buffer) => {
    if (first === '') first = c.toString('latin1', 0, 12);
  });
  s.on('error', () => {});
  s.on('close', () => tally.add(first === '' ? 'closed' : first.slice(9, 12)));
  return s;
}

/** Keeps `concurrency` attack connections going until `stop` resolves. */
async function repeat(
  concurrency: number,
  stop: Promise<void>,
  one: () => Promise<void>,
): Promise<void> {
  let stopped = false;
  void stop.then(() => (stopped = true));
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!stopped) await one();
    }),
  );
}

function closed(s: net.Socket): Promise<void> {
  return new Promise((r) => (s.destroyed ? r() : s.once('close', () => r())));
}

/** An attack: `auth` is an Authorization header line (a valid token with --auth) or ''. */
type Attack = (
  port: number,
  tally: Tally,
  stop: Promise<void>,
  o: Options,
  auth: string,
) => Promise<void>;

const ATTACKS: Record<string, Attack> = {
  'idle connections (2,000)': async (port, tally, stop, o) => {
    const n = o.smoke ? 200 : 2000;
    const sockets = Array.from({ length: n }, () => attackSocket(port, tally, () => {}));
    await stop;
    tally.add('open at the end', sockets.filter((s) => !s.destroyed).length);
    for (const s of sockets) s.destroy();
  },
  'slowloris (200)': async (port, tally, stop, o) => {
    const n = o.smoke ? 20 : 200;
    const start = (): net.Socket =>
      attackSocket(port, tally, (s) => s.write('GET /v1/leases HTTP/1.1\r\nHost: x\r\n'));
    let sockets = Array.from({ length: n }, start);
    const drip = setInterval(() => {
      // One header byte per second per connection; a closed one is replaced.
      sockets = sockets.map((s) => (s.destroyed ? start() : (s.write('X'), s)));
    }, 1000);
    await stop;
    clearInterval(drip);
    tally.add('open at the end', sockets.filter((s) => !s.destroyed).length);
    for (const s of sockets) s.destroy();
  },
  '1 MiB headers': async (port, tally, stop, _o, auth) => {
    const big = 'X-Big: ' + 'a'.repeat(1024 * 1024) + '\r\n';
    await repeat(20, stop, async () => {
      const s = attackSocket(port, tally, (s) =>
        s.write(`GET /v1/leases HTTP/1.1\r\nHost: x\r\n${auth}${big}\r\n`),
      );
      await closed(s);
    });
  },
  '10 MB bodies': async (port, tally, stop, _o, auth) => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const size = 10 * 1000 * 1000;
    await repeat(10, stop, async () => {
      const s = attackSocket(port, tally, (s) => {
        s.write(
          `PUT /v1/kv/abuse HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`,
        );
        let sent = 0;
        const more = (): void => {
          while (sent < size && !s.destroyed) {
            sent += chunk.length;
            if (!s.write(chunk)) return void s.once('drain', more);
          }
        };
        more();
      });
      await closed(s);
    });
  },
  'JSON 100,000 deep': async (port, tally, stop, _o, auth) => {
    const body = '{"value":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}';
    await repeat(10, stop, async () => {
      const s = attackSocket(port, tally, (s) =>
        s.write(
          `PUT /v1/kv/abuse HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        ),
      );
      await closed(s);
    });
  },
  'bad tokens': async (port, tally, stop) => {
    let i = 0;
    await repeat(50, stop, async () => {
      const s = attackSocket(port, tally, (s) =>
        s.write(
          `GET /v1/leases HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer made-up-${i++}\r\n\r\n`,
        ),
      );
      await closed(s);
    });
  },
};

function table(results: PhaseResult[], ids: readonly string[]): string {
  const head = [
    'phase',
    'legit ops',
    'p50 ms',
    'p99 ms',
    'max ms',
    'legit errors',
    ...ids.map((id) => `RSS ${id} MiB`),
    'load',
    'attack answers',
  ];
  const rows = results.map((r) => [
    r.phase,
    String(r.legit.ops),
    String(r.legit.p50Ms ?? '-'),
    String(r.legit.p99Ms ?? '-'),
    String(r.legit.maxMs ?? '-'),
    String(r.legit.errors),
    ...ids.map((id) => String(r.rssMiB[id] ?? '-')),
    r.loadavg1.toFixed(1),
    Object.entries(r.attack)
      .map(([k, v]) => `${k}:${v}`)
      .join(' ') || '-',
  ]);
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  console.log(
    `abuse bench: ${o.seconds} s per phase, auth ${o.auth ? 'on' : 'off'}; machine: ${cpus().length} cores, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const cluster = await LocalCluster.start({
    nodes: 3,
    ...(o.auth ? { extraArgs: ['--auth'], env: { TENURE_ROOT_TOKEN: ROOT }, token: ROOT } : {}),
  });
  const results: PhaseResult[] = [];
  try {
    const leaderId = await cluster.leader();
    const leader = cluster.node(leaderId);
    const ids = cluster.nodes.map((n) => n.id);
    const rss = () => Object.fromEntries(ids.map((id) => [id, rssMiB(cluster.pid(id))]));
    const legit = new LegitWorker(leader, o.auth ? ROOT : null);
    // Size and depth attacks carry a valid token (with --auth) so they reach the body checks.
    const authLine = o.auth ? `Authorization: Bearer ${ROOT}\r\n` : '';
    const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
    const phaseMs = o.seconds * 1000;
    const record = async (phase: string, attack: Record<string, number>) => {
      const r = {
        phase,
        legit: await legit.take(),
        attack,
        rssMiB: rss(),
        loadavg1: loadavg()[0]!,
      };
      results.push(r);
      console.log(`${phase}: ${JSON.stringify(r)}`);
    };
    await wait(phaseMs);
    await record('before (no attack)', {});
    for (const [name, attack] of Object.entries(ATTACKS)) {
      if (name === 'bad tokens' && !o.auth) continue;
      const tally = new Tally();
      let end!: () => void;
      const stop = new Promise<void>((r) => (end = r));
      const running = attack(leader.httpPort, tally, stop, o, authLine);
      await wait(phaseMs);
      // RSS and latency while the attack runs, then stop it.
      const during = {
        phase: name,
        legit: await legit.take(),
        rssMiB: rss(),
        loadavg1: loadavg()[0]!,
      };
      end();
      await running;
      // A copy: connections we close now still report their close.
      results.push({ ...during, attack: { ...tally.counts } });
      console.log(`${name}: ${JSON.stringify(results.at(-1))}`);
    }
    await wait(phaseMs);
    await record('after (attacks stopped)', {});
    await legit.stop();
    console.log(`\nleader: ${leaderId}; attacks from ${ATTACK_ADDRESS} at the leader`);
    console.log(table(results, ids));
    writeFileSync(
      o.out,
      JSON.stringify({ options: o, leader: leaderId, cores: cpus().length, results }, null, 2),
    );
    console.log(`\nresults: ${o.out}`);
  } finally {
    await cluster.teardown();
  }
}

/** The legitimate client in a worker thread (this module, run as the worker). */
class LegitWorker {
  readonly #worker: Worker;
  constructor(node: NodeInfo, token: string | null) {
    this.#worker = new Worker(new URL(import.meta.url), { workerData: { node, token } });
  }
  take(): Promise<PhaseResult['legit']> {
    return this.#ask('take') as Promise<PhaseResult['legit']>;
  }
  async stop(): Promise<void> {
    await this.#ask('stop');
    await this.#worker.terminate();
  }
  #ask(what: string): Promise<unknown> {
    return new Promise((resolve) => {
      this.#worker.once('message', resolve);
      this.#worker.postMessage(what);
    });
  }
}

if (isMainThread) await main();
else {
  const { node, token } = workerData as { node: NodeInfo; token: string | null };
  const client = new LegitClient(node, token);
  parentPort!.on('message', (what: string) => {
    if (what === 'take') parentPort!.postMessage(client.take());
    else void client.stop().then(() => parentPort!.postMessage('stopped'));
  });
}

/**
 * Shared pieces of the failure-scenario tests (FAILURE-SCENARIOS.md, cases without network faults):
 * timing constants of the scaled scenarios, a seeded random source, polling with deadlines, a
 * child-process client (a real OS process the tests can SIGSTOP / SIGKILL), and lease calls.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { HttpAnswer, LocalCluster } from '../support/cluster.js';

/** Election timeout the scenario clusters run with (ms; FAILURE-SCENARIOS defaults: about 1 s). */
export const electionTimeoutMs = 1000;
/** Heartbeat of the scenario clusters (ms). */
export const heartbeatMs = 100;
/** Allowed lateness of an expiry: Δmax = 2 × election timeout + 1 s (FAILURE-SCENARIOS preamble). */
export const deltaMaxMs = 2 * electionTimeoutMs + 1000;
/** Clock-rate drift bound ρ of SPEC §2 (server default `maxDriftRatio`). */
export const maxDriftRatio = 0.01;

/** Promise that resolves after `ms` — only where the elapsed time IS the scenario (a TTL, a pause). */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Monotonic milliseconds of this process (SPEC §2: only monotonic durations are compared). */
export const nowMs = (): number => performance.now();

/** Seeded uniform [0, 1) source (mulberry32); print the seed so a run replays. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = s;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Seed of this run: `TENURE_SCENARIO_SEED` or a fixed default, so failures replay. */
export function scenarioSeed(fallback: number): number {
  const env = process.env['TENURE_SCENARIO_SEED'];
  return env !== undefined && /^\d+$/.test(env) ? Number(env) : fallback;
}

/**
 * Poll `probe` every `intervalMs` until it returns a non-undefined value or `timeoutMs` passes.
 * Resolves with the value, or undefined on timeout (the caller asserts). Probe errors count as "not yet".
 */
export async function pollUntil<T>(probe: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 50): Promise<T | undefined> {
  const until = nowMs() + timeoutMs;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch {
      // not yet
    }
    if (nowMs() >= until) return undefined;
    await sleep(intervalMs);
  }
}

/** Value of an unlabelled gauge (e.g. `tenure_lease_waiters`) from a node's /metrics, NaN when absent. */
export async function metric(c: LocalCluster, id: string, name: string): Promise<number> {
  const m = await c.request(id, 'GET', '/metrics', undefined, {}, 2000);
  const line = String(m.body)
    .split('\n')
    .find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? NaN);
}

/** A node other than `leader` (the first one). */
export function followerOf(c: LocalCluster, leader: string): string {
  const f = c.nodes.find((n) => n.id !== leader);
  if (!f) throw new Error('cluster has one node');
  return f.id;
}

/** Lease acquire body of SPEC §3. */
export interface AcquireBody {
  readonly holder: string;
  readonly ttlMs: number;
  readonly waitMs?: number;
}

/** POST /v1/leases/{name}/acquire on node `id`; never throws on status. */
export function acquire(c: LocalCluster, id: string, name: string, body: AcquireBody, timeoutMs = 30_000): Promise<HttpAnswer> {
  return c.request(id, 'POST', `/v1/leases/${name}/acquire`, body, {}, timeoutMs);
}

/** GET /v1/leases/{name} (linearizable) on node `id`; never throws on status. */
export function getLease(c: LocalCluster, id: string, name: string, timeoutMs = 5000): Promise<HttpAnswer> {
  return c.request(id, 'GET', `/v1/leases/${name}`, undefined, {}, timeoutMs);
}

/** JSON line a child client printed, with the parent's monotonic receive time. */
export interface ChildLine {
  readonly atMs: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- read field by field in the tests
  readonly msg: any;
}

/**
 * A client in its own OS process (`node --input-type=module -e <script>`), so a test can SIGSTOP,
 * SIGCONT or SIGKILL it like a real application. The script prints one JSON object per line on
 * stdout and may read commands line by line from stdin (`line()` below).
 */
export class ChildClient {
  readonly #child: ChildProcess;
  readonly #lines: ChildLine[] = [];
  readonly #waiters: (() => void)[] = [];
  readonly exited: Promise<number | null>;
  #stderr = '';

  constructor(script: string, env: Record<string, string>) {
    this.#child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    this.exited = new Promise((r) => this.#child.once('exit', (code) => r(code)));
    createInterface({ input: this.#child.stdout! }).on('line', (l) => {
      try {
        this.#lines.push({ atMs: nowMs(), msg: JSON.parse(l) });
      } catch {
        this.#lines.push({ atMs: nowMs(), msg: { raw: l } });
      }
      for (const w of this.#waiters.splice(0)) w();
    });
    this.#child.stderr!.on('data', (d: Buffer) => (this.#stderr += d.toString()));
  }

  get pid(): number {
    return this.#child.pid ?? -1;
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** Wait (up to `timeoutMs`) for the first line whose `msg.event` is `event`. Throws on timeout or exit. */
  async next(event: string, timeoutMs = 20_000): Promise<ChildLine> {
    const until = nowMs() + timeoutMs;
    for (;;) {
      const hit = this.#lines.find((l) => l.msg.event === event);
      if (hit) return hit;
      if (this.#child.exitCode !== null || this.#child.signalCode !== null) throw new Error(`child exited before '${event}': ${this.#stderr}`);
      if (nowMs() > until) throw new Error(`child said no '${event}' within ${timeoutMs} ms: ${this.#stderr}`);
      await new Promise<void>((r) => {
        this.#waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  /** Every line so far whose `msg.event` is `event`. */
  lines(event: string): ChildLine[] {
    return this.#lines.filter((l) => l.msg.event === event);
  }

  /** Write one command line to the child's stdin. */
  send(line: string): void {
    this.#child.stdin!.write(`${line}\n`);
  }

  signal(sig: NodeJS.Signals): void {
    this.#child.kill(sig);
  }

  /** SIGCONT + SIGKILL, then wait for exit. Idempotent. */
  async destroy(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      this.#child.kill('SIGCONT');
      this.#child.kill('SIGKILL');
    }
    await this.exited;
  }
}

/**
 * Prelude of every child script: `out(obj)` prints a JSON line with the child's event; `call(method,
 * url, body)` does one fetch and resolves `{status, body}` (or `{status: 0, error}`); `line()` resolves
 * the next stdin line.
 */
export const childPrelude = `
import { createInterface } from 'node:readline';
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const rl = createInterface({ input: process.stdin });
const pending = [];
const queued = [];
rl.on('line', (l) => { const w = pending.shift(); if (w) w(l); else queued.push(l); });
const line = () => queued.length ? Promise.resolve(queued.shift()) : new Promise((r) => pending.push(r));
async function call(method, url, body) {
  try {
    const r = await fetch(url, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    let parsed = text; try { parsed = JSON.parse(text); } catch {}
    return { status: r.status, body: parsed };
  } catch (err) { return { status: 0, error: String(err) }; }
}
`;

/**
 * The chaos workload: concurrent logical clients exercising every docs/api.md primitive over a few
 * contended, run-unique names, recording each HTTP attempt in the history, and performing side
 * effects through the fenced store while they believe they hold a lease or lead a group.
 *
 * Roles (counts in `TenureWorkloadOptions`):
 * - lease workers: acquire (sometimes waiting) → while believed held: fenced-store writes, fenced
 *   KV puts, renews → release; sometimes abandon the lease instead (then poll it until it is free,
 *   measuring expiry lateness) and later try a "zombie" write with the old token (BC-02);
 * - election workers: campaign → as leader: proclaim, fenced-store writes, renew → resign (or
 *   abandon); as follower: renew the candidacy and observe with GET;
 * - counter workers: read-increment-write a KV counter with conditional puts (BC-13);
 * - readers: linearizable GETs of leases, groups, keys and fence checks — or `?consistency=stale`
 *   reads in the deliberately unsafe mode (`staleReads`), which the linearizability checker must
 *   flag under partitions (BC-08);
 * - operators: holder-history reads of the lease workers' names and, at a modest rate, operator
 *   revokes of their grants (operator-workload.ts).
 *
 * Belief interval (docs/concepts.md): a grant is believed held until firstSend + ttlMs × (1 − maxDriftRatio)
 * − safetyMarginMs of the acquire/renew that granted it, on the run clock; no side effect is sent
 * after that. At stop, requests still unknown are resolved by retrying them with their idempotency
 * keys, then final reads (`args.final: true`) of every key, lease and group are recorded.
 */
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import type {
  ClusterHandle,
  HistorySink,
  JsonObject,
  OpOutcome,
  Random,
  Workload,
  WorkloadOptions,
} from '../types.js';
import { startFencedStore, FENCED_STORE_LOG, type FencedStoreServer } from '@tenure/testkit';
import { httpJson } from '../util/http.js';
import { bodyOf, isDefinite, Requester, type RequestResult, type RequestSpec } from './request.js';
import { recordingFetch } from './recording-fetch.js';
import { IDEMPOTENCY_WINDOW_MS } from '../check/merge.js';
import {
  semaphoreWorker,
  sessionWorker,
  sharedLockWorker,
  watchWorker,
  type PrimitivesContext,
} from './primitives-workload.js';
import { sleepUnlessAborted } from '../util/sleep.js';
import {
  HISTORY_LIMIT_MAX,
  historyRead,
  operatorWorker,
  type OperatorContext,
} from './operator-workload.js';

/** Workload knobs (all optional; defaults in `defaultWorkloadOptions`). */
export interface TenureWorkloadOptions {
  readonly leaseWorkers: number;
  readonly electionWorkers: number;
  readonly counterWorkers: number;
  readonly readers: number;
  /** Lease workers that go through the client library (`@tenure/client`, recorded via its fetch). */
  readonly libraryWorkers: number;
  /** docs/primitives.md workers (primitives-workload.ts). */
  readonly semaphoreWorkers: number;
  readonly sharedLockWorkers: number;
  readonly sessionWorkers: number;
  /** Streaming-watch clients (`client.watch()` over the primitives' names). */
  readonly watchers: number;
  /** Operators: holder-history reads and revokes of the lease names (operator-workload.ts). */
  readonly operators: number;
  /** An operator's pause before each step, ms [min, max]. */
  readonly operatorPauseMs: readonly [number, number];
  /** Probability that an operator step revokes (after its history read). */
  readonly revokeProbability: number;
  readonly leaseNames: number;
  readonly electionGroups: number;
  readonly ttlMs: number;
  readonly requestTimeoutMs: number;
  readonly retryWindowMs: number;
  readonly attemptsMax: number;
  readonly maxDriftRatio: number;
  readonly safetyMarginMs: number;
  /** Probability a lease/leadership is abandoned (no release/resign) instead of ended. */
  readonly abandonProbability: number;
  /** Probability an acquire waits (waitMs up to 2 × ttl). */
  readonly waitProbability: number;
  /** Think time between a worker's steps, ms [min, max]. */
  readonly thinkMs: readonly [number, number];
  /** Readers use `?consistency=stale` (the unsafe run, BC-08). */
  readonly staleReads: boolean;
  /** Time budget of the end-of-run resolution + final reads, ms. */
  readonly finalPhaseMs: number;
}

/** Defaults (TTL from the runner, docs/failure-scenarios.md default 3 s). */
export function defaultWorkloadOptions(ttlMs = 3_000): TenureWorkloadOptions {
  return {
    leaseWorkers: 4,
    electionWorkers: 3,
    counterWorkers: 2,
    readers: 2,
    libraryWorkers: 1,
    semaphoreWorkers: 3,
    sharedLockWorkers: 2,
    sessionWorkers: 2,
    watchers: 1,
    operators: 1,
    // About one history read every 1.5 s and one revoke every 5 s: each name is revoked now and
    // then, while most grants still end by release or expiry.
    operatorPauseMs: [500, 2500],
    revokeProbability: 0.3,
    leaseNames: 3,
    electionGroups: 1,
    ttlMs,
    requestTimeoutMs: 2_000,
    retryWindowMs: 8_000,
    attemptsMax: 6,
    maxDriftRatio: 0.01,
    safetyMarginMs: 150,
    abandonProbability: 0.15,
    waitProbability: 0.4,
    thinkMs: [10, 120],
    staleReads: process.env['TENURE_CHAOS_STALE_READS'] === '1',
    finalPhaseMs: 20_000,
  };
}

const sleep = sleepUnlessAborted;

const enc = encodeURIComponent;

/** Shared context of one run. */
interface Ctx {
  readonly cluster: ClusterHandle;
  readonly history: HistorySink;
  readonly o: TenureWorkloadOptions;
  readonly signal: AbortSignal;
  readonly fs: FencedStoreServer;
  readonly leases: readonly string[];
  readonly groups: readonly string[];
  readonly counterKey: string;
  readonly plainKeys: readonly string[];
  /** Logical mutations whose outcome is still unknown: resolved at stop. */
  readonly unresolved: { req: Requester; spec: RequestSpec; key: string; firstSentMs: number }[];
  /** Requester of the final reads (process `final`). */
  readonly finalReq: Requester;
  readonly log: (line: string) => void;
}

/** Makes the workload (types.ts `Workload`). */
export function createTenureWorkload(
  options: WorkloadOptions & { readonly workload?: Partial<TenureWorkloadOptions> },
): Workload {
  const o: TenureWorkloadOptions = {
    ...defaultWorkloadOptions(options.ttlMs),
    ...(options.processCount !== undefined ? { leaseWorkers: options.processCount } : {}),
    ...(options.workload ?? {}),
  };
  const controller = new AbortController();
  setMaxListeners(1_000, controller.signal); // one sleep listener per client
  const loops: Promise<void>[] = [];
  let ctx: Ctx | null = null;
  let stopped: Promise<void> | null = null;
  const random = options.random;
  return {
    name: o.staleReads ? 'tenure-mixed-stale-reads' : 'tenure-mixed',
    async start(cluster, history, signal) {
      signal.addEventListener('abort', () => controller.abort(), { once: true });
      const fs = await startFencedStore({
        now: () => cluster.clock.now(),
        logPath: join(options.runDir, FENCED_STORE_LOG),
      });
      const prefix = `w${(options.seed >>> 0).toString(36)}${random.int(0, 0xfffff).toString(36)}`;
      ctx = {
        cluster,
        history,
        o,
        signal: controller.signal,
        fs,
        leases: Array.from({ length: o.leaseNames }, (_, i) => `${prefix}-L${i}`),
        groups: Array.from({ length: o.electionGroups }, (_, i) => `${prefix}-G${i}`),
        counterKey: `${prefix}-counter`,
        plainKeys: [`${prefix}-k0`, `${prefix}-k1`],
        unresolved: [],
        log: options.log,
        finalReq: new Requester(
          cluster,
          history,
          random.fork('final'),
          'final',
          {
            requestTimeoutMs: o.requestTimeoutMs,
            retryWindowMs: o.retryWindowMs,
            attemptsMax: o.attemptsMax,
          },
          null,
        ),
      };
      const c = ctx;
      const addr = (i: number): string | null =>
        cluster.clientAddresses[i % cluster.clientAddresses.length]?.localAddress ?? null;
      let n = 0;
      const spawn = (
        role: string,
        count: number,
        body: (c: Ctx, req: Requester, r: Random, proc: string) => Promise<void>,
      ): void => {
        for (let i = 0; i < count; i++) {
          const proc = `${role}${i}`;
          const r = random.fork(proc);
          const req = new Requester(
            cluster,
            history,
            r,
            proc,
            {
              requestTimeoutMs: o.requestTimeoutMs,
              retryWindowMs: o.retryWindowMs,
              attemptsMax: o.attemptsMax,
            },
            addr(n++),
          );
          loops.push(
            body(c, req, r, proc).catch((err: unknown) =>
              options.log(`workload ${proc} crashed: ${String(err)}`),
            ),
          );
        }
      };
      spawn('lease', o.leaseWorkers, leaseWorker);
      spawn('elect', o.electionWorkers, electionWorker);
      spawn('count', o.counterWorkers, counterWorker);
      spawn('read', o.readers, readerWorker);
      spawn('lib', o.libraryWorkers, libraryWorker);
      const pc: PrimitivesContext = {
        cluster,
        history,
        o,
        signal: controller.signal,
        namePrefix: `${prefix}-P`,
        // Not queued for the end-of-run resolution: its time goes to the ops the linearizability
        // search needs; the primitives' checkers treat unknown outcomes as maybe-happened anyway.
        mutate: (req, spec) => req.send(spec, { signal: controller.signal }),
        log: options.log,
      };
      const prim =
        (w: (pc: PrimitivesContext, req: Requester, r: Random, proc: string) => Promise<void>) =>
        (_c: Ctx, req: Requester, r: Random, proc: string): Promise<void> =>
          w(pc, req, r, proc);
      spawn('sem', o.semaphoreWorkers, prim(semaphoreWorker));
      spawn('rw', o.sharedLockWorkers, prim(sharedLockWorker));
      spawn('sess', o.sessionWorkers, prim(sessionWorker));
      spawn('watch', o.watchers, prim(watchWorker));
      const oc: OperatorContext = {
        signal: controller.signal,
        leases: c.leases,
        pauseMs: o.operatorPauseMs,
        revokeProbability: o.revokeProbability,
        mutate: (req, spec) => mutate(c, req, spec),
      };
      spawn('oper', o.operators, (_c, req, r) => operatorWorker(oc, req, r));
      options.log(
        `workload ${prefix}: ${loops.length} clients, fenced store ${fs.url}${o.staleReads ? ', STALE reads' : ''}`,
      );
    },
    stop() {
      stopped ??= (async () => {
        controller.abort();
        await Promise.all(loops);
        if (ctx !== null) {
          await finalPhase(ctx).catch((err: unknown) =>
            options.log(`workload final phase failed: ${String(err)}`),
          );
          await ctx.fs.close();
        }
      })();
      return stopped;
    },
  };
}

/** Sends and remembers a mutation whose outcome stayed unknown. */
async function mutate(c: Ctx, req: Requester, spec: RequestSpec): Promise<RequestResult> {
  const firstSentMs = c.cluster.clock.now();
  const res = await req.send(spec, { signal: c.signal });
  if (!isDefinite(res.outcome) && res.idempotencyKey !== null)
    c.unresolved.push({ req, spec, key: res.idempotencyKey, firstSentMs });
  return res;
}

function think(c: Ctx, r: Random): Promise<void> {
  return sleep(r.int(c.o.thinkMs[0], c.o.thinkMs[1]), c.signal);
}

/** Belief deadline of a grant sent at `sendMs` with `ttlMs` (docs/concepts.md). */
function beliefUntil(c: Ctx, sendMs: number, ttlMs: number): number {
  return sendMs + ttlMs * (1 - c.o.maxDriftRatio) - c.o.safetyMarginMs;
}

/** A fenced-store write, recorded as `fs.write` (ok = accepted, fail stale_token = rejected). */
async function fsWrite(
  c: Ctx,
  proc: string,
  resource: string,
  fencingToken: number,
  writer: string,
  payload: JsonObject,
  beliefUntilMs: number | null,
  believes?: () => boolean,
): Promise<OpOutcome> {
  const args: JsonObject = {
    resource,
    fencingToken,
    writer,
    payload,
    ...(beliefUntilMs === null ? {} : { beliefUntilMs }),
  };
  const opId = c.history.invoke(proc, 'fs.write', args, null);
  let outcome: OpOutcome;
  try {
    const reply = await httpJson(
      'POST',
      `${c.fs.url}/write`,
      { resource, fencingToken, writer, payload },
      { timeoutMs: 2_000 },
    );
    const json = (reply.json ?? null) as JsonObject | null;
    // `believedAfter`: the client library still called the grant held once the store answered.
    const value: JsonObject = {
      ...(json ?? {}),
      ...(believes === undefined ? {} : { believedAfter: believes() }),
    };
    outcome =
      reply.status === 200
        ? { status: 'ok', httpStatus: 200, value }
        : {
            status: 'fail',
            httpStatus: reply.status,
            code: reply.status === 409 ? 'stale_token' : `http_${reply.status}`,
            value,
          };
  } catch (err) {
    outcome = { status: 'unknown', reason: String(err) };
  }
  c.history.complete(opId, outcome, null);
  return outcome;
}

function leaseGet(name: string, stale: boolean, extra: JsonObject = {}): RequestSpec {
  return {
    kind: 'lease.get',
    method: 'GET',
    path: `/v1/leases/${enc(name)}`,
    ...(stale ? { query: 'consistency=stale' } : {}),
    argsExtra: { name, ...(stale ? { consistency: 'stale' } : {}), ...extra },
  };
}

async function leaseWorker(c: Ctx, req: Requester, r: Random, proc: string): Promise<void> {
  let incarnation = 0;
  while (!c.signal.aborted) {
    const name = r.pick(c.leases);
    const holder = `${proc}.${++incarnation}`;
    const waitMs = r.next() < c.o.waitProbability ? r.int(100, 2 * c.o.ttlMs) : 0;
    const acq = await mutate(c, req, {
      kind: 'lease.acquire',
      method: 'POST',
      path: `/v1/leases/${enc(name)}/acquire`,
      body: { holder, ttlMs: c.o.ttlMs, ...(waitMs > 0 ? { waitMs } : {}) },
      argsExtra: { name },
      waitMs,
    });
    const v = bodyOf(acq.outcome);
    const token = typeof v?.['fencingToken'] === 'number' ? v['fencingToken'] : null;
    if (token === null) {
      await think(c, r);
      continue;
    }
    const ttlMs = typeof v?.['ttlMs'] === 'number' ? v['ttlMs'] : c.o.ttlMs;
    let until = beliefUntil(c, acq.firstSendMs, ttlMs);
    const steps = r.int(1, 5);
    let held = true;
    for (let s = 0; s < steps && held && !c.signal.aborted; s++) {
      if (c.cluster.clock.now() < until)
        await fsWrite(c, proc, `lease:${name}`, token, holder, { step: s }, until);
      if (c.cluster.clock.now() < until && r.next() < 0.5) {
        await mutate(c, req, {
          kind: 'kv.put',
          method: 'PUT',
          path: `/v1/kv/${enc(`${name}-data`)}`,
          body: { value: { holder, step: s }, fence: { lease: name, fencingToken: token } },
          argsExtra: { key: `${name}-data` },
        });
      }
      await think(c, r);
      const ren = await mutate(c, req, {
        kind: 'lease.renew',
        method: 'POST',
        path: `/v1/leases/${enc(name)}/renew`,
        body: { holder, fencingToken: token },
        argsExtra: { name },
      });
      const rv = bodyOf(ren.outcome);
      if (rv !== null)
        until = beliefUntil(
          c,
          ren.firstSendMs,
          typeof rv['ttlMs'] === 'number' ? rv['ttlMs'] : ttlMs,
        );
      else if (isDefinite(ren.outcome)) held = false;
    }
    if (c.signal.aborted) break;
    if (held && r.next() < c.o.abandonProbability) {
      await pollUntilFree(c, req, name, token);
      if (r.next() < 0.5)
        await fsWrite(c, proc, `lease:${name}`, token, holder, { zombie: true }, null);
      continue;
    }
    if (held)
      await mutate(c, req, {
        kind: 'lease.release',
        method: 'POST',
        path: `/v1/leases/${enc(name)}/release`,
        body: { holder, fencingToken: token },
        argsExtra: { name },
      });
    await think(c, r);
  }
}

/** After abandoning token `token` of `name`, poll GET until it is gone or re-granted (bounded). */
async function pollUntilFree(c: Ctx, req: Requester, name: string, token: number): Promise<void> {
  const deadline = c.cluster.clock.now() + c.o.ttlMs * 3 + 10_000;
  while (!c.signal.aborted && c.cluster.clock.now() < deadline) {
    const g = await req.send(leaseGet(name, false, { probe: true }));
    const v = bodyOf(g.outcome);
    if (
      (g.outcome.status === 'fail' && g.outcome.code === 'not_found') ||
      (v !== null && v['fencingToken'] !== token)
    )
      return;
    await sleep(100, c.signal);
  }
}

async function electionWorker(c: Ctx, req: Requester, r: Random, proc: string): Promise<void> {
  let incarnation = 0;
  while (!c.signal.aborted) {
    const group = r.pick(c.groups);
    const candidate = `${proc}.${++incarnation}`;
    const ttlMs = c.o.ttlMs;
    const camp = await mutate(c, req, {
      kind: 'election.campaign',
      method: 'POST',
      path: `/v1/elections/${enc(group)}/campaign`,
      body: { candidate, ttlMs, value: candidate },
      argsExtra: { group },
    });
    let v = bodyOf(camp.outcome);
    if (v === null) {
      await think(c, r);
      continue;
    }
    let until = beliefUntil(c, camp.firstSendMs, ttlMs);
    let alive = true;
    const rounds = r.int(2, 8);
    for (let i = 0; i < rounds && alive && !c.signal.aborted; i++) {
      const elected = v?.['elected'] === true;
      const token = typeof v?.['fencingToken'] === 'number' ? v['fencingToken'] : null;
      if (elected && token !== null && c.cluster.clock.now() < until) {
        await fsWrite(c, proc, `election:${group}`, token, candidate, { round: i }, until);
        if (r.next() < 0.4)
          await mutate(c, req, {
            kind: 'election.proclaim',
            method: 'POST',
            path: `/v1/elections/${enc(group)}/proclaim`,
            body: { candidate, fencingToken: token, value: `${candidate}/${i}` },
            argsExtra: { group },
          });
      } else if (r.next() < 0.5) {
        await req.send({
          kind: 'election.get',
          method: 'GET',
          path: `/v1/elections/${enc(group)}`,
          argsExtra: { group },
        });
      }
      await sleep(r.int(50, Math.max(60, Math.floor(ttlMs / 4))), c.signal);
      const ren = await mutate(c, req, {
        kind: 'election.renew',
        method: 'POST',
        path: `/v1/elections/${enc(group)}/renew`,
        body: { candidate },
        argsExtra: { group },
      });
      const rv = bodyOf(ren.outcome);
      if (rv !== null) {
        v = rv;
        until = beliefUntil(c, ren.firstSendMs, ttlMs);
      } else if (isDefinite(ren.outcome)) alive = false;
    }
    if (c.signal.aborted) break;
    if (alive && r.next() >= c.o.abandonProbability) {
      await mutate(c, req, {
        kind: 'election.resign',
        method: 'POST',
        path: `/v1/elections/${enc(group)}/resign`,
        body: { candidate },
        argsExtra: { group },
      });
    }
    await think(c, r);
  }
}

async function counterWorker(c: Ctx, req: Requester, r: Random, _proc: string): Promise<void> {
  while (!c.signal.aborted) {
    if (r.next() < 0.3) {
      const key = r.pick(c.plainKeys);
      await mutate(c, req, {
        kind: 'kv.put',
        method: 'PUT',
        path: `/v1/kv/${enc(key)}`,
        body: { value: r.int(0, 1_000_000) },
        argsExtra: { key },
      });
      await think(c, r);
      continue;
    }
    const g = await req.send({
      kind: 'kv.get',
      method: 'GET',
      path: `/v1/kv/${enc(c.counterKey)}`,
      argsExtra: { key: c.counterKey },
    });
    let current: number;
    let revision: number;
    const gv = bodyOf(g.outcome);
    if (gv !== null && typeof gv['value'] === 'number' && typeof gv['revision'] === 'number') {
      current = gv['value'];
      revision = gv['revision'];
    } else if (g.outcome.status === 'fail' && g.outcome.code === 'not_found') {
      current = 0;
      revision = 0;
    } else {
      await think(c, r);
      continue;
    }
    await mutate(c, req, {
      kind: 'kv.put',
      method: 'PUT',
      path: `/v1/kv/${enc(c.counterKey)}`,
      body: { value: current + 1, ifRevision: revision },
      argsExtra: { key: c.counterKey, counter: true },
    });
    await think(c, r);
  }
}

async function readerWorker(c: Ctx, req: Requester, r: Random, _proc: string): Promise<void> {
  const stale = c.o.staleReads;
  const q = stale ? { query: 'consistency=stale' } : {};
  const sq = stale ? { consistency: 'stale' } : {};
  while (!c.signal.aborted) {
    const pick = r.int(0, 9);
    if (pick < 4) await req.send(leaseGet(r.pick(c.leases), stale));
    else if (pick < 6) {
      const group = r.pick(c.groups);
      await req.send({
        kind: 'election.get',
        method: 'GET',
        path: `/v1/elections/${enc(group)}`,
        ...q,
        argsExtra: { group, ...sq },
      });
    } else if (pick < 8) {
      const key = r.pick([c.counterKey, ...c.plainKeys, ...c.leases.map((l) => `${l}-data`)]);
      await req.send({
        kind: 'kv.get',
        method: 'GET',
        path: `/v1/kv/${enc(key)}`,
        ...q,
        argsExtra: { key, ...sq },
      });
    } else {
      const lease = r.pick(c.leases);
      const fencingToken = r.int(1, 50);
      await req.send({
        kind: 'fence.check',
        method: 'POST',
        path: '/v1/fence/check',
        body: { lease, fencingToken },
        argsExtra: {},
      });
    }
    await think(c, r);
  }
}

/**
 * A lease worker using the client library (packages/client/README.md): `acquire` (auto-renewing handle), side effects
 * while `lease.signal` is not aborted, fenced KV puts, `release`. Every HTTP request the library makes
 * (retries, background renewals, clean-up releases) is recorded through `recordingFetch`. Disabled
 * (logged) when `@tenure/client` cannot be loaded.
 */
async function libraryWorker(c: Ctx, _req: Requester, r: Random, proc: string): Promise<void> {
  let mod: typeof import('@tenure/client');
  try {
    mod = await import('@tenure/client');
  } catch (err) {
    c.log(`workload ${proc}: client library unavailable (${String(err)}); skipped`);
    return;
  }
  const client = new mod.TenureClient({
    endpoints: c.cluster.endpoints().map((e) => e.httpUrl),
    fetch: recordingFetch(c.history, c.cluster, proc),
    clientId: proc,
    requestTimeoutMs: c.o.requestTimeoutMs,
    maxDriftRatio: c.o.maxDriftRatio,
    safetyMarginMs: c.o.safetyMarginMs,
  });
  let n = 0;
  while (!c.signal.aborted) {
    const name = r.pick(c.leases);
    const holder = `${proc}.${++n}`;
    const waitMs = r.next() < c.o.waitProbability ? r.int(100, 2 * c.o.ttlMs) : 0;
    let lease: Awaited<ReturnType<typeof client.acquire>>;
    try {
      lease = await client.acquire(name, {
        ttlMs: c.o.ttlMs,
        holder,
        ...(waitMs > 0 ? { waitMs } : {}),
      });
    } catch {
      await think(c, r);
      continue;
    }
    try {
      const steps = r.int(1, 6);
      for (let s = 0; s < steps && !lease.signal.aborted && !c.signal.aborted; s++) {
        await fsWrite(
          c,
          proc,
          `lease:${name}`,
          lease.fencingToken,
          holder,
          { step: s },
          null,
          () => !lease.signal.aborted,
        );
        if (r.next() < 0.4 && !lease.signal.aborted) {
          await client.kv
            .put(
              `${name}-data`,
              { holder, step: s },
              { fence: { lease: name, fencingToken: lease.fencingToken } },
            )
            .catch(() => undefined);
        }
        await sleep(r.int(50, Math.max(60, Math.floor(c.o.ttlMs / 2))), c.signal);
      }
    } finally {
      await lease.release().catch(() => undefined);
    }
    await think(c, r);
  }
}

/** Resolves unknown mutations by retrying with their keys, then records final reads. Bounded by `finalPhaseMs`. */
async function finalPhase(c: Ctx): Promise<void> {
  const endBy = c.cluster.clock.now() + c.o.finalPhaseMs;
  let resolved = 0;
  for (const u of c.unresolved) {
    if (c.cluster.clock.now() > endBy) break;
    // A repeat past the server's idempotency window could be applied afresh: leave it unknown.
    if (c.cluster.clock.now() - u.firstSentMs > IDEMPOTENCY_WINDOW_MS * 0.9) continue;
    const res = await u.req.send(u.spec, {
      key: u.key,
      signal: AbortSignal.timeout(Math.max(1, Math.ceil(endBy - c.cluster.clock.now()))),
    }); // needs an integer
    if (isDefinite(res.outcome)) resolved++;
  }
  // Final linearizable reads (the durability checker's final state), through any node that answers.
  const keys = [c.counterKey, ...c.plainKeys, ...c.leases.map((l) => `${l}-data`)];
  for (const key of keys) {
    if (c.cluster.clock.now() > endBy) break;
    await c.finalReq.send({
      kind: 'kv.get',
      method: 'GET',
      path: `/v1/kv/${enc(key)}`,
      argsExtra: { key, final: true },
    });
  }
  for (const name of c.leases)
    if (c.cluster.clock.now() <= endBy)
      await c.finalReq.send(leaseGet(name, false, { final: true }));
  for (const name of c.leases)
    if (c.cluster.clock.now() <= endBy)
      await c.finalReq.send(historyRead(name, HISTORY_LIMIT_MAX, { final: true }));
  for (const group of c.groups) {
    if (c.cluster.clock.now() <= endBy)
      await c.finalReq.send({
        kind: 'election.get',
        method: 'GET',
        path: `/v1/elections/${enc(group)}`,
        argsExtra: { group, final: true },
      });
  }
  c.log(`workload final phase: resolved ${resolved}/${c.unresolved.length} unknown requests`);
}

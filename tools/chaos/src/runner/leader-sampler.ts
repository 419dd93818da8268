/**
 * Polls `GET /v1/cluster` (docs/api.md) on every node every `intervalMs` (default 200 ms) and keeps the
 * samples: the timeline's "leaders by term" band, `ClusterHandle.currentLeader/waitForLeader`, and
 * the one-leader-per-term check (docs/concepts.md) all read them. A node that does not answer within the
 * poll deadline is recorded as unreachable. `/v1/cluster` is answered locally, so a leaderless or
 * cut-off node still reports what it believes.
 */
import type { LeaderSample, NodeEndpoint, NodeId, RunClock } from '../types.js';
import { httpJson } from '../util/http.js';

/** Samples kept at most (a 60-minute run at 200 ms × 3 nodes is 54,000). */
export const leaderSamplesMax = 200_000;

/** Options of `LeaderSampler`. */
export interface LeaderSamplerOptions {
  readonly endpoints: () => readonly NodeEndpoint[];
  /** The node's process start count (`ChaosBackend.incarnation`). */
  readonly incarnation: (id: NodeId) => number;
  /** The node's data directory generation (`ChaosBackend.dataGeneration`); absent: always 0. */
  readonly dataGeneration?: (id: NodeId) => number;
  readonly clock: RunClock;
  /** Poll period per node, ms. Default 200. */
  readonly intervalMs?: number;
  /** Deadline of one poll, ms. Default 150 (must be < intervalMs so polls never pile up). */
  readonly pollTimeoutMs?: number;
  /** Source address for polls (null: default). */
  readonly localAddress?: string | null;
}

interface ClusterAnswer {
  readonly leader?: unknown;
  readonly term?: unknown;
  readonly commitIndex?: unknown;
  readonly appliedIndex?: unknown;
}

const numberOrNull = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null;

/** Background poller; `start` once, `stop` once. */
export class LeaderSampler {
  readonly #options: LeaderSamplerOptions;
  readonly #samples: LeaderSample[] = [];
  readonly #latest = new Map<NodeId, LeaderSample>();
  #timer: NodeJS.Timeout | null = null;
  #inFlight = new Set<NodeId>();
  #waiters = new Set<() => void>();

  constructor(options: LeaderSamplerOptions) {
    this.#options = options;
  }

  /** Starts polling (immediately, then every intervalMs). */
  start(): void {
    if (this.#timer !== null) return;
    const tick = (): void => {
      for (const endpoint of this.#options.endpoints()) void this.#poll(endpoint);
    };
    tick();
    this.#timer = setInterval(tick, this.#options.intervalMs ?? 200);
  }

  /** Stops polling (in-flight polls finish and are kept). */
  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  async #poll(endpoint: NodeEndpoint): Promise<void> {
    if (this.#inFlight.has(endpoint.id)) return;
    this.#inFlight.add(endpoint.id);
    const timeMs = this.#options.clock.now();
    const startsBefore = this.#options.incarnation(endpoint.id);
    const generation = (id: NodeId): number => this.#options.dataGeneration?.(id) ?? 0;
    const generationBefore = generation(endpoint.id);
    let sample: LeaderSample;
    try {
      const reply = await httpJson('GET', `${endpoint.httpUrl}/v1/cluster`, undefined, {
        timeoutMs: this.#options.pollTimeoutMs ?? 150,
        localAddress: this.#options.localAddress ?? null,
      });
      const body = (reply.status === 200 ? reply.json : undefined) as ClusterAnswer | undefined;
      sample = {
        timeMs,
        node: endpoint.id,
        reachable: body !== undefined,
        leader: typeof body?.leader === 'string' ? body.leader : null,
        term: numberOrNull(body?.term),
        commitIndex: numberOrNull(body?.commitIndex),
        appliedIndex: numberOrNull(body?.appliedIndex),
        incarnation: this.#options.incarnation(endpoint.id) === startsBefore ? startsBefore : null,
        // Unchanged over the poll: every process that could have answered ran on this directory.
        dataGeneration: generation(endpoint.id) === generationBefore ? generationBefore : null,
      };
    } catch {
      sample = {
        timeMs,
        node: endpoint.id,
        reachable: false,
        leader: null,
        term: null,
        commitIndex: null,
        appliedIndex: null,
        incarnation: null,
        dataGeneration: null,
      };
    } finally {
      this.#inFlight.delete(endpoint.id);
    }
    if (this.#samples.length < leaderSamplesMax) this.#samples.push(sample);
    this.#latest.set(endpoint.id, sample);
    for (const wake of this.#waiters) wake();
  }

  /** All samples so far, oldest first (copy). */
  samples(): readonly LeaderSample[] {
    return [...this.#samples];
  }

  /**
   * The leader a majority of ALL nodes name in their latest sample, and which itself answers and
   * names itself; else null.
   */
  currentLeader(): NodeId | null {
    const endpoints = this.#options.endpoints();
    const votes = new Map<NodeId, number>();
    for (const e of endpoints) {
      const s = this.#latest.get(e.id);
      if (s?.reachable === true && s.leader !== null)
        votes.set(s.leader, (votes.get(s.leader) ?? 0) + 1);
    }
    for (const [leader, count] of votes) {
      if (count * 2 > endpoints.length && this.#latest.get(leader)?.leader === leader)
        return leader;
    }
    return null;
  }

  /**
   * Resolves with `currentLeader()` once non-null — and, with `everyNode`, once every node's latest
   * poll answered too (a run starts only when each node serves HTTP); rejects after `timeoutMs` or
   * on abort.
   */
  waitForLeader(timeoutMs: number, signal?: AbortSignal, everyNode = false): Promise<NodeId> {
    return new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        signal?.removeEventListener('abort', onAbort);
      };
      const check = (): void => {
        const leader = this.currentLeader();
        const up = (e: NodeEndpoint): boolean => this.#latest.get(e.id)?.reachable === true;
        if (leader !== null && (!everyNode || this.#options.endpoints().every(up))) {
          done();
          resolve(leader);
        }
      };
      const onAbort = (): void => {
        done();
        reject(signal!.reason as Error);
      };
      const timer = setTimeout(() => {
        done();
        const polled = this.#options
          .endpoints()
          .map((e) => `${e.id}:${JSON.stringify(this.#latest.get(e.id) ?? null)}`);
        reject(
          new Error(
            `no majority-agreed leader within ${timeoutMs} ms (latest: ${polled.join(' ')})`,
          ),
        );
      }, timeoutMs);
      this.#waiters.add(check);
      signal?.addEventListener('abort', onAbort, { once: true });
      check();
    });
  }
}

/**
 * Helpers of the client end-to-end tests (test/src/client): a seeded PRNG, deadline-bounded polling,
 * a fetch that the test can cut off (client↔cluster partition without touching the nodes), and a
 * TenureClient factory bound to a LocalCluster. Wraps test/src/support/cluster.ts; does not change it.
 */
import { TenureClient, type HeldGrant, type TenureClientOptions } from '@tenure/client';
import type { LocalCluster } from '../support/cluster.js';

/** A seeded uniform [0, 1) source (testkit's one generator). Same seed → same sequence. */
export { seededFloats as seededRandom } from '@tenure/testkit';

/** Seed of this run: `TENURE_TEST_SEED` if set, else a fixed default (print it on failure to replay). */
export function testSeed(fallback: number): number {
  const raw = process.env['TENURE_TEST_SEED'];
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : fallback;
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Calls `probe` every `intervalMs` until it returns a value other than undefined/false, and resolves
 * with it; rejects with `what` after `timeoutMs` (ms). Exceptions from `probe` count as "not yet".
 */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
  intervalMs = 25,
): Promise<T> {
  const until = performance.now() + timeoutMs;
  let lastError: unknown = null;
  while (performance.now() < until) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (error) {
      lastError = error;
    }
    await pause(intervalMs);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`,
  );
}

/** How a cut-off fetch fails: `refuse` rejects at once like a refused connection; `blackhole` hangs until aborted. */
export type CutMode = 'refuse' | 'blackhole';

/**
 * A fetch the test can cut off: while `cut(mode)` is in force every request fails (refused at once, or
 * hanging until its AbortSignal fires, like a black-holed network) and never reaches a node. `heal()`
 * restores it. `onRequest` / `afterResponse` let a test watch or disturb single requests.
 */
export class SwitchableFetch {
  #mode: CutMode | null = null;
  /** Requests that were let through (for assertions and debugging). */
  sent = 0;
  /** Requests that were refused or black-holed. */
  blocked = 0;
  /**
   * Called with each request that goes through, after its answer arrived; may throw to turn the answer
   * into a lost reply (the request did reach the server).
   */
  afterResponse: ((url: string, init: RequestInit | undefined, response: Response) => void) | null =
    null;

  readonly fetch: typeof fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (this.#mode !== null) {
      this.blocked++;
      if (this.#mode === 'refuse') throw connectionError('ECONNREFUSED');
      const signal = init?.signal;
      await new Promise<never>((_, reject) => {
        if (!signal) return; // hangs forever: the caller gave no way out
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    this.sent++;
    const response = await fetch(input, init);
    this.afterResponse?.(url, init, response);
    return response;
  };

  get isCut(): boolean {
    return this.#mode !== null;
  }

  cut(mode: CutMode = 'refuse'): void {
    this.#mode = mode;
  }

  heal(): void {
    this.#mode = null;
  }
}

/** An error shaped like undici's `fetch failed` with a system error cause carrying `code`. */
export function connectionError(code: string): TypeError {
  const cause = Object.assign(new Error(`connect ${code}`), { code });
  return new TypeError('fetch failed', { cause });
}

/** A TenureClient on every node of `cluster` with a seeded jitter source and optional extra options. */
export function clientFor(
  cluster: LocalCluster,
  random: () => number,
  extra: Partial<TenureClientOptions> = {},
): TenureClient {
  return new TenureClient({ endpoints: cluster.nodes.map((n) => n.url), random, ...extra });
}

/** Resolves at the next `renewed` event of `grant`; rejects if it is lost first or after `timeoutMs`. */
export function nextRenewal(grant: HeldGrant, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error: unknown): void => {
      clearTimeout(timer);
      grant.off('renewed', onRenewed);
      grant.off('lost', onLost);
      if (error === null) resolve();
      else reject(error instanceof Error ? error : new Error(String(error)));
    };
    const onRenewed = (): void => done(null);
    const onLost = (error: unknown): void => done(error);
    const timer = setTimeout(() => done(new Error(`no renewal within ${timeoutMs} ms`)), timeoutMs);
    grant.on('renewed', onRenewed);
    grant.on('lost', onLost);
  });
}

/** `GET /v1/leases/{name}` through any live node (linearizable), retried until some node answers 200/404. */
export async function serverLease(
  cluster: LocalCluster,
  name: string,
  timeoutMs = 15_000,
): Promise<{ holder: string; fencingToken: number } | null> {
  return pollUntil(
    `a linearizable read of lease ${name}`,
    async () => {
      for (const id of cluster.running()) {
        try {
          const r = await cluster.request(
            id,
            'GET',
            `/v1/leases/${encodeURIComponent(name)}`,
            undefined,
            {},
            3000,
          );
          if (r.status === 200)
            return {
              value: {
                holder: r.body.holder as string,
                fencingToken: r.body.fencingToken as number,
              },
            };
          if (r.status === 404) return { value: null };
        } catch {
          // node down or paused: try the next one
        }
      }
      return undefined;
    },
    timeoutMs,
  ).then((x) => x.value);
}

/**
 * The waiting side of a lease acquire with `waitMs` (docs/api.md, Leases): after the acquire is
 * queued FIFO by the state machine, wait for the waiter's fate — granted, timed out, cancelled —
 * and answer it; when the client goes away first, withdraw the waiter (and release a grant that
 * arrived meanwhile, which nobody would ever use). Withdrawals are proposed through the gateway,
 * with its shape checks, deadline and metrics.
 */
import assert from 'node:assert/strict';
import type { FastifyRequest } from 'fastify';
import type { AnyLeaseGrant, Command, WaiterOutcome } from '@tenure/coord-state';
import { waitForChange } from './change-hub.js';
import type { ServerDeps } from './deps.js';
import type { Gateway } from './gateway.js';
import { HttpError, timeoutError } from './http-error.js';
import { deadlineOf } from './request-context.js';

/** A queued acquire: the lease, its holder and the waiter id the state machine gave it. */
export interface QueuedAcquire {
  readonly name: string;
  readonly holder: string;
  readonly waiterId: number;
  /** How long the client asked to wait, ms (on top of the request's deadline). */
  readonly waitMs: number;
}

/** Waits of queued acquires on one node. */
export class LeaseWaits {
  readonly #d: ServerDeps;
  readonly #gw: Gateway;

  constructor(deps: ServerDeps, gateway: Gateway) {
    this.#d = deps;
    this.#gw = gateway;
  }

  /**
   * The grant of a queued acquire once it settles. Throws 409 held (with the holder, or the
   * lock-delay left) when the wait ran out or was cancelled, 504 timeout when the outcome is
   * unknown by the deadline (withdrawing the waiter when the client went away).
   */
  async settle(request: FastifyRequest, q: QueuedAcquire): Promise<AnyLeaseGrant> {
    const startMs = performance.now();
    let outcome = 'error';
    try {
      const grant = await this.#settle(request, q);
      outcome = 'granted';
      return grant;
    } catch (err) {
      if (err instanceof HttpError) outcome = err.code === 'held' ? 'timed_out' : err.code;
      throw err;
    } finally {
      const seconds = (performance.now() - startMs) / 1000;
      this.#d.metrics.waitSeconds.observe({ kind: 'lease', outcome }, seconds);
    }
  }

  async #settle(request: FastifyRequest, q: QueuedAcquire): Promise<AnyLeaseGrant> {
    const ctx = request.tenure;
    const coord = this.#d.coord;
    const settled = (): WaiterOutcome | null => {
      const o = coord.waiterOutcome(q.name, q.waiterId);
      return o.kind === 'pending' ? null : o;
    };
    const outcome = await waitForChange(
      this.#d.hub,
      `lease:${q.name}`,
      settled,
      deadlineOf(ctx, q.waitMs),
      ctx.signal,
    );
    if (outcome === null) {
      if (ctx.signal.aborted) this.#withdraw(q);
      throw timeoutError('the wait did not settle within the deadline; outcome unknown');
    }
    switch (outcome.kind) {
      case 'granted':
        assert(!('limit' in outcome), 'lease waiter granted a semaphore permit');
        return outcome;
      case 'timed_out':
        // The holder at the deadline, as the replicated answer (and its replay) has it.
        if (typeof outcome.holder === 'string')
          throw new HttpError('held', `lease ${q.name} is held`, { holder: outcome.holder });
        throw this.#heldError(q.name);
      case 'cancelled':
        throw this.#heldError(q.name);
      case 'unknown':
        throw timeoutError('the waiter is no longer known; outcome unknown');
      default:
        return assert.fail(`unhandled waiter outcome ${JSON.stringify(outcome)}`);
    }
  }

  #nowMs(): number {
    return Math.floor(this.#d.raft.status().clusterTimeMs);
  }

  /** 409 held with the current holder (or lock-delay) — the answer of a wait that ran out. */
  #heldError(name: string): HttpError {
    const t = this.#nowMs();
    const delay = this.#d.coord.lockDelayRemainingMs(name, t);
    const holder = this.#d.coord.getLease(name, t)?.holder ?? null;
    return new HttpError(
      'held',
      `lease ${name} is held`,
      delay > 0 && holder === null ? { holder, lockDelayRemainingMs: delay } : { holder },
    );
  }

  /**
   * The client of a waiting acquire went away: withdraw its waiter; if it was granted in the
   * meantime, release the grant. Best effort, on the leader only (a follower forwarded the wait).
   */
  #withdraw(q: QueuedAcquire): void {
    const { coord, config, raft, logger } = this.#d;
    if (raft.status().role !== 'leader') return;
    const timeoutMs = config.requestTimeoutMsDefault;
    const { name, holder, waiterId } = q;
    this.#gw
      .proposeDetached({ type: 'lease.cancelWait', name, holder, waiterId }, timeoutMs)
      .then(() => {
        const o = coord.waiterOutcome(name, waiterId);
        const live = coord.getLease(name, this.#nowMs());
        if (o.kind !== 'granted' || live === null || live.fencingToken !== o.fencingToken)
          return undefined;
        const release: Command = {
          type: 'lease.release',
          name,
          holder,
          fencingToken: o.fencingToken,
        };
        return this.#gw.proposeDetached(release, timeoutMs);
      })
      .catch((err: unknown) =>
        logger.debug({ err, name, waiterId }, 'withdrawing an abandoned waiter failed'),
      );
  }
}

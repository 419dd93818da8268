/**
 * The waiting side of a lease or semaphore acquire with `waitMs` (docs/api.md, Leases and
 * Semaphores): after the acquire is queued FIFO by the state machine, wait for the waiter's fate —
 * granted, timed out, cancelled — and answer it; when the client goes away first, withdraw the
 * waiter. A grant that arrived before the withdrawal stands until its TTL: the client may be
 * retrying with the same Idempotency-Key, and that retry is answered with the grant. Withdrawals
 * are proposed through the gateway, with its shape checks, deadline and metrics.
 */
import assert from 'node:assert/strict';
import type { FastifyRequest } from 'fastify';
import type { AnyLeaseGrant, Command, SemaphoreGrant, WaiterOutcome } from '@tenure/coord-state';
import { waitForChange } from './change-hub.js';
import type { ServerDeps } from './deps.js';
import type { Gateway } from './gateway.js';
import { HttpError, timeoutError } from './http-error.js';
import { deadlineOf } from './request-context.js';

/** The resource families whose acquires wait in a FIFO queue. */
export type WaitKind = 'lease' | 'semaphore';

/** A queued acquire: the lease or semaphore, its holder and the waiter id the state machine gave it. */
export interface QueuedAcquire {
  /** Absent = lease. */
  readonly kind?: WaitKind;
  readonly name: string;
  readonly holder: string;
  readonly waiterId: number;
  /** How long the client asked to wait, ms (on top of the request's deadline). */
  readonly waitMs: number;
}

/** Waits of queued acquires (leases and semaphores) on one node. */
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
    const g = await this.#timed(request, { ...q, kind: 'lease' });
    assert(!('limit' in g), 'lease waiter granted a semaphore permit');
    return g;
  }

  /** As `settle`, for a queued semaphore acquire: the permit once granted. */
  async settlePermit(request: FastifyRequest, q: QueuedAcquire): Promise<SemaphoreGrant> {
    const g = await this.#timed(request, { ...q, kind: 'semaphore' });
    assert('limit' in g, 'semaphore waiter granted a lease');
    return g;
  }

  /** `#settle`, recording the wait in `tenure_wait_seconds{kind, outcome}`. */
  async #timed(
    request: FastifyRequest,
    q: QueuedAcquire & { readonly kind: WaitKind },
  ): Promise<AnyLeaseGrant | SemaphoreGrant> {
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
      this.#d.metrics.waitSeconds.observe({ kind: q.kind, outcome }, seconds);
    }
  }

  async #settle(
    request: FastifyRequest,
    q: QueuedAcquire & { readonly kind: WaitKind },
  ): Promise<AnyLeaseGrant | SemaphoreGrant> {
    const ctx = request.tenure;
    const coord = this.#d.coord;
    const settled = (): WaiterOutcome | null => {
      const o = coord.waiterOutcome(q.name, q.waiterId);
      return o.kind === 'pending' ? null : o;
    };
    const outcome = await waitForChange(
      this.#d.hub,
      `${q.kind}:${q.name}`,
      settled,
      deadlineOf(ctx, q.waitMs),
      ctx.signal,
    );
    if (outcome === null) {
      if (ctx.signal.aborted) this.#withdraw(q);
      throw timeoutError('the wait did not settle within the deadline; outcome unknown');
    }
    switch (outcome.kind) {
      case 'granted': {
        const { kind: _granted, ...grant } = outcome;
        return grant;
      }
      case 'timed_out':
      case 'cancelled':
        // The holder at the deadline (or when the waiter was withdrawn — e.g. an earlier attempt of
        // this request went away and this retry replays it), as the replicated outcome has it: the
        // name was held then. Today's holder could be nobody, and 409 held would then be untrue.
        if (typeof outcome.holder === 'string')
          throw new HttpError('held', `lease ${q.name} is held`, { holder: outcome.holder });
        throw this.#heldError(q);
      case 'unknown':
        throw timeoutError('the waiter is no longer known; outcome unknown');
      default:
        return assert.fail(`unhandled waiter outcome ${JSON.stringify(outcome)}`);
    }
  }

  #nowMs(): number {
    return Math.floor(this.#d.raft.leadership().clusterTimeMs);
  }

  /**
   * 409 held — the answer of a wait that ran out: a lease's current holder (or lock-delay), a
   * semaphore's limit and live permits.
   */
  #heldError(q: QueuedAcquire & { readonly kind: WaitKind }): HttpError {
    const { name } = q;
    const t = this.#nowMs();
    if (q.kind === 'semaphore') {
      const v = this.#d.coord.getSemaphore(name, t);
      return new HttpError('held', `semaphore ${name} has no free permit`, {
        holder: null,
        ...(v === null ? {} : { limit: v.limit, live: v.holders.length }),
      });
    }
    const delay = this.#d.coord.lockDelayRemainingMs(name, t);
    const state = this.#d.coord.leaseState(name, t);
    // Held in shared mode: the same details as the immediate 409 (the first holder and the mode).
    if (state !== null && 'holders' in state && state.holders.length > 0)
      return new HttpError('held', `lease ${name} is held in shared mode`, {
        holder: state.holders[0]!.holder,
        mode: 'shared',
      });
    const holder = this.#d.coord.getLease(name, t)?.holder ?? null;
    return new HttpError(
      'held',
      `lease ${name} is held`,
      delay > 0 && holder === null ? { holder, lockDelayRemainingMs: delay } : { holder },
    );
  }

  /**
   * The client of a waiting acquire went away: withdraw its waiter. Best effort, on the leader only
   * (a follower forwarded the wait). A waiter already granted keeps its grant: releasing it here
   * would end a grant that a retry of the same request (same Idempotency-Key) is then answered
   * with — the client would hold a lease the log had already ended (a chaos run found this). The
   * grant ends by its TTL, like any grant whose holder went away.
   */
  #withdraw(q: QueuedAcquire & { readonly kind: WaitKind }): void {
    const { config, raft, logger } = this.#d;
    if (raft.leadership().role !== 'leader') return;
    const { kind, name, holder, waiterId } = q;
    const cancel: Command =
      kind === 'lease'
        ? { type: 'lease.cancelWait', name, holder, waiterId }
        : { type: 'semaphore.cancelWait', name, holder, waiterId };
    this.#gw
      .proposeDetached(cancel, config.requestTimeoutMsDefault)
      .catch((err: unknown) =>
        logger.debug({ err, name, waiterId }, 'withdrawing an abandoned waiter failed'),
      );
  }
}

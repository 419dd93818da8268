/**
 * The path of every write and linearizable read (docs/api.md): run on the leader, or forward once
 * to the leader, or answer 503 `no_leader`. Writes become a CommandEnvelope proposed through Raft
 * with the request's deadline; state-machine errors become HttpErrors with the catalog status.
 */
import assert from 'node:assert/strict';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  checkEnvelopeShape,
  type Command,
  type CommandEnvelope,
  type CommandResult,
} from '@tenure/coord-state';
import { ForwardProof } from './auth/forward-proof.js';
import { requestFingerprint } from './canonical-json.js';
import type { ServerDeps } from './deps.js';
import { HttpError, noLeader, timeoutError } from './http-error.js';
import { notLeaderHint } from './raft-errors.js';
import { httpAddressOf } from './member-view.js';
import { remainingMs } from './request-context.js';
import type { Consistency } from './schemas.js';

/** A committed command's result with its log position. */
export interface Committed {
  readonly result: CommandResult;
  readonly index: number;
  readonly clusterTimeMs: number;
}

/**
 * Part of a forwarded request's remaining budget kept back for the hop back from the leader
 * (response transfer and our own processing), so the whole request still ends by its deadline.
 */
export const FORWARD_HOP_MARGIN_MS = 50;

export class Gateway {
  readonly #d: ServerDeps;
  /**
   * Signs forwarded requests (and verifies them on arrival, arrival-headers.ts) so the leader
   * knows them from a client's and does not count them against a rate twice; null with auth off.
   */
  readonly forwardProof: ForwardProof | null;

  constructor(deps: ServerDeps) {
    this.#d = deps;
    this.forwardProof = deps.config.auth
      ? new ForwardProof(deps.config.clusterId, (name) => deps.coord.authToken(name))
      : null;
  }

  /**
   * Run `fn` on the leader; on a follower (or when `fn` throws not_leader, meaning nothing was
   * applied) forward the request to the leader. `extraMs` is the waiting time the request may
   * take on top of its base deadline (waitMs / timeoutMs), used for the forwarding timeout.
   * Resolves to `fn`'s answer, or to undefined once the leader's answer has been sent.
   */
  async onLeader<T>(
    request: FastifyRequest,
    reply: FastifyReply,
    extraMs: number,
    fn: () => Promise<T>,
  ): Promise<T | undefined> {
    const status = this.#d.raft.leadership();
    if (status.role === 'leader') {
      try {
        return await fn();
      } catch (err) {
        const nl = notLeaderHint(err);
        if (!nl) throw err;
        return this.#forward(
          request,
          reply,
          nl.leaderHint ?? this.#d.raft.leadership().leaderId,
          extraMs,
          fn,
          nl.handedOver,
        );
      }
    }
    return this.#forward(request, reply, status.leaderId, extraMs, fn);
  }

  /**
   * A linearizable read (ReadIndex on the leader, §6.4), or a local stale read when the query says
   * `consistency=stale` (header Tenure-Stale: true). `fn` gets the cluster time to judge expiry by.
   * `extraMs` as for `onLeader`; resolves to undefined once a forwarded answer has been sent.
   */
  async read<T>(
    request: FastifyRequest,
    reply: FastifyReply,
    read: { readonly consistency: Consistency; readonly extraMs: number },
    fn: (nowMs: number) => T | Promise<T>,
  ): Promise<T | undefined> {
    if (read.consistency === 'stale') {
      void reply.header('tenure-stale', 'true');
      return fn(this.#staleNowMs());
    }
    return this.onLeader(request, reply, read.extraMs, async () => {
      const left = remainingMs(request.tenure);
      if (left <= 0) throw timeoutError('deadline passed before the read barrier');
      await this.#d.raft.readBarrier({ timeoutMs: left });
      return fn(Math.floor(this.#d.raft.leadership().clusterTimeMs));
    });
  }

  /**
   * Cluster time (ms) a stale read judges expiry by (docs/concepts.md, §2): with a known leader, Raft's
   * estimate (leader: its cluster time; follower: the highest seen plus local elapsed time since
   * it was seen, which does not run ahead of the leader's); with no leader known, the cluster time
   * of the last applied log entry — frozen, because leases do not count down while the cluster is
   * leaderless and only the log decides expiry (a frozen lease must not read as gone).
   */
  #staleNowMs(): number {
    const s = this.#d.raft.leadership();
    if (s.leaderId === null) return Math.floor(this.#d.coord.lastAppliedTimeMs());
    return Math.floor(s.clusterTimeMs);
  }

  /** Propose `command` with the request's idempotency key and deadline; resolves once applied. */
  async propose(request: FastifyRequest, command: Command): Promise<Committed> {
    const ctx = request.tenure;
    // docs/security.md: with auth on, every command carries its sender (the owner of what it
    // creates; the only token that may renew, release or resign it). A repeat of the key by
    // another token is another request.
    const principal = request.tenureAuth?.principal ?? null;
    const route = request.routeOptions.url ?? request.url;
    const envelope: CommandEnvelope = {
      v: 1,
      command,
      idempotency:
        ctx.idempotencyKey === null
          ? null
          : {
              key: ctx.idempotencyKey,
              fingerprint: requestFingerprint(
                request.method,
                principal === null ? route : `${principal.token} ${route}`,
                request.params,
                request.body,
              ),
            },
      ...(principal === null ? {} : { principal }),
    };
    const left = remainingMs(ctx);
    if (left <= 0) throw timeoutError();
    return this.#submit(envelope, left);
  }

  /**
   * Propose a command of the server itself, outside any client request (e.g. withdrawing an
   * abandoned lease waiter): no idempotency key, `timeoutMs` as its deadline. Same checks and
   * metrics as a client's proposal.
   */
  proposeDetached(command: Command, timeoutMs: number): Promise<Committed> {
    return this.#submit({ v: 1, command, idempotency: null }, timeoutMs);
  }

  /** Check the envelope's shape, propose it within `timeoutMs` (> 0), record the latency. */
  async #submit(envelope: CommandEnvelope, timeoutMs: number): Promise<Committed> {
    assert(timeoutMs > 0, `a proposal deadline must be positive, got ${timeoutMs} ms`);
    // Validate once at the gateway: an envelope the replicas would refuse never reaches the log.
    const shapeError = checkEnvelopeShape(envelope);
    if (shapeError)
      throw new HttpError(shapeError.code, shapeError.message, { ...(shapeError.details ?? {}) });
    const t0 = performance.now();
    const applied = await this.#d.raft.propose(this.#d.encodeEnvelope(envelope), { timeoutMs });
    this.#d.metrics.proposalSeconds.observe(
      { type: envelope.command.type },
      (performance.now() - t0) / 1000,
    );
    return {
      result: applied.result.result,
      index: applied.index,
      clusterTimeMs: applied.clusterTimeMs,
    };
  }

  /** Propose and unwrap: the success value, or HttpError with the catalog status and details. */
  async write<V>(request: FastifyRequest, command: Command): Promise<{ value: V; index: number }> {
    const c = await this.propose(request, command);
    return { value: unwrap<V>(c.result), index: c.index };
  }

  /** The forward proof of `method url` sent from this node now, or null without a key. */
  signForward(method: string, url: string): string | null {
    return (
      this.forwardProof?.sign({ method, url, fromNodeId: this.#d.config.nodeId }, Date.now()) ??
      null
    );
  }

  /**
   * Sends the request to `leaderId` (waiting, bounded, for a leader when none is known) and relays
   * its answer; resolves to undefined once sent. A request already forwarded is refused (503), unless
   * `handedOver`: the leader it reached handed leadership over for it (notLeaderHint).
   */
  async #forward<T>(
    request: FastifyRequest,
    reply: FastifyReply,
    leaderId: string | null,
    extraMs: number,
    fn: () => Promise<T>,
    handedOver = false,
  ): Promise<T | undefined> {
    const ctx = request.tenure;
    const self = this.#d.config.nodeId;
    if (ctx.forwarded && !handedOver)
      throw noLeader(
        `this node (${self}) is not the leader; forwarded requests are not forwarded again`,
      );
    let target = leaderId;
    if (target === null || target === self) {
      // During an election, wait (bounded) for a leader rather than failing at once.
      target = await this.#awaitLeader(
        Math.min(remainingMs(ctx), this.#d.config.electionTimeoutMs * 2),
        ctx.signal,
      );
      if (target === null) throw noLeader();
      if (target === self && this.#d.raft.leadership().role === 'leader') return fn();
    }
    const address = httpAddressOf(this.#d.config.peers, target, (id) =>
      this.#d.raft.memberAddress(id),
    );
    if (address === null || target === self) throw noLeader();
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    // docs/api.md Deadlines: the whole request ends by our deadline. The leader gets our remaining
    // budget minus a margin for the hop back; we stop waiting for it exactly at our own deadline
    // (+ the request's waiting time) and answer 504/503 ourselves.
    const left = remainingMs(ctx);
    const leaderBudgetMs = Math.floor(left - FORWARD_HOP_MARGIN_MS);
    if (leaderBudgetMs < 1)
      throw timeoutError(
        `the deadline is too short to forward to the leader (a follower keeps ${FORWARD_HOP_MARGIN_MS} ms for the hop back); nothing was sent`,
      );
    // One hop at most — two when the leader it reached handed leadership over for it (removing
    // itself: the new leader removes another node, so it never hands over again) — never to ourselves.
    assert(
      (!ctx.forwarded || handedOver) && target !== self,
      'a request is forwarded at most once (twice after a hand-over), to another node',
    );
    const proof = this.signForward(request.method, request.url);
    let res;
    try {
      res = await this.#d.forwarder.forward(
        address,
        {
          method: request.method,
          url: request.url,
          ...(body === undefined ? {} : { body }),
          idempotencyKey: ctx.idempotencyKey,
          requestTimeoutMs: leaderBudgetMs,
          fromNodeId: self,
          ...(proof === null ? {} : { proof }),
          ...(request.headers.authorization === undefined
            ? {}
            : { authorization: request.headers.authorization }),
        },
        Math.max(1, remainingMs(ctx, extraMs)),
        ctx.signal,
      );
    } catch (err) {
      if (ctx.signal.aborted) throw timeoutError('client went away');
      this.#d.logger.debug({ err, leader: target }, 'forward failed');
      // The leader may have processed it: for writes the outcome is unknown.
      if (request.method !== 'GET' && (err as { code?: string }).code !== 'ECONNREFUSED')
        throw timeoutError(`leader ${target} did not answer; outcome unknown`);
      throw noLeader(`leader ${target} is unreachable`);
    }
    this.#d.metrics.forwarded.inc();
    // The leader's JSON text is sent as is (a string with a JSON content type is not serialized
    // again); awaiting the reply waits until it is written, so the handler's undefined is no answer.
    await reply.code(res.statusCode).headers(res.headers).send(res.body);
    return undefined;
  }

  #awaitLeader(waitMs: number, signal: AbortSignal): Promise<string | null> {
    const now = this.#d.raft.leadership().leaderId;
    if (now !== null) return Promise.resolve(now);
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(null), waitMs);
      const off = this.#d.raft.onLeaderChange((leaderId) => {
        if (leaderId !== null) done(leaderId);
      });
      const onAbort = (): void => done(null);
      signal.addEventListener('abort', onAbort, { once: true });
      function done(v: string | null): void {
        clearTimeout(timer);
        off();
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      }
    });
  }
}

/** Success value of a CommandResult, or an HttpError carrying the state machine's code and details. */
export function unwrap<V>(result: CommandResult): V {
  if (result.ok) return result.value as V;
  // A reached limit may free up (a grant ends): say when to try again (docs/api.md, Errors).
  const headers: Record<string, string> =
    result.error.code === 'resource_exhausted' ? { 'retry-after': '1' } : {};
  throw new HttpError(
    result.error.code,
    result.error.message,
    { ...(result.error.details ?? {}) },
    headers,
  );
}

/**
 * The membership calls an operator makes (docs/api.md "Membership", docs/operations.md "Replace a
 * failed node"), as the membership fault makes them: a change sent to any live member (followers
 * forward it to the leader) and retried until it is committed, and a wait for a node's `/readyz`.
 * Every wait is bounded by a deadline on the run clock; nothing here sleeps in place of a condition.
 */
import type { NodeId } from '../types.js';
import { delay } from '../util/clock.js';
import { httpJson, type HttpReply } from '../util/http.js';
import type { FaultContext } from './fault.js';

/** Deadline of one HTTP attempt, ms (a change answers once committed: seconds on a loaded machine). */
export const memberCallTimeoutMs = 15_000;
/** Pause between attempts, ms. */
export const memberRetryMs = 250;

/** Error codes of a change that is worth retrying as it is (docs/api.md "Membership"). */
const retryableCodes = new Set(['reconfiguration_in_progress', 'not_caught_up', 'no_leader']);

/** The `error.code` of an error answer, or null. */
export function errorCode(reply: HttpReply): string | null {
  const error = (reply.json as { error?: { code?: unknown } } | undefined)?.error;
  return typeof error?.code === 'string' ? error.code : null;
}

/**
 * True when the answer says "not now" rather than "no": 5xx (no leader, timeout: the change may
 * still commit, and a repeat is idempotent), or a 409 naming a change in progress or a learner
 * still catching up.
 */
export function retryable(reply: HttpReply): boolean {
  if (reply.status >= 500) return true;
  const code = errorCode(reply);
  return code !== null && retryableCodes.has(code);
}

/**
 * Sends `method path` to the running nodes of `via` in turn (the sampled leader first when it is
 * one of them) until an answer with a status in `done` arrives, and returns it. Transport errors
 * and `retryable` answers move on to the next node after `memberRetryMs`. Throws when another
 * answer arrives (naming it) or when `deadlineMs` of the run clock passes.
 */
export async function memberChange(
  ctx: FaultContext,
  via: readonly NodeId[],
  method: 'POST' | 'DELETE',
  path: string,
  done: readonly number[],
  deadlineMs: number,
): Promise<HttpReply> {
  let last = 'no node was running';
  for (let attempt = 0; ctx.clock.now() < deadlineMs; attempt++) {
    const running = via.filter((id) => ctx.backend.nodeState(id) === 'running');
    const leader = ctx.currentLeader();
    const order =
      leader !== null && running.includes(leader)
        ? [leader, ...running.filter((id) => id !== leader)]
        : running;
    const node = order[attempt % Math.max(1, order.length)];
    if (node !== undefined) {
      const url = `${ctx.backend.endpoint(node).httpUrl}${path}`;
      const reply = await httpJson(method, url, undefined, {
        timeoutMs: memberCallTimeoutMs,
      }).catch((error: Error) => error);
      if (reply instanceof Error) last = `${node}: ${reply.message}`;
      else {
        if (done.includes(reply.status)) return reply;
        last = `${node} answered ${reply.status} ${reply.text.slice(0, 200)}`;
        if (!retryable(reply)) throw new Error(`${method} ${path}: ${last}`);
      }
    }
    await delay(memberRetryMs);
  }
  throw new Error(`${method} ${path}: not done by the deadline (last: ${last})`);
}

/**
 * Resolves once `node` answers `GET /readyz` with 200 (docs/api.md: caught up with what the leader
 * last told it was committed). Throws when the node's process exits (a refused `--join` exits with
 * code 2; its log says why) or when `deadlineMs` of the run clock passes.
 */
export async function waitReady(
  ctx: FaultContext,
  node: NodeId,
  deadlineMs: number,
): Promise<void> {
  const url = `${ctx.backend.endpoint(node).httpUrl}/readyz`;
  let last = 'no answer yet';
  while (ctx.clock.now() < deadlineMs) {
    if (ctx.backend.nodeState(node) === 'stopped')
      throw new Error(`${node} exited before it was ready (see ${ctx.backend.logPath(node)})`);
    try {
      const reply = await httpJson('GET', url, undefined, { timeoutMs: 2_000 });
      if (reply.status === 200) return;
      last = `${reply.status} ${reply.text.slice(0, 200)}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await delay(memberRetryMs);
  }
  throw new Error(`${node} not ready by the deadline (last: ${last})`);
}

/** Resolves true once `node`'s process has exited, false when `deadlineMs` passes first. */
export async function waitStopped(
  ctx: FaultContext,
  node: NodeId,
  deadlineMs: number,
): Promise<boolean> {
  while (ctx.backend.nodeState(node) !== 'stopped') {
    if (ctx.clock.now() >= deadlineMs) return false;
    await delay(memberRetryMs);
  }
  return true;
}

/**
 * One recorded client call: invoke event, HTTP request to one node, complete event. Outcome rules
 * of types.ts: 2xx ok; 4xx and 503 fail (with the docs/api.md error code); anything else, a timeout
 * or a transport error unknown. Args follow the checkers' convention: the resource name
 * (`name` / `group` / `key`) plus the request body fields.
 */
import type {
  ClusterHandle,
  HistorySink,
  Json,
  JsonObject,
  NodeId,
  OpKind,
  OpOutcome,
} from '../types.js';
import { httpJson, HttpTransportError } from '../util/http.js';

/** One call to make. */
export interface CallSpec {
  readonly process: string;
  readonly kind: OpKind;
  readonly node: NodeId;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path and query, e.g. `/v1/leases/L/acquire`. */
  readonly path: string;
  readonly body?: JsonObject;
  /** Recorded args (default: the body). */
  readonly args?: JsonObject;
  /** Client deadline, ms (default 3000); the server deadline header is set 1 s shorter. */
  readonly timeoutMs?: number;
  readonly localAddress?: string | null;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The result: the outcome as recorded plus the op id. */
export interface CallResult {
  readonly opId: number;
  readonly outcome: OpOutcome;
}

/** Makes and records the call. Never throws for HTTP or network failures (they are outcomes). */
export async function recordedCall(
  history: HistorySink,
  cluster: ClusterHandle,
  spec: CallSpec,
): Promise<CallResult> {
  const opId = history.invoke(spec.process, spec.kind, spec.args ?? spec.body ?? {}, spec.node);
  const timeoutMs = spec.timeoutMs ?? 3_000;
  let outcome: OpOutcome;
  try {
    const reply = await httpJson(
      spec.method,
      `${cluster.endpoint(spec.node).httpUrl}${spec.path}`,
      spec.body,
      {
        timeoutMs,
        localAddress: spec.localAddress ?? null,
        headers: {
          'request-timeout-ms': String(Math.max(100, timeoutMs - 1_000)),
          ...(spec.headers ?? {}),
        },
      },
    );
    const json = (reply.json ?? null) as Json;
    if (reply.status >= 200 && reply.status < 300)
      outcome = { status: 'ok', httpStatus: reply.status, value: json };
    else if ((reply.status >= 400 && reply.status < 500) || reply.status === 503) {
      const code =
        (reply.json as { error?: { code?: string } } | undefined)?.error?.code ??
        `http_${reply.status}`;
      outcome = { status: 'fail', httpStatus: reply.status, code, value: json };
    } else outcome = { status: 'unknown', reason: `http ${reply.status}` };
  } catch (error) {
    outcome = {
      status: 'unknown',
      reason:
        error instanceof HttpTransportError ? `${error.kind}: ${error.message}` : String(error),
    };
  }
  history.complete(opId, outcome, spec.node);
  return { opId, outcome };
}

/** The ok body as an object, else null. */
export function okBody(outcome: OpOutcome): JsonObject | null {
  return outcome.status === 'ok' &&
    outcome.value !== null &&
    typeof outcome.value === 'object' &&
    !Array.isArray(outcome.value)
    ? outcome.value
    : null;
}

/** `fencingToken` of an ok lease answer, else null. */
export function tokenOf(outcome: OpOutcome): number | null {
  const t = okBody(outcome)?.['fencingToken'];
  return typeof t === 'number' ? t : null;
}

/** `holder` of an ok lease answer, else null. */
export function holderOf(outcome: OpOutcome): string | null {
  const h = okBody(outcome)?.['holder'];
  return typeof h === 'string' ? h : null;
}

/** Lease calls (docs/api.md Leases) bound to a history and cluster. */
export class LeaseClient {
  constructor(
    readonly history: HistorySink,
    readonly cluster: ClusterHandle,
    readonly process: string,
    readonly localAddress: string | null = null,
  ) {}

  #call(
    kind: OpKind,
    node: NodeId,
    method: CallSpec['method'],
    path: string,
    name: string,
    body?: JsonObject,
    timeoutMs?: number,
  ): Promise<CallResult> {
    return recordedCall(this.history, this.cluster, {
      process: this.process,
      kind,
      node,
      method,
      path,
      ...(body !== undefined ? { body } : {}),
      args: { name, ...(body ?? {}) },
      localAddress: this.localAddress,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
  }

  /** Acquire; `waitMs` > 0 queues (the client deadline then defaults to waitMs + 3 s). */
  acquire(
    node: NodeId,
    name: string,
    holder: string,
    ttlMs: number,
    timeoutMs?: number,
    waitMs = 0,
  ): Promise<CallResult> {
    const body: JsonObject = waitMs > 0 ? { holder, ttlMs, waitMs } : { holder, ttlMs };
    return this.#call(
      'lease.acquire',
      node,
      'POST',
      `/v1/leases/${name}/acquire`,
      name,
      body,
      timeoutMs ?? (waitMs > 0 ? waitMs + 3_000 : undefined),
    );
  }

  renew(
    node: NodeId,
    name: string,
    holder: string,
    fencingToken: number,
    timeoutMs?: number,
  ): Promise<CallResult> {
    return this.#call(
      'lease.renew',
      node,
      'POST',
      `/v1/leases/${name}/renew`,
      name,
      { holder, fencingToken },
      timeoutMs,
    );
  }

  release(
    node: NodeId,
    name: string,
    holder: string,
    fencingToken: number,
    timeoutMs?: number,
  ): Promise<CallResult> {
    return this.#call(
      'lease.release',
      node,
      'POST',
      `/v1/leases/${name}/release`,
      name,
      { holder, fencingToken },
      timeoutMs,
    );
  }

  get(node: NodeId, name: string, timeoutMs?: number): Promise<CallResult> {
    return this.#call('lease.get', node, 'GET', `/v1/leases/${name}`, name, undefined, timeoutMs);
  }

  watch(node: NodeId, name: string, afterToken: number, waitMs: number): Promise<CallResult> {
    return recordedCall(this.history, this.cluster, {
      process: this.process,
      kind: 'lease.watch',
      node,
      method: 'GET',
      path: `/v1/leases/${name}/watch?afterToken=${afterToken}&timeoutMs=${waitMs}`,
      args: { name, afterToken, timeoutMs: waitMs },
      localAddress: this.localAddress,
      timeoutMs: waitMs + 2_000,
    });
  }

  campaign(
    node: NodeId,
    group: string,
    candidate: string,
    ttlMs: number,
    timeoutMs?: number,
  ): Promise<CallResult> {
    const body = { candidate, ttlMs };
    return recordedCall(this.history, this.cluster, {
      process: this.process,
      kind: 'election.campaign',
      node,
      method: 'POST',
      path: `/v1/elections/${group}/campaign`,
      body,
      args: { group, ...body },
      localAddress: this.localAddress,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
  }

  electionRenew(
    node: NodeId,
    group: string,
    candidate: string,
    timeoutMs?: number,
  ): Promise<CallResult> {
    const body = { candidate };
    return recordedCall(this.history, this.cluster, {
      process: this.process,
      kind: 'election.renew',
      node,
      method: 'POST',
      path: `/v1/elections/${group}/renew`,
      body,
      args: { group, ...body },
      localAddress: this.localAddress,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
  }

  electionGet(node: NodeId, group: string, timeoutMs?: number): Promise<CallResult> {
    return recordedCall(this.history, this.cluster, {
      process: this.process,
      kind: 'election.get',
      node,
      method: 'GET',
      path: `/v1/elections/${group}`,
      args: { group },
      localAddress: this.localAddress,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
  }

  kvPut(node: NodeId, key: string, value: Json, timeoutMs?: number): Promise<CallResult> {
    return recordedCall(this.history, this.cluster, {
      process: this.process,
      kind: 'kv.put',
      node,
      method: 'PUT',
      path: `/v1/kv/${key}`,
      body: { value },
      args: { key, value },
      localAddress: this.localAddress,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
  }

  kvGet(node: NodeId, key: string, timeoutMs?: number): Promise<CallResult> {
    return recordedCall(this.history, this.cluster, {
      process: this.process,
      kind: 'kv.get',
      node,
      method: 'GET',
      path: `/v1/kv/${key}`,
      args: { key },
      localAddress: this.localAddress,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
  }
}

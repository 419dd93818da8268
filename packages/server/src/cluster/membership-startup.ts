/**
 * What a node asks the other members over HTTP before and after it starts (docs/operations.md):
 * - `--join`: learn the members and their addresses, refuse the data of a member removed while it
 *   was down, then ask to be added as a learner (retried until committed; idempotent on the member
 *   side);
 * - an empty data directory without `--join`: ask the members whether they already know this node
 *   with data — then it lost its vote and log and must not start as a voter (refused with the way
 *   back: remove, wipe, `--join`, promote);
 * - later, while no leader is heard: ask whether this node was removed (the removal's entry never
 *   reaches the removed node, so it learns it this way and exits).
 */
import { readdir } from 'node:fs/promises';
import type { Logger } from 'pino';
import { Agent, fetch } from 'undici';
import { storedClusterId, TLS_MIN_VERSION, type PeerInfo } from '@tenure/raft';
import type { ServerConfig } from '../config.js';

/** A start-up refusal: the message says why and what to do; `main` exits with code 2. */
export class StartRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartRefusedError';
  }
}

/**
 * The data directory is a member's that was removed while it was down (refuseRemovedData): refused
 * at start; learned later (while joining), the node leaves as a removed member does.
 */
export class RemovedDataError extends StartRefusedError {
  constructor(message: string) {
    super(message);
    this.name = 'RemovedDataError';
  }
}

/** Per-request deadline of these calls, ms. */
const CALL_TIMEOUT_MS = 3000;
/** Pause between attempts of the join calls, ms. */
const JOIN_RETRY_MS = 1000;
/** Attempts of each join call before giving up (about ten minutes). */
export const JOIN_ATTEMPTS_MAX = 600;

/** A peer's answer, or why there was none (unreachable, refused, TLS, timeout). */
type JsonAnswer = { readonly status: number; readonly body: Record<string, unknown> } | NoAnswer;
/** No HTTP answer: the failure's text and, when there is one, its code (ECONNREFUSED, …). */
type NoAnswer = { readonly status: null; readonly failure: string; readonly code?: string };

/**
 * How this node calls its peers' HTTP APIs: the scheme every node serves, an agent that trusts
 * `--tls-ca` and presents the node's own certificate (for `--tls-client-ca`), and with auth on the
 * operator's `TENURE_ROOT_TOKEN` as bearer (joining needs `admin`; docs/security.md).
 */
export interface PeerCalls {
  readonly scheme: 'http' | 'https';
  readonly dispatcher: Agent;
  readonly authorization: string | null;
}

/** The PeerCalls of `config`; `close()` the dispatcher when done. */
export function peerCalls(config: Pick<ServerConfig, 'tls' | 'auth' | 'rootToken'>): PeerCalls {
  const tls = config.tls ?? null;
  const connect =
    tls === null
      ? {}
      : {
          cert: tls.cert,
          key: tls.key,
          minVersion: TLS_MIN_VERSION,
          ...(tls.ca === null ? {} : { ca: tls.ca }),
        };
  return {
    scheme: tls === null ? 'http' : 'https',
    dispatcher: new Agent({ connect }),
    authorization: config.auth && config.rootToken !== null ? `Bearer ${config.rootToken}` : null,
  };
}

async function callJson(
  via: PeerCalls,
  url: string,
  init: { method: string; body?: unknown },
): Promise<JsonAnswer> {
  const headers: Record<string, string> = {};
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (via.authorization !== null) headers['authorization'] = via.authorization;
  try {
    const res = await fetch(url, {
      method: init.method,
      headers,
      dispatcher: via.dispatcher,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    return { status: res.status, body };
  } catch (err) {
    const cause = (err as { cause?: { message?: string; code?: unknown } }).cause;
    const failure = cause?.message ?? (err as Error).message;
    const code = typeof cause?.code === 'string' ? cause.code : undefined;
    return { status: null, failure, ...(code === undefined ? {} : { code }) }; // the caller decides
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface MemberAnswer {
  readonly id: string;
  readonly role?: string;
  readonly raftAddress: string;
  readonly httpAddress: string;
}

/** How a member that lost its data comes back (docs/operations.md "Replace a failed node"). */
function wayBack(id: string): string {
  return (
    `the way back: remove ${id} (DELETE /v1/cluster/members/${id} on any member), ` +
    'start it with an empty data directory and --join <a member>, then promote it (docs/operations.md)'
  );
}

/** OpenSSL's code when an https:// call is answered by a server speaking plain HTTP. */
const PLAIN_HTTP_ON_TLS = 'ERR_SSL_WRONG_VERSION_NUMBER';

/**
 * A join call's answer that retrying cannot change: 401 or 403 (joining needs an admin token in
 * TENURE_ROOT_TOKEN), or an https:// `--join` answered in plain HTTP (the member has no
 * `--tls-cert`). Throws StartRefusedError naming it; otherwise returns. (A plain http:// call to a
 * TLS member only sees the connection closed, which a restarting member also shows: that one is
 * retried, with a hint in the log: joinFailure.)
 */
function refuseUnretryable(answer: JsonAnswer, config: ServerConfig): void {
  if (answer.status === null && answer.code === PLAIN_HTTP_ON_TLS)
    throw new StartRefusedError(
      `cannot join through ${config.join}: the member answered in plain HTTP, not TLS; ` +
        `use ${config.join?.replace(/^https:/, 'http:')} (or serve that member with --tls-cert)`,
    );
  if (answer.status !== 401 && answer.status !== 403) return;
  const error = answer.body.error as { message?: string } | undefined;
  throw new StartRefusedError(
    `cannot join through ${config.join}: ${answer.status} ${error?.message ?? ''}; with auth on, ` +
      'give this node an admin token in TENURE_ROOT_TOKEN (docs/security.md)',
  );
}

/**
 * Log fields of a join call that got no answer: the failure, and a hint for the two common address
 * mistakes — nothing listening there (ECONNREFUSED), or a connection closed without an answer (a
 * member's Raft port, or a TLS member reached by http://). Both are retried, not refused: a
 * restarting member shows the same.
 */
function joinFailure(answer: NoAnswer, config: ServerConfig): { failure: string; hint?: string } {
  const check = "check that --join is a member's HTTP address (not its Raft address)";
  if (answer.code === 'ECONNREFUSED')
    return { failure: answer.failure, hint: `nothing listens there: ${check}` };
  if (answer.code === 'UND_ERR_SOCKET' && config.join?.startsWith('http:') === true)
    return {
      failure: answer.failure,
      hint: `closed without an answer: ${check}; if that member serves HTTPS (--tls-cert), use https://`,
    };
  return { failure: answer.failure };
}

/**
 * The cluster id this node runs with (docs/operations.md): `--cluster-id` when given; else the id
 * stored in its data directory (the data wins, as the stored membership wins over `--peers`); else,
 * with `--join` on an empty directory, the id of the cluster it joins (its open `/healthz`); else
 * the default. Returns `config` with that id.
 */
export async function settleClusterId(config: ServerConfig, via: PeerCalls): Promise<ServerConfig> {
  if (config.clusterIdGiven) return config;
  const stored = await storedClusterId(config.dataDir);
  let clusterId = stored ?? config.clusterId;
  if (stored === null && config.join !== null) {
    const answer = await callJson(via, `${config.join}/healthz`, { method: 'GET' });
    const theirs = answer.status === 200 ? answer.body.clusterId : undefined;
    if (typeof theirs === 'string') clusterId = theirs;
  }
  return clusterId === config.clusterId ? config : { ...config, clusterId };
}

/**
 * The cluster id `config.join` serves (its open `/healthz`) must be this node's, or their Raft
 * links refuse each other for good. Throws StartRefusedError naming the id to use.
 */
async function checkClusterId(config: ServerConfig, via: PeerCalls): Promise<void> {
  const answer = await callJson(via, `${config.join}/healthz`, { method: 'GET' });
  const theirs = answer.status === 200 ? answer.body.clusterId : undefined;
  if (typeof theirs === 'string' && theirs !== config.clusterId)
    throw new StartRefusedError(
      `the cluster at ${config.join} has cluster id "${theirs}" and this node "${config.clusterId}": ` +
        `start it with --cluster-id ${theirs}`,
    );
}

/**
 * `--join`: the members the cluster has now (GET /v1/cluster/members on `config.join`, retried
 * while unreachable, at most `attemptsMax` times), as the peers this node starts with: itself plus
 * every other member; null when no member answered. Throws StartRefusedError when the member
 * refuses the token (401/403), when the cluster's id is not this node's, or when `empty` (this
 * node has no data) and the cluster lists this node as a voter: it lost its vote and log, and a
 * voter must never come back empty (docs/operations.md).
 */
export async function joinPeers(
  config: ServerConfig,
  via: PeerCalls,
  log: Logger,
  { empty, attemptsMax }: { readonly empty: boolean; readonly attemptsMax: number },
): Promise<PeerInfo[] | null> {
  const self: PeerInfo = {
    id: config.nodeId,
    raftAddress: config.raftAddress,
    httpAddress: config.httpAddress,
  };
  for (let attempt = 1; attempt <= attemptsMax; attempt++) {
    const answer = await callJson(via, `${config.join}/v1/cluster/members`, { method: 'GET' });
    refuseUnretryable(answer, config);
    if (answer.status === 200 && Array.isArray(answer.body.members)) {
      await checkClusterId(config, via);
      const all = answer.body.members as MemberAnswer[];
      const me = all.find((m) => m.id === self.id);
      if (empty && me !== undefined && me.role !== 'learner')
        throw new StartRefusedError(
          `data directory ${config.dataDir} is empty but the cluster lists ${self.id} as a voter: ` +
            `this node lost its vote and log and must not come back as a voter; ${wayBack(self.id)}`,
        );
      const members = all.filter((m) => m.id !== self.id);
      log.info({ join: config.join, members: members.map((m) => m.id) }, 'learned the members');
      return [self, ...members.map((m) => ({ ...m }))];
    }
    if (attempt % 10 === 1)
      log.warn(
        {
          join: config.join,
          attempt,
          ...(answer.status === null ? joinFailure(answer, config) : { status: answer.status }),
        },
        'waiting for the cluster',
      );
    if (attempt < attemptsMax) await sleep(JOIN_RETRY_MS);
  }
  return null;
}

/**
 * `--join`: ask the cluster to add this node as a learner until the change is committed (200) or
 * the node stops. Resolves with the index of the membership that names it once added (or already a
 * member: the answer's `configIndex`), null if `stopped()` first. Before each ask, a node holding
 * data (`held()`, read then) checks it is not a removed member's (refuseRemovedData: the cluster
 * may have had no leader to answer at start). Throws StartRefusedError when the id is a member at
 * other addresses, RemovedDataError when the data is a removed member's.
 */
export async function requestJoin(
  config: ServerConfig,
  via: PeerCalls,
  log: Logger,
  stopped: () => boolean,
  held: () => { readonly lastLogIndex: number; readonly configIndex: number },
): Promise<number | null> {
  const body = {
    id: config.nodeId,
    raftAddress: config.raftAddress,
    httpAddress: config.httpAddress,
  };
  for (let attempt = 1; attempt <= JOIN_ATTEMPTS_MAX && !stopped(); attempt++) {
    await refuseRemovedData(config, via, held());
    const answer = await callJson(via, `${config.join}/v1/cluster/members`, {
      method: 'POST',
      body,
    });
    if (answer.status === 200 && typeof answer.body.configIndex === 'number') {
      const configIndex = answer.body.configIndex;
      const members = Array.isArray(answer.body.members)
        ? (answer.body.members as MemberAnswer[])
        : [];
      const role = members.find((m) => m.id === config.nodeId)?.role ?? 'learner';
      log.info(
        { join: config.join, configIndex, role },
        role === 'learner'
          ? 'a learner of the cluster; catching up, waiting to be promoted'
          : 'already a voter of the cluster; checked in',
      );
      return configIndex;
    }
    refuseUnretryable(answer, config);
    const error =
      answer.status === null
        ? undefined
        : (answer.body.error as { code?: string; message?: string } | undefined);
    if (error?.code === 'already_exists')
      throw new StartRefusedError(`cannot join: ${error.message ?? 'already a member elsewhere'}`);
    // Every tenth attempt (about every ten seconds) is enough to see why it waits.
    if (attempt % 10 === 1)
      log.warn(
        answer.status === null
          ? { join: config.join, attempt, ...joinFailure(answer, config) }
          : { join: config.join, attempt, status: answer.status, error },
        'join not done yet; retrying',
      );
    await sleep(JOIN_RETRY_MS);
  }
  return null;
}

/**
 * `--join` on a data directory that already holds replicated data (`held.lastLogIndex` > 0;
 * `held.configIndex` is the index of the newest membership in it, 0 for the bootstrap one): when
 * the member at `config.join` answers with a membership at least as new that does not list this
 * node, the data is a removed member's (removed while it was down, so the removal never reached
 * it) — an id, once removed, comes back only with empty data (docs/operations.md). Throws
 * RemovedDataError saying so. A member that does not answer, a cluster that lists this node (a
 * join restarted mid-way), or a newer membership of this node's own (an add a leader change lost)
 * say nothing.
 */
export async function refuseRemovedData(
  config: ServerConfig,
  via: PeerCalls,
  held: { readonly lastLogIndex: number; readonly configIndex: number },
): Promise<void> {
  if (held.lastLogIndex === 0) return;
  const answer = await callJson(via, `${config.join}/v1/cluster/members`, { method: 'GET' });
  if (answer.status !== 200 || !Array.isArray(answer.body.members)) return;
  const theirs = answer.body.configIndex;
  const listed = (answer.body.members as MemberAnswer[]).some((m) => m.id === config.nodeId);
  if (listed || typeof theirs !== 'number' || theirs < held.configIndex) return;
  throw new RemovedDataError(
    `data directory ${config.dataDir} holds ${config.nodeId}'s data (log up to ` +
      `${held.lastLogIndex}), but the cluster's membership ${theirs} does not list ` +
      `${config.nodeId}: it was removed while this node was down; an id, once removed, rejoins ` +
      'only with empty data — wipe the directory, start it with --join again and promote it ' +
      '(docs/operations.md)',
  );
}

/** True when `dir` does not exist or holds nothing. */
export async function isEmptyDir(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
}

interface MemberProbe {
  readonly from: string;
  readonly member: boolean;
  readonly matchIndex?: number;
  readonly hadData?: boolean;
  readonly configIndex: number;
  readonly commitIndex: number;
  readonly leader: string | null;
}

/** Every reachable peer's view of node `id` (GET /v1/cluster/members/{id}, one round). */
async function probe(
  via: PeerCalls,
  peers: readonly { httpAddress?: string }[],
  id: string,
): Promise<MemberProbe[]> {
  const answers = await Promise.all(
    peers
      .filter((p) => p.httpAddress !== undefined && p.httpAddress !== '')
      .map((p) =>
        callJson(via, `${via.scheme}://${p.httpAddress}/v1/cluster/members/${id}`, {
          method: 'GET',
        }),
      ),
  );
  return answers.flatMap((a) => (a.status === 200 ? [a.body as unknown as MemberProbe] : []));
}

/**
 * An empty data directory without `--join`: refuse (StartRefusedError) when a reachable peer knows
 * this node with data (a leader saw it acknowledge entries: its vote and log are lost) or has data
 * and does not list it as a member (it belongs to an existing cluster only through `--join`). Peers
 * that do not answer say nothing: a new cluster's nodes start together.
 */
export async function checkEmptyStart(
  config: ServerConfig,
  via: PeerCalls,
  log: Logger,
): Promise<void> {
  const others = config.peers.filter((p) => p.id !== config.nodeId);
  if (others.length === 0 || !(await isEmptyDir(config.dataDir))) return;
  const views = await probe(via, others, config.nodeId);
  const knew = views.find((v) => v.member && ((v.matchIndex ?? 0) > 0 || v.hadData === true));
  const stranger = views.find((v) => !v.member && v.commitIndex > 0);
  log.info({ answers: views.length }, 'empty data directory: asked the peers about this node');
  const back = wayBack(config.nodeId);
  if (knew !== undefined)
    throw new StartRefusedError(
      `data directory ${config.dataDir} is empty but ${knew.from} knows ${config.nodeId} as a member that ` +
        'had data: this node lost its vote and log and must not ' +
        `start as a voter; ${back}`,
    );
  if (stranger !== undefined)
    throw new StartRefusedError(
      `${config.nodeId} is not a member of the existing cluster (asked ${stranger.from}); start it ` +
        'with an empty data directory and --join <a member>, then promote it (docs/operations.md)',
    );
}

/**
 * True when a reachable member that knows a leader and a newer membership than `configIndex` says
 * `id` is not a member: this node was removed while it was away or cut off.
 */
export async function removedByPeers(
  via: PeerCalls,
  peers: readonly { id: string; httpAddress?: string }[],
  id: string,
  configIndex: number,
): Promise<boolean> {
  const views = await probe(
    via,
    peers.filter((p) => p.id !== id),
    id,
  );
  return views.some((v) => v.leader !== null && !v.member && v.configIndex > configIndex);
}

/**
 * `GET /v1/cluster/snapshot` (docs/api.md, docs/operations.md "Backup and restore"): a backup file
 * (coord-state snapshot-file.ts) of the state at one linearizable applied index.
 *
 * The node that answers encodes its own replica. It first learns a read index from the leader
 * (ReadIndex, Raft dissertation §6.4: the leader confirms its leadership and answers its commit
 * index; on the leader itself this is a local read barrier), waits until it has applied up to that
 * index, and then holds its applies (RaftNodeApi.holdApplies) while it encodes its state — so the
 * file holds every write acknowledged before the request, at exactly the applied index it names.
 * A follower asks the leader with the internal READ_INDEX_HEADER (one hop, never forwarded again).
 *
 * Cost: one encoding of the state on the answering node, in bounded slices (coord-state
 * snapshotSlices) with a turn of the event loop between them (driveSlices), so the node keeps
 * heartbeating, voting and answering health checks and reads meanwhile (docs/operations.md
 * "Snapshots of a large state"); its writes wait until the encoding ends. Asked on a follower (what
 * `tenure snapshot save` does), it never holds the leader's writes. The checksum is computed slice
 * by slice and the file is sent slice by slice with backpressure. One snapshot at a time per node
 * (bounded memory): a second request meanwhile gets 429 resource_exhausted.
 */
import { Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { encodeSnapshotFileHeader, STATE_SNAPSHOT_FORMAT } from '@tenure/coord-state';
import { driveSlices, type DrivenSlices } from '@tenure/raft';
import { HttpError, noLeader, timeoutError } from '../http-error.js';
import { httpAddressOf } from '../member-view.js';
import { remainingMs } from '../request-context.js';
import { routeSchema } from '../route-schema.js';
import type { RoutePluginOptions } from './leases.js';

/**
 * Internal request header: a follower asks the leader only for a read index (answer
 * `{"readIndex": n}`), not for a file.
 */
export const READ_INDEX_HEADER = 'tenure-snapshot-read-index';

/** The URL a follower asks the leader for a read index on (with READ_INDEX_HEADER). */
const READ_INDEX_URL = '/v1/cluster/snapshot';

/** A snapshot ready to send: the file's two header lines, the state in slices, its applied index. */
interface SnapshotFile {
  readonly head: Uint8Array;
  readonly payload: readonly Uint8Array[];
  readonly payloadBytes: number;
  readonly index: number;
}

const snapshotBody = Type.String({
  description:
    'The backup file (application/octet-stream): a version line, a JSON header line, the state.',
});

export const snapshotRoutes: FastifyPluginAsyncTypebox<RoutePluginOptions> = async (app, opts) => {
  const { deps } = opts;
  const { raft, config } = deps;
  /** True while this node is encoding or sending a snapshot (one at a time: bounded memory). */
  let sending = false;

  const schema = routeSchema(
    {
      tags: ['cluster'],
      summary: 'Backup: stream a consistent snapshot (admin)',
      description:
        'The state at one linearizable applied index, as a backup file with a header (format version, ' +
        'cluster id, index, term, cluster time, sha256 of the payload), encoded by the node asked. ' +
        '`tenure snapshot save FILE` writes it; `tenure-server --restore FILE` seeds a new cluster from it.',
      response: { 200: snapshotBody },
      errors: [400, 429, 503, 504],
    },
    opts.schemas.headers,
  );

  app.get('/v1/cluster/snapshot', { schema }, async (request, reply) => {
    if (request.headers[READ_INDEX_HEADER] !== undefined) {
      const readIndex = await leaderReadIndex(request);
      return reply.type('application/json').send(JSON.stringify({ readIndex }));
    }
    if (sending)
      throw new HttpError(
        'resource_exhausted',
        'this node is already sending a snapshot; retry when it is done',
        {},
        { 'retry-after': '5' },
      );
    sending = true;
    let file: SnapshotFile;
    try {
      file = await takeSnapshot(request);
    } catch (err) {
      sending = false;
      throw err;
    }
    const stream = Readable.from(slices(file.head, file.payload));
    stream.once('close', () => {
      sending = false;
    });
    return reply
      .header('content-type', 'application/octet-stream')
      .header('content-length', String(file.head.byteLength + file.payloadBytes))
      .header(
        'content-disposition',
        `attachment; filename="${config.clusterId}-${file.index}.tenure-snapshot"`,
      )
      .send(stream);
  });

  /** On the leader: confirm leadership (read barrier) and return the read index. */
  async function leaderReadIndex(request: FastifyRequest): Promise<number> {
    if (raft.status().role !== 'leader')
      throw noLeader(`this node (${config.nodeId}) is not the leader`);
    const left = remainingMs(request.tenure);
    if (left <= 0) throw timeoutError('deadline passed before the read barrier');
    return raft.readBarrier({ timeoutMs: left });
  }

  /**
   * Waits for a linearizable point, then holds applies while it encodes and hashes the local state
   * in slices: the bytes are the state at exactly the applied index read under the hold.
   */
  async function takeSnapshot(request: FastifyRequest): Promise<SnapshotFile> {
    const status = raft.status();
    if (status.role === 'leader') await leaderReadIndex(request);
    else await appliedUpTo(await askReadIndex(request, status.leaderId), request);
    const { status: s, clusterTimeMs, sha256, driven } = await encodeHeld(request);
    const payloadBytes = driven.byteLength;
    const head = encodeSnapshotFileHeader({
      clusterId: config.clusterId,
      nodeId: config.nodeId,
      index: s.appliedIndex,
      term: s.term,
      clusterTimeMs,
      stateFormat: STATE_SNAPSHOT_FORMAT,
      payloadBytes,
      sha256,
      createdAt: new Date().toISOString(),
    });
    deps.logger.info(
      { index: s.appliedIndex, term: s.term, payloadBytes, slices: driven.steps },
      'sending snapshot',
    );
    return { head, payload: driven.parts, payloadBytes, index: s.appliedIndex };
  }

  /** Holds applies, then encodes and hashes the state slice by slice at the applied index. */
  async function encodeHeld(request: FastifyRequest): Promise<{
    status: ReturnType<typeof raft.status>;
    clusterTimeMs: number;
    sha256: string;
    driven: DrivenSlices;
  }> {
    const release = raft.holdApplies();
    try {
      const status = raft.status();
      const clusterTimeMs = deps.coord.lastAppliedTimeMs();
      const hash = createHash('sha256');
      const driven = await driveSlices(
        deps.coord.snapshotSlices(),
        (bytes) => hash.update(bytes),
        request.tenure.signal,
      );
      return { status, clusterTimeMs, sha256: hash.digest('hex'), driven };
    } finally {
      release();
    }
  }

  /**
   * A follower asks the leader for a read index: one hop through the forwarder (the node's scheme,
   * certificates and keep-alive pool), carrying the client's bearer. Rejects 503 / 504 like a
   * forward.
   */
  async function askReadIndex(request: FastifyRequest, leaderId: string | null): Promise<number> {
    if (request.tenure.forwarded || leaderId === null || leaderId === config.nodeId)
      throw noLeader(`this node (${config.nodeId}) knows no leader`);
    const address = httpAddressOf(config.peers, leaderId, (id) => raft.memberAddress(id));
    if (address === null)
      throw noLeader(`this node does not know the address of leader ${leaderId}`);
    const left = remainingMs(request.tenure);
    if (left <= 1) throw timeoutError('deadline passed before asking the leader');
    const auth = request.headers.authorization;
    // Signed like every forward: the leader knows it from a client's and does not count it against
    // the token's rate a second time (docs/security.md, "Forwarded requests").
    const proof = opts.gateway.signForward('GET', READ_INDEX_URL);
    const res = await deps.forwarder
      .forward(
        address,
        {
          method: 'GET',
          url: READ_INDEX_URL,
          idempotencyKey: null,
          requestTimeoutMs: left,
          fromNodeId: config.nodeId,
          ...(auth === undefined ? {} : { authorization: auth }),
          ...(proof === null ? {} : { proof }),
          headers: { [READ_INDEX_HEADER]: '1' },
        },
        left,
        request.tenure.signal,
      )
      .catch(() => {
        throw noLeader(`leader ${leaderId} did not answer`);
      });
    const readIndex = parseReadIndex(res.statusCode, res.body);
    if (readIndex === null) throw noLeader(`leader ${leaderId} gave no read index`);
    return readIndex;
  }

  /** Resolves once this node has applied `index`; 504 at the request's deadline. */
  function appliedUpTo(index: number, request: FastifyRequest): Promise<void> {
    if (raft.status().appliedIndex >= index) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => done(timeoutError(`this node did not apply up to ${index} in time`)),
        Math.max(1, remainingMs(request.tenure)),
      );
      const off = raft.onApplied((applied) => {
        if (applied >= index) done(null);
      });
      function done(err: HttpError | null): void {
        clearTimeout(timer);
        off();
        if (err === null) resolve();
        else reject(err);
      }
    });
  }
};

/** `{"readIndex": n}` of a 200 answer, else null. */
function parseReadIndex(status: number | undefined, text: string): number | null {
  if (status !== 200) return null;
  try {
    const v = (JSON.parse(text) as { readIndex?: unknown }).readIndex;
    return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null;
  } catch {
    return null;
  }
}

/** The header, then the payload slice by slice (views, no copies). */
function* slices(head: Uint8Array, payload: readonly Uint8Array[]): Generator<Buffer> {
  for (const part of [head, ...payload])
    yield Buffer.from(part.buffer, part.byteOffset, part.byteLength);
}

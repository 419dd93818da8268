/**
 * `GET /v1/cluster/snapshot` (docs/api.md, docs/operations.md "Backup and restore"): a backup file
 * (coord-state snapshot-file.ts) of the state at one linearizable applied index.
 *
 * The node that answers encodes its own replica. It first learns a read index from the leader
 * (ReadIndex, Raft dissertation §6.4: the leader confirms its leadership and answers its commit
 * index; on the leader itself this is a local read barrier), waits until it has applied up to that
 * index, and then encodes its state in the same synchronous step as it reads its applied index —
 * so the file holds every write acknowledged before the request. A follower asks the leader with
 * the internal READ_INDEX_HEADER (one hop, never forwarded again).
 *
 * Cost: one encoding of the state on the answering node's event loop — the same work as one of the
 * Raft runtime's periodic snapshots. Asked on a follower (what `tenure snapshot save` does), it
 * never stalls the leader. The checksum is computed off the event loop (WebCrypto's digest runs on
 * the thread pool) and the file is sent in slices with backpressure. One snapshot at a time per
 * node (bounded memory): a second request meanwhile gets 429 resource_exhausted.
 */
import { Readable } from 'node:stream';
import { webcrypto } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { encodeSnapshotFileHeader, STATE_SNAPSHOT_FORMAT } from '@tenure/coord-state';
import { HttpError, noLeader, timeoutError } from '../http-error.js';
import { httpAddressOf } from '../member-view.js';
import { remainingMs } from '../request-context.js';
import { routeSchema } from '../route-schema.js';
import type { RoutePluginOptions } from './leases.js';

/** Size of the slices the file is written in (bytes). */
export const SNAPSHOT_SLICE_BYTES = 1024 * 1024;
/**
 * Internal request header: a follower asks the leader only for a read index (answer
 * `{"readIndex": n}`), not for a file.
 */
export const READ_INDEX_HEADER = 'tenure-snapshot-read-index';

/** The URL a follower asks the leader for a read index on (with READ_INDEX_HEADER). */
const READ_INDEX_URL = '/v1/cluster/snapshot';

/** A snapshot ready to send: the file's two header lines, the state, its applied index. */
interface SnapshotFile {
  readonly head: Uint8Array;
  readonly payload: Uint8Array;
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
      .header('content-length', String(file.head.byteLength + file.payload.byteLength))
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

  /** Waits for a linearizable point, encodes the local state, hashes it (off the event loop). */
  async function takeSnapshot(request: FastifyRequest): Promise<SnapshotFile> {
    const status = raft.status();
    if (status.role === 'leader') await leaderReadIndex(request);
    else await appliedUpTo(await askReadIndex(request, status.leaderId), request);
    // One synchronous step: the bytes are the state at exactly this applied index.
    const payload = deps.coord.snapshot();
    const s = raft.status();
    const clusterTimeMs = deps.coord.lastAppliedTimeMs();
    const digest = await webcrypto.subtle.digest('SHA-256', payload);
    const head = encodeSnapshotFileHeader({
      clusterId: config.clusterId,
      nodeId: config.nodeId,
      index: s.appliedIndex,
      term: s.term,
      clusterTimeMs,
      stateFormat: STATE_SNAPSHOT_FORMAT,
      payloadBytes: payload.byteLength,
      sha256: Buffer.from(digest).toString('hex'),
      createdAt: new Date().toISOString(),
    });
    deps.logger.info(
      { index: s.appliedIndex, term: s.term, payloadBytes: payload.byteLength },
      'sending snapshot',
    );
    return { head, payload, index: s.appliedIndex };
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

/** The header, then the payload in SNAPSHOT_SLICE_BYTES views (no copies). */
function* slices(head: Uint8Array, payload: Uint8Array): Generator<Buffer> {
  yield Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  for (let at = 0; at < payload.byteLength; at += SNAPSHOT_SLICE_BYTES) {
    const end = Math.min(payload.byteLength, at + SNAPSHOT_SLICE_BYTES);
    yield Buffer.from(payload.buffer, payload.byteOffset + at, end - at);
  }
}

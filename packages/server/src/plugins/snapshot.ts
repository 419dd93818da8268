/**
 * `GET /v1/cluster/snapshot` (docs/api.md, docs/operations.md "Backup and restore"): a backup file
 * (coord-state snapshot-file.ts) of the state at one applied index that is linearizable — the
 * leader confirms its leadership with a read barrier (ReadIndex, Raft dissertation §6.4) and then
 * encodes its replica in the same synchronous step as it reads the applied index. A follower
 * relays the leader's answer byte for byte (one hop, streamed).
 *
 * Cost: one encoding of the state on the leader's event loop (what the Raft runtime does for every
 * local snapshot anyway); the checksum is computed off the event loop (WebCrypto digest runs on the
 * thread pool) and the file is sent in slices with backpressure. One snapshot at a time per node:
 * a second request meanwhile gets 429 resource_exhausted.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { webcrypto } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { encodeSnapshotFileHeader, STATE_SNAPSHOT_FORMAT } from '@tenure/coord-state';
import { ADMIN_ROUTE } from '../admin-routes.js';
import { HttpError, noLeader, timeoutError } from '../http-error.js';
import { FORWARDED_HEADER, remainingMs } from '../request-context.js';
import { routeSchema } from '../route-schema.js';
import type { RoutePluginOptions } from './leases.js';

/** Size of the slices the file is written in (bytes). */
export const SNAPSHOT_SLICE_BYTES = 1024 * 1024;
/** A relayed snapshot fails when the leader sends nothing for this long (ms). */
const RELAY_IDLE_MS_MAX = 60_000;
/** A snapshot ready to send: the file's two header lines, the state, its applied index. */
interface SnapshotFile {
  readonly head: Uint8Array;
  readonly payload: Uint8Array;
  readonly index: number;
}
/** Response headers a follower passes on from the leader. */
const RELAY_HEADERS = ['content-type', 'content-length', 'content-disposition', 'retry-after'];

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
        'cluster id, index, term, cluster time, sha256 of the payload). `tenure snapshot save FILE` ' +
        'writes it; `tenure-server --restore FILE` seeds a new cluster from it.',
      response: { 200: snapshotBody },
      errors: [400, 429, 503, 504],
    },
    opts.schemas.headers,
  );

  app.get(
    '/v1/cluster/snapshot',
    { schema, config: ADMIN_ROUTE },
    async (request, reply): Promise<FastifyReply> => {
      const status = raft.status();
      if (status.role !== 'leader') return relay(request, reply, status.leaderId);
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
    },
  );

  /** Confirms leadership, encodes the state and hashes it (off the event loop). */
  async function takeSnapshot(request: FastifyRequest): Promise<SnapshotFile> {
    const left = remainingMs(request.tenure);
    if (left <= 0) throw timeoutError('deadline passed before the read barrier');
    await raft.readBarrier({ timeoutMs: left });
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

  /** A follower passes the leader's answer on (one hop; the leader never relays again). */
  function relay(
    request: FastifyRequest,
    reply: FastifyReply,
    leaderId: string | null,
  ): Promise<FastifyReply> {
    if (request.tenure.forwarded || leaderId === null || leaderId === config.nodeId)
      throw noLeader(`this node (${config.nodeId}) is not the leader and knows no other leader`);
    const peer = config.peers.find((p) => p.id === leaderId);
    if (peer === undefined) throw noLeader(`leader ${leaderId} is not in this node's peer list`);
    return new Promise((resolve, reject) => {
      const colon = peer.httpAddress.lastIndexOf(':');
      const out = httpRequest({
        host: peer.httpAddress.slice(0, colon).replace(/^\[|\]$/g, ''),
        port: Number(peer.httpAddress.slice(colon + 1)),
        method: 'GET',
        path: '/v1/cluster/snapshot',
        headers: {
          [FORWARDED_HEADER]: config.nodeId,
          'request-timeout-ms': String(Math.max(1, Math.floor(remainingMs(request.tenure)))),
        },
        timeout: RELAY_IDLE_MS_MAX,
      });
      out.on('timeout', () => out.destroy(new Error(`leader ${leaderId} stopped sending`)));
      out.on('error', (err) => {
        deps.logger.debug({ err, leader: leaderId }, 'snapshot relay failed');
        reject(noLeader(`leader ${leaderId} is unreachable`));
      });
      out.on('response', (res: IncomingMessage) => {
        void reply.code(res.statusCode ?? 502);
        for (const h of RELAY_HEADERS) {
          const v = res.headers[h];
          if (typeof v === 'string') void reply.header(h, v);
        }
        resolve(reply.send(res));
      });
      out.end();
    });
  }
};

/** The header, then the payload in SNAPSHOT_SLICE_BYTES views (no copies). */
function* slices(head: Uint8Array, payload: Uint8Array): Generator<Buffer> {
  yield Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  for (let at = 0; at < payload.byteLength; at += SNAPSHOT_SLICE_BYTES) {
    const end = Math.min(payload.byteLength, at + SNAPSHOT_SLICE_BYTES);
    yield Buffer.from(payload.buffer, payload.byteOffset + at, end - at);
  }
}

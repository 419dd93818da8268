/**
 * Transport over TCP: msgpackr payloads in length-prefixed frames (frame-decoder.ts) on persistent
 * connections — one outbound connection per peer for sending (peer-link.ts), inbound connections
 * for receiving. Every connection starts with a Hello handshake (handshake.ts); with `tls` set, a
 * mutual TLS handshake comes first (peer-tls.ts) and a peer failing it is refused before any frame
 * is read.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { NOOP_LOGGER, type Logger } from '../logger.js';
import type { Message, NodeId } from '../core/types.js';
import type { PeerInfo } from '../api.js';
import { createPackr } from '../codec.js';
import { parseMessage } from '../validate.js';
import { FrameDecoder, frameHeader } from './frame-decoder.js';
import { helloMismatch, parseHello, PROTOCOL_VERSION } from './handshake.js';
import { PeerLink, type PeerLinkStats } from './peer-link.js';
import { peerServerOptions, type PeerTlsOptions } from './peer-tls.js';
import {
  parseSnapshotChunk,
  parseSnapshotChunkAck,
  SNAPSHOT_CHUNK_BYTES_DEFAULT,
  SNAPSHOT_WINDOW_CHUNKS_DEFAULT,
} from './snapshot-chunk.js';
import { SnapshotReceiver, type SnapshotReceiverStats } from './snapshot-receiver.js';
import { SnapshotSender, type SnapshotSenderStats } from './snapshot-sender.js';
import type { Transport } from './transport.js';

/** Options of TcpTransport. Addresses are `host:port`. */
export interface TcpTransportOptions {
  readonly id: NodeId;
  readonly clusterId: string;
  /** Every voter (this node's own entry, if present, is ignored). */
  readonly peers: readonly PeerInfo[];
  /** Address to listen on, e.g. `127.0.0.1:7001`; port 0 picks a free port (see `address()`). */
  readonly listen: string;
  readonly logger?: Logger;
  /** Frames queued per peer before new ones are dropped. Default 8192. */
  readonly sendQueueFramesMax?: number;
  /** Reconnect backoff: first delay, doubling up to the max. Defaults 20 ms and 1000 ms. */
  readonly reconnectDelayMsMin?: number;
  readonly reconnectDelayMsMax?: number;
  /** Largest accepted frame; larger closes the connection. Default 64 MiB. */
  readonly frameBytesMax?: number;
  /**
   * InstallSnapshot travels in chunk frames of this many snapshot bytes (snapshot-chunk.ts), so a
   * snapshot of any size fits frames of frameBytesMax. Default 1 MiB; at most frameBytesMax − 64 KiB.
   */
  readonly snapshotChunkBytes?: number;
  /**
   * Directory where an incoming snapshot is assembled (emptied when the first one arrives).
   * Default: `tenure-snapshot-<id>-<pid>` under the OS temporary directory; RaftNode passes one
   * inside its dataDir.
   */
  readonly snapshotDir?: string;
  /** Mutual TLS on every link (both directions); absent: plain TCP. */
  readonly tls?: PeerTlsOptions;
}

/** Frame bytes reserved for a chunk's fields besides its data (meta, membership, checksum). */
const CHUNK_OVERHEAD_BYTES_MAX = 64 * 1024;
const FRAME_BYTES_MAX_DEFAULT = 64 * 1024 * 1024;

/** At most one "peer refused at TLS handshake" log line per this interval (the rest are counted). */
const TLS_REFUSAL_LOG_INTERVAL_MS = 10_000;

/** Counters of the transport, for status and tests. */
export interface TcpTransportStats {
  readonly peers: Readonly<Record<NodeId, PeerLinkStats>>;
  readonly receivedFrames: number;
  readonly malformedFrames: number;
  readonly handshakeRejections: number;
  /** Inbound connections refused by the TLS handshake (no, or an untrusted, certificate). */
  readonly tlsRejections: number;
  readonly snapshotsSent: SnapshotSenderStats;
  readonly snapshotsReceived: SnapshotReceiverStats;
}

/** Splits `host:port` (IPv6 as `[::1]:7001`). Throws on a bad address. */
export function parseAddress(address: string): { host: string; port: number } {
  const match = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(address);
  const port = Number(match?.[2]);
  if (
    match === null ||
    match[1] === undefined ||
    match[1] === '' ||
    !(port >= 0 && port <= 65535)
  ) {
    throw new Error(`bad address "${address}": expected host:port`);
  }
  return { host: match[1], port };
}

export class TcpTransport implements Transport {
  readonly id: NodeId;
  readonly #o: TcpTransportOptions;
  readonly #log: Logger;
  readonly #packr = createPackr();
  readonly #links = new Map<NodeId, PeerLink>();
  readonly #server: net.Server | tls.Server;
  readonly #inbound = new Set<net.Socket>();
  /** Ids whose inbound handshake is accepted: the peers of the membership in effect. */
  #peerIds: ReadonlySet<NodeId>;
  #handler: ((msg: Message) => void) | null = null;
  #refusedHandler: ((peer: NodeId) => void) | null = null;
  /** Raft address of each linked peer (to notice an address change in setPeers). */
  readonly #addresses = new Map<NodeId, string>();
  #started = false;
  #closed = false;
  #receivedFrames = 0;
  #malformedFrames = 0;
  #handshakeRejections = 0;
  #tlsRejections = 0;
  /** performance.now() of the last refusal logged; refusals since then are counted, not logged. */
  #tlsRefusalLoggedAtMs = -Infinity;
  #tlsRefusalsUnlogged = 0;
  readonly #snapshotSender: SnapshotSender;
  readonly #snapshotReceiver: SnapshotReceiver;

  constructor(options: TcpTransportOptions) {
    this.id = options.id;
    this.#o = options;
    this.#log = options.logger ?? NOOP_LOGGER;
    const chunkBytes = options.snapshotChunkBytes ?? SNAPSHOT_CHUNK_BYTES_DEFAULT;
    const frameBytesMax = options.frameBytesMax ?? FRAME_BYTES_MAX_DEFAULT;
    assert.ok(
      chunkBytes >= 1 && chunkBytes + CHUNK_OVERHEAD_BYTES_MAX <= frameBytesMax,
      'snapshotChunkBytes must be ≥ 1 and leave 64 KiB of frameBytesMax for the chunk header',
    );
    this.#snapshotSender = new SnapshotSender({
      chunkBytes,
      windowChunks: SNAPSHOT_WINDOW_CHUNKS_DEFAULT,
      sendChunk: (chunk) => this.#sendFrame(chunk.to, chunk),
      isConnected: (peer) => this.#links.get(peer)?.stats().connected ?? false,
    });
    this.#snapshotReceiver = new SnapshotReceiver({
      self: options.id,
      dir:
        options.snapshotDir ??
        path.join(os.tmpdir(), `tenure-snapshot-${options.id}-${process.pid}`),
      sendAck: (ack) => this.#sendFrame(ack.to, ack),
      deliver: (msg) => this.#handler?.(msg),
    });
    const others = options.peers.filter((p) => p.id !== options.id);
    this.#peerIds = new Set(others.map((p) => p.id));
    for (const peer of others) {
      this.#links.set(peer.id, this.#newLink(peer));
      this.#addresses.set(peer.id, peer.raftAddress);
    }
    if (options.tls === undefined) {
      this.#server = net.createServer({ noDelay: true }, (socket) => this.#accept(socket));
    } else {
      const server = tls.createServer({ ...peerServerOptions(options.tls), noDelay: true }, (s) =>
        this.#accept(s),
      );
      server.on('tlsClientError', (err, socket) => this.#onTlsRefusal(err, socket));
      this.#server = server;
    }
  }

  #newLink(peer: PeerInfo): PeerLink {
    const { host, port } = parseAddress(peer.raftAddress);
    const o = this.#o;
    return new PeerLink({
      self: o.id,
      clusterId: o.clusterId,
      peer: peer.id,
      host,
      port,
      sendQueueFramesMax: o.sendQueueFramesMax ?? 8192,
      reconnectDelayMsMin: o.reconnectDelayMsMin ?? 20,
      reconnectDelayMsMax: o.reconnectDelayMsMax ?? 1000,
      frameBytesMax: o.frameBytesMax ?? FRAME_BYTES_MAX_DEFAULT,
      packr: this.#packr,
      logger: this.#log,
      onReady: (reconnected) => {
        if (reconnected) this.#snapshotSender.resume(peer.id);
      },
      onRefused: () => this.#refusedHandler?.(peer.id),
      ...(o.tls === undefined ? {} : { tls: o.tls }),
    });
  }

  /**
   * Replaces the peer set (the membership changed, docs/operations.md): dials new peers, closes the
   * links of peers no longer listed, redials a peer whose address changed. Inbound handshakes are
   * accepted only from listed peers from now on. This node's own entry is ignored.
   */
  setPeers(peers: readonly PeerInfo[]): void {
    const next = new Map(peers.filter((p) => p.id !== this.id).map((p) => [p.id, p]));
    this.#peerIds = new Set(next.keys());
    for (const [id, link] of this.#links) {
      const peer = next.get(id);
      if (peer !== undefined && this.#addresses.get(id) === peer.raftAddress) continue;
      this.#snapshotSender.forget(id);
      link.close();
      this.#links.delete(id);
    }
    for (const peer of next.values()) {
      if (this.#links.has(peer.id)) continue;
      const link = this.#newLink(peer);
      this.#links.set(peer.id, link);
      this.#addresses.set(peer.id, peer.raftAddress);
      if (this.#started && !this.#closed) link.connect();
    }
  }

  /** Listens on `listen` and starts dialling peers. Rejects if the address cannot be bound. */
  async start(): Promise<void> {
    const { host, port } = parseAddress(this.#o.listen);
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen({ host, port }, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    this.#log.info({ address: this.address() }, 'raft transport listening');
    this.#started = true;
    for (const link of this.#links.values()) link.connect();
  }

  /** The bound `host:port` (useful after listening on port 0). */
  address(): string {
    const address = this.#server.address();
    assert.ok(address !== null && typeof address === 'object', 'transport not listening');
    return address.family === 'IPv6'
      ? `[${address.address}]:${address.port}`
      : `${address.address}:${address.port}`;
  }

  /** Queues `msg`; an InstallSnapshot goes out as chunk frames (snapshot-sender.ts). */
  send(msg: Message): void {
    if (msg.type === 'InstallSnapshot') {
      if (this.#links.has(msg.to) && !this.#closed) this.#snapshotSender.offer(msg);
      return;
    }
    this.#sendFrame(msg.to, msg);
  }

  #sendFrame(to: NodeId, value: object): void {
    const link = this.#links.get(to);
    if (link === undefined || this.#closed) return;
    link.send(this.#packr.pack(value));
  }

  onMessage(handler: (msg: Message) => void): void {
    this.#handler = handler;
  }

  /** See Transport.onPeerRefused: a dial of a peer's link answered by ECONNREFUSED. */
  onPeerRefused(handler: (peer: NodeId) => void): void {
    this.#refusedHandler = handler;
  }

  stats(): TcpTransportStats {
    const peers: Record<NodeId, PeerLinkStats> = {};
    for (const [id, link] of this.#links) peers[id] = link.stats();
    return {
      peers,
      receivedFrames: this.#receivedFrames,
      malformedFrames: this.#malformedFrames,
      handshakeRejections: this.#handshakeRejections,
      tlsRejections: this.#tlsRejections,
      snapshotsSent: this.#snapshotSender.stats(),
      snapshotsReceived: this.#snapshotReceiver.stats(),
    };
  }

  /** A dialer failed the TLS handshake (it never reached #accept): count, log rate-limited. */
  #onTlsRefusal(err: Error, socket: tls.TLSSocket): void {
    this.#tlsRejections++;
    this.#tlsRefusalsUnlogged++;
    // Read before destroy(): a destroyed socket no longer knows its peer.
    const remote = `${socket.remoteAddress ?? 'unknown'}:${socket.remotePort ?? '?'}`;
    socket.destroy();
    const nowMs = performance.now();
    if (nowMs - this.#tlsRefusalLoggedAtMs < TLS_REFUSAL_LOG_INTERVAL_MS) return;
    this.#log.warn(
      {
        remote,
        reason: (err as NodeJS.ErrnoException).code ?? err.message,
        refusals: this.#tlsRefusalsUnlogged,
        tlsRejections: this.#tlsRejections,
      },
      'peer refused at TLS handshake',
    );
    this.#tlsRefusalLoggedAtMs = nowMs;
    this.#tlsRefusalsUnlogged = 0;
  }

  #accept(socket: net.Socket): void {
    if (this.#closed) {
      socket.destroy();
      return;
    }
    this.#inbound.add(socket);
    const decoder = new FrameDecoder(this.#o.frameBytesMax ?? FRAME_BYTES_MAX_DEFAULT);
    let peer: NodeId | null = null; // set by a valid Hello
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const frame of decoder.push(chunk)) {
          if (peer === null) {
            peer = this.#onHello(socket, frame);
            if (peer === null) return;
          } else {
            this.#onFrame(peer, frame);
          }
        }
      } catch (err) {
        this.#log.warn({ peer, err }, 'bad frame stream, closing');
        socket.destroy();
      }
    });
    socket.on('error', (err) =>
      this.#log.debug({ peer, err: err.message }, 'inbound connection error'),
    );
    socket.on('close', () => this.#inbound.delete(socket));
  }

  /** Checks the dialer's Hello and answers with ours; returns the peer id, or null (closed). */
  #onHello(socket: net.Socket, frame: Buffer): NodeId | null {
    let decoded: unknown = null;
    try {
      decoded = this.#packr.unpack(frame);
    } catch {
      // fall through: malformed
    }
    const hello = parseHello(decoded);
    const mismatch =
      hello === null
        ? 'malformed handshake'
        : helloMismatch(hello, this.#o.clusterId, this.id, this.#peerIds);
    if (mismatch !== null || hello === null) {
      this.#handshakeRejections++;
      this.#log.error(
        { remote: `${socket.remoteAddress}:${socket.remotePort}`, reason: mismatch },
        'inbound handshake rejected',
      );
      socket.destroy();
      return null;
    }
    const reply = this.#packr.pack({
      hello: PROTOCOL_VERSION,
      clusterId: this.#o.clusterId,
      from: this.id,
      to: hello.from,
    });
    socket.write(Buffer.concat([frameHeader(reply.length), reply]));
    return hello.from;
  }

  /**
   * Decode, validate, check the sender, deliver (snapshot chunks and their acks to their streams).
   * Malformed frames are counted and dropped.
   */
  #onFrame(peer: NodeId, frame: Buffer): void {
    this.#receivedFrames++;
    let decoded: unknown = null;
    try {
      decoded = this.#packr.unpack(frame);
    } catch {
      decoded = null;
    }
    const kind = (decoded as { type?: unknown } | null)?.type;
    const msg =
      kind === 'SnapshotChunk'
        ? parseSnapshotChunk(decoded)
        : kind === 'SnapshotChunkAck'
          ? parseSnapshotChunkAck(decoded)
          : parseMessage(decoded);
    if (msg === null || msg.from !== peer || msg.to !== this.id) {
      this.#malformedFrames++;
      if (this.#malformedFrames % 1000 === 1)
        this.#log.warn(
          { peer, malformedFrames: this.#malformedFrames },
          'dropped malformed message',
        );
      return;
    }
    if (msg.type === 'SnapshotChunk') this.#snapshotReceiver.onChunk(msg);
    else if (msg.type === 'SnapshotChunkAck') this.#snapshotSender.onAck(msg);
    else this.#handler?.(msg);
  }

  /** Closes every connection and the listener. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const link of this.#links.values()) link.close();
    for (const socket of this.#inbound) socket.destroy();
    this.#snapshotReceiver.close();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

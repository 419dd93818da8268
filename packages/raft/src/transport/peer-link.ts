/**
 * The one outbound connection from this node to one peer: a bounded send queue, writes batched per
 * event-loop turn, handshake before any message, reconnect with capped exponential backoff.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Logger } from '../logger.js';
import type { Packr } from 'msgpackr';
import type { NodeId } from '../core/types.js';
import { FrameDecoder, frameHeader } from './frame-decoder.js';
import { helloMismatch, parseHello, PROTOCOL_VERSION } from './handshake.js';
import { peerClientOptions, type PeerTlsOptions } from './peer-tls.js';

/** Settings of a PeerLink (see TcpTransportOptions for meanings and defaults). */
export interface PeerLinkOptions {
  readonly self: NodeId;
  readonly clusterId: string;
  readonly peer: NodeId;
  readonly host: string;
  readonly port: number;
  readonly sendQueueFramesMax: number;
  readonly reconnectDelayMsMin: number;
  readonly reconnectDelayMsMax: number;
  readonly frameBytesMax: number;
  readonly packr: Packr;
  readonly logger: Logger;
  /** Mutual TLS: the Hello is sent only after the TLS handshake verified the peer. */
  readonly tls?: PeerTlsOptions;
  /**
   * Called each time the link becomes ready (handshake answered); `reconnected` is true when an
   * earlier connection was ready before (frames written to it may have been lost).
   */
  readonly onReady?: (reconnected: boolean) => void;
  /**
   * Called when a dial is refused (ECONNREFUSED only: the peer's process is not running; timeouts,
   * unreachable networks, TLS and handshake failures do not call it). Transport.onPeerRefused.
   */
  readonly onRefused?: () => void;
}

/** Counters of one link, for status and tests. */
export interface PeerLinkStats {
  readonly connected: boolean;
  readonly queuedFrames: number;
  readonly sentFrames: number;
  readonly droppedFrames: number;
  readonly handshakeRejections: number;
}

/** At most one "peer unreachable" warning per peer per this interval (the failures are counted). */
export const UNREACHABLE_LOG_INTERVAL_MS = 30_000;

/** Max bytes joined into one socket write (bounds the copy done per flush). */
const WRITE_CHUNK_BYTES_MAX = 1 << 20;

export class PeerLink {
  readonly #o: PeerLinkOptions;
  #socket: net.Socket | null = null;
  /** True once the peer answered our Hello correctly; frames flow only then. */
  #ready = false;
  /** Some connection of this link was ready once. */
  #wasReady = false;
  /** Encoded frames (header, payload) waiting for the socket; ≤ sendQueueFramesMax frames. */
  #queue: Buffer[] = [];
  #flushScheduled = false;
  #reconnectDelayMs: number;
  #reconnectTimer: NodeJS.Timeout | null = null;
  #closed = false;
  #sentFrames = 0;
  #droppedFrames = 0;
  #handshakeRejections = 0;
  /** Code of the last connection error logged at warn (a repeat of it is logged at debug). */
  #lastErrorCode: string | null = null;
  /** Connection failures since the last "peer unreachable" warning (reset when one is logged). */
  #failuresUnlogged = 0;
  /** performance.now() of the last "peer unreachable" warning; -Infinity before the first. */
  #unreachableLoggedAtMs = -Infinity;

  constructor(options: PeerLinkOptions) {
    this.#o = options;
    this.#reconnectDelayMs = options.reconnectDelayMsMin;
  }

  /** Queues one encoded payload; drops it (counted) when the queue is full. */
  send(payload: Buffer): void {
    if (this.#closed) return;
    if (this.#queue.length / 2 >= this.#o.sendQueueFramesMax) {
      this.#droppedFrames++;
      if (this.#droppedFrames % 1000 === 1)
        this.#o.logger.warn(
          { peer: this.#o.peer, droppedFrames: this.#droppedFrames },
          'send queue full, dropping',
        );
      return;
    }
    this.#queue.push(frameHeader(payload.length), payload);
    if (this.#socket === null && this.#reconnectTimer === null) this.#connect();
    this.#scheduleFlush();
  }

  stats(): PeerLinkStats {
    return {
      connected: this.#ready,
      queuedFrames: this.#queue.length / 2,
      sentFrames: this.#sentFrames,
      droppedFrames: this.#droppedFrames,
      handshakeRejections: this.#handshakeRejections,
    };
  }

  /** Connects now (called at start so the first heartbeat does not wait for a dial). */
  connect(): void {
    if (this.#socket === null && this.#reconnectTimer === null && !this.#closed) this.#connect();
  }

  #connect(): void {
    const { host, port } = this.#o;
    const socket =
      this.#o.tls === undefined
        ? net.connect({ host, port, noDelay: true })
        : tls.connect({ ...peerClientOptions(this.#o.tls, host), host, port }).setNoDelay(true);
    this.#socket = socket;
    const decoder = new FrameDecoder(this.#o.frameBytesMax);
    socket.on(this.#o.tls === undefined ? 'connect' : 'secureConnect', () => {
      const hello = {
        hello: PROTOCOL_VERSION,
        clusterId: this.#o.clusterId,
        from: this.#o.self,
        to: this.#o.peer,
      };
      const payload = this.#o.packr.pack(hello);
      socket.write(Buffer.concat([frameHeader(payload.length), payload]));
    });
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const frame of decoder.push(chunk)) this.#onFrame(socket, frame);
      } catch (err) {
        this.#o.logger.warn({ peer: this.#o.peer, err }, 'bad frame from peer, closing');
        socket.destroy();
      }
    });
    socket.on('drain', () => this.#scheduleFlush());
    socket.on('error', (err) => this.#onConnectionError(err));
    socket.on('close', () => this.#onClose(socket));
  }

  /**
   * A refused, unresolvable or broken connection. A TLS failure (a configuration problem worth
   * seeing) is warned when its code differs from the previous one; any other failure is warned as
   * "peer unreachable" at most once per UNREACHABLE_LOG_INTERVAL_MS (with the failures since the
   * last warning); the rest go to debug. A refusal (ECONNREFUSED) is also reported to onRefused.
   */
  #onConnectionError(err: Error & { code?: string }): void {
    const { peer } = this.#o;
    const code = err.code ?? err.message;
    // errno codes start with E and are not TLS's; OpenSSL's are ERR_SSL_*, ERR_TLS_* or unprefixed.
    const tlsFailure =
      this.#o.tls !== undefined && (/^ERR_(SSL|TLS)_/.test(code) || !code.startsWith('E'));
    const newTlsFailure = tlsFailure && code !== this.#lastErrorCode;
    this.#lastErrorCode = code;
    if (err.code === 'ECONNREFUSED' && !this.#closed) this.#o.onRefused?.();
    if (newTlsFailure) {
      this.#o.logger.warn({ peer, code, err: err.message }, 'peer connection error');
      return;
    }
    this.#failuresUnlogged++;
    const nowMs = performance.now();
    if (nowMs - this.#unreachableLoggedAtMs < UNREACHABLE_LOG_INTERVAL_MS) {
      this.#o.logger.debug({ peer, code, err: err.message }, 'peer connection error');
      return;
    }
    this.#o.logger.warn(
      {
        peer,
        address: this.#address(),
        code: err.code,
        err: err.message,
        failures: this.#failuresUnlogged,
      },
      'peer unreachable',
    );
    this.#unreachableLoggedAtMs = nowMs;
    this.#failuresUnlogged = 0;
  }

  /** The peer's address as logged: host:port, an IPv6 host in brackets ([::1]:7001). */
  #address(): string {
    const { host, port } = this.#o;
    return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  }

  #onFrame(socket: net.Socket, frame: Buffer): void {
    if (this.#ready) return; // the acceptor sends nothing after its Hello
    const hello = parseHello(this.#o.packr.unpack(frame));
    const mismatch =
      hello === null
        ? 'malformed handshake'
        : helloMismatch(hello, this.#o.clusterId, this.#o.self, new Set([this.#o.peer]));
    if (mismatch !== null) {
      this.#handshakeRejections++;
      this.#o.logger.error(
        { peer: this.#o.peer, address: this.#address(), reason: mismatch },
        'peer handshake rejected',
      );
      socket.destroy();
      return;
    }
    this.#ready = true;
    this.#lastErrorCode = null;
    this.#reconnectDelayMs = this.#o.reconnectDelayMsMin;
    this.#o.logger.info({ peer: this.#o.peer }, 'connected to peer');
    // The next failure after a good connection is news again: warn at once.
    this.#unreachableLoggedAtMs = -Infinity;
    this.#failuresUnlogged = 0;
    this.#scheduleFlush();
    this.#o.onReady?.(this.#wasReady);
    this.#wasReady = true;
  }

  #onClose(socket: net.Socket): void {
    if (this.#socket !== socket) return;
    if (this.#ready) this.#o.logger.info({ peer: this.#o.peer }, 'disconnected from peer');
    this.#socket = null;
    this.#ready = false;
    if (this.#closed) return;
    const delayMs = this.#reconnectDelayMs;
    this.#reconnectDelayMs = Math.min(this.#reconnectDelayMs * 2, this.#o.reconnectDelayMsMax);
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = null;
      if (!this.#closed) this.#connect();
    }, delayMs);
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    // One flush per event-loop turn: every message sent in this turn goes out in one write.
    setImmediate(() => {
      this.#flushScheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    const socket = this.#socket;
    if (!this.#ready || socket === null || socket.writableNeedDrain) return;
    while (this.#queue.length > 0) {
      let bytes = 0;
      let count = 0;
      while (count < this.#queue.length && bytes < WRITE_CHUNK_BYTES_MAX) {
        bytes += this.#queue[count]!.length + this.#queue[count + 1]!.length; // header + payload
        count += 2;
      }
      const chunk = this.#queue.splice(0, count);
      this.#sentFrames += count / 2;
      if (!socket.write(chunk.length === 1 ? chunk[0]! : Buffer.concat(chunk, bytes))) return; // resume on 'drain'
    }
  }

  /** Stops reconnecting and closes the socket; queued frames are discarded. Idempotent. */
  close(): void {
    this.#closed = true;
    if (this.#reconnectTimer !== null) clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = null;
    this.#queue = [];
    this.#socket?.destroy();
  }
}

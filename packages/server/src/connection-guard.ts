/**
 * Bounds on the HTTP connections of a node (docs/security.md, Abuse resistance): at most
 * `perAddressMax` open connections from one client IP address, on top of node:http's own
 * `maxConnections` for the node as a whole. A connection over either bound is closed as it
 * arrives, before a byte of it is read; each refusal counts in a metric and the refusals are
 * logged at most once per `logEveryMs` per reason (a flood must not flood the log too).
 */
import type { Server } from 'node:net';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';

/** Why a connection was closed at arrival. */
export type RefusalReason = 'per_address' | 'node';

export interface ConnectionGuardOptions {
  /** Open connections from one client address. */
  readonly perAddressMax: number;
  /** Open connections on the node (node:http `maxConnections`). */
  readonly nodeMax: number;
  readonly log: Logger;
  /** Counts each refused connection. */
  readonly onRefused: (reason: RefusalReason) => void;
  /** Least time between two log lines of the same reason, ms; default 10,000. */
  readonly logEveryMs?: number;
}

/** Tracks open connections by client address on one server. */
export class ConnectionGuard {
  readonly #open = new Map<string, number>();
  readonly #o: ConnectionGuardOptions;
  readonly #lastLogMs = new Map<RefusalReason, number>();
  readonly #unlogged = new Map<RefusalReason, number>();

  constructor(o: ConnectionGuardOptions) {
    this.#o = o;
  }

  /** Open connections from `address` now. */
  openFrom(address: string): number {
    return this.#open.get(address) ?? 0;
  }

  /** Attach to `server` (before it listens): counts, refuses and logs its connections. */
  attach(server: Server): void {
    server.maxConnections = this.#o.nodeMax;
    server.on('drop', (data?: { remoteAddress?: string }) =>
      this.#refused('node', data?.remoteAddress ?? 'unknown'),
    );
    server.on('connection', (socket: Socket) => this.#admit(socket));
  }

  #admit(socket: Socket): void {
    const address = socket.remoteAddress ?? 'unknown';
    const n = this.openFrom(address);
    if (n >= this.#o.perAddressMax) {
      socket.destroy();
      this.#refused('per_address', address);
      return;
    }
    this.#open.set(address, n + 1);
    socket.once('close', () => {
      const left = this.openFrom(address) - 1;
      if (left > 0) this.#open.set(address, left);
      else this.#open.delete(address);
    });
  }

  #refused(reason: RefusalReason, address: string): void {
    this.#o.onRefused(reason);
    const unlogged = (this.#unlogged.get(reason) ?? 0) + 1;
    const nowMs = Date.now();
    const last = this.#lastLogMs.get(reason);
    if (last !== undefined && nowMs - last < (this.#o.logEveryMs ?? 10_000)) {
      this.#unlogged.set(reason, unlogged);
      return;
    }
    this.#lastLogMs.set(reason, nowMs);
    this.#unlogged.set(reason, 0);
    const limit = reason === 'node' ? this.#o.nodeMax : this.#o.perAddressMax;
    this.#o.log.warn(
      { reason, address, limit, refused: unlogged },
      reason === 'node'
        ? 'connection refused: this node has its most connections open (--connections-max)'
        : 'connection refused: this address has its most connections open (--connections-per-address-max)',
    );
  }
}

/**
 * In-memory Transport for tests: a MemoryNetwork connects MemoryTransports in one process and can
 * cut links to model partitions. Delivery is asynchronous (setImmediate), in order per link.
 */
import type { Message, NodeId } from '../core/types.js';
import type { Transport } from './transport.js';

/** The shared "wire" of in-process nodes. */
export class MemoryNetwork {
  readonly #nodes = new Map<NodeId, MemoryTransport>();
  /** Directed links that drop everything: `${from}>${to}`. */
  readonly #cut = new Set<string>();

  /** The transport of node `id` (created on first use). */
  transport(id: NodeId): MemoryTransport {
    let transport = this.#nodes.get(id);
    if (transport === undefined) {
      transport = new MemoryTransport(id, this);
      this.#nodes.set(id, transport);
    }
    return transport;
  }

  /** Drops all traffic to and from `id` until `heal()`. */
  isolate(id: NodeId): void {
    for (const other of this.#nodes.keys()) {
      if (other === id) continue;
      this.#cut.add(`${id}>${other}`);
      this.#cut.add(`${other}>${id}`);
    }
  }

  /**
   * Models the process of `id` dying on a real network: every other node's transport reports that
   * `id` refused a connection (Transport.onPeerRefused). Traffic is not changed (use `isolate`).
   */
  refuseFrom(id: NodeId): void {
    for (const [other, transport] of this.#nodes)
      if (other !== id) setImmediate(() => transport.refused(id));
  }

  /** Restores every link. */
  heal(): void {
    this.#cut.clear();
  }

  /** @internal used by MemoryTransport.send. */
  deliver(msg: Message): void {
    if (this.#cut.has(`${msg.from}>${msg.to}`)) return;
    const target = this.#nodes.get(msg.to);
    if (target === undefined) return;
    setImmediate(() => target.receive(msg));
  }
}

/** One node's end of a MemoryNetwork. */
export class MemoryTransport implements Transport {
  #handler: ((msg: Message) => void) | null = null;
  #refusedHandler: ((peer: NodeId) => void) | null = null;
  #open = false;

  constructor(
    readonly id: NodeId,
    private readonly network: MemoryNetwork,
  ) {}

  start(): Promise<void> {
    this.#open = true;
    return Promise.resolve();
  }

  send(msg: Message): void {
    if (this.#open) this.network.deliver(msg);
  }

  onMessage(handler: (msg: Message) => void): void {
    this.#handler = handler;
  }

  onPeerRefused(handler: (peer: NodeId) => void): void {
    this.#refusedHandler = handler;
  }

  /** @internal called by MemoryNetwork.refuseFrom. */
  refused(peer: NodeId): void {
    if (this.#open) this.#refusedHandler?.(peer);
  }

  /** @internal called by MemoryNetwork. */
  receive(msg: Message): void {
    if (this.#open && msg.to === this.id) this.#handler?.(msg);
  }

  close(): Promise<void> {
    this.#open = false;
    return Promise.resolve();
  }
}

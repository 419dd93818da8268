/**
 * The first frame on every TCP connection, in both directions: who is speaking, to whom, in which
 * cluster. A node refuses peers of another cluster or unknown ids (misconfigured addresses must
 * not mix two clusters' logs).
 */
import type { NodeId } from '../core/types.js';

/** Version of the frame protocol; bumped on incompatible changes. */
export const PROTOCOL_VERSION = 1;

/** Handshake frame. The dialer sends it first; the acceptor answers with its own. */
export interface Hello {
  readonly hello: typeof PROTOCOL_VERSION;
  readonly clusterId: string;
  readonly from: NodeId;
  readonly to: NodeId;
}

/** Validates a decoded handshake; returns null when malformed. */
export function parseHello(v: unknown): Hello | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (o.hello !== PROTOCOL_VERSION) return null;
  if (typeof o.clusterId !== 'string' || typeof o.from !== 'string' || typeof o.to !== 'string')
    return null;
  return { hello: PROTOCOL_VERSION, clusterId: o.clusterId, from: o.from, to: o.to };
}

/**
 * Why `hello` is unacceptable for a node `self` of `clusterId` expecting one of `fromAllowed`,
 * or null when it is fine.
 */
export function helloMismatch(
  hello: Hello,
  clusterId: string,
  self: NodeId,
  fromAllowed: ReadonlySet<NodeId>,
): string | null {
  if (hello.clusterId !== clusterId)
    return `cluster mismatch: peer says "${hello.clusterId}", we are "${clusterId}"`;
  if (hello.to !== self) return `node mismatch: peer wants "${hello.to}", we are "${self}"`;
  if (!fromAllowed.has(hello.from)) return `unknown peer "${hello.from}"`;
  return null;
}

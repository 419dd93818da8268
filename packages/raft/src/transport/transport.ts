/**
 * Transport: how Raft messages reach peers (hashicorp/raft's Transport, reduced to what a
 * Ready-driven core needs).
 */
import type { Message, NodeId } from '../core/types.js';
import type { PeerInfo } from '../api.js';

/**
 * Moves Raft messages between nodes. Contract:
 * - `send(msg)` is fire-and-forget: never throws for network reasons, never blocks, may drop
 *   (Raft retransmits). Messages to one peer are delivered in send order or not at all.
 * - `onMessage(handler)` registers the single receiver; it is called asynchronously (never inside
 *   `send`), only with validated messages addressed to this node.
 * - `start()` begins accepting; `close()` stops everything and is idempotent.
 * - `setPeers(peers)` (optional): the membership changed; reach exactly these peers from now on.
 * - `onPeerRefused(handler)` (optional): registers the single receiver of "peer X refused a
 *   connection" — a dial answered by ECONNREFUSED only (nothing listens on X's port: its process is
 *   not running), never a timeout, an unreachable network, a TLS or a handshake failure. Called
 *   asynchronously, once per refused dial. RaftNode feeds it to RaftCore.peerRefused.
 */
export interface Transport {
  readonly id: NodeId;
  start(): Promise<void>;
  send(msg: Message): void;
  onMessage(handler: (msg: Message) => void): void;
  close(): Promise<void>;
  setPeers?(peers: readonly PeerInfo[]): void;
  onPeerRefused?(handler: (peer: NodeId) => void): void;
}

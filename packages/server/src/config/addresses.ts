/**
 * Parsers of the address settings: `host:port` and the `--peers` list
 * `id=raftHost:port@httpHost:port,...`. Both throw SettingValueError saying what is wrong.
 */
import { isIPv6 } from 'node:net';
import { SettingValueError } from './setting.js';
import { NODE_ID_RULE } from '@tenure/coord-state';

/** One cluster member as given by `--peers id=raftHost:port@httpHost:port`. */
export interface PeerConfig {
  readonly id: string;
  /** `host:port` of the member's Raft (peer) listener. */
  readonly raftAddress: string;
  /** `host:port` of the member's HTTP listener (used for forwarding and /v1/cluster). */
  readonly httpAddress: string;
}

/** Node ids, from the one rule the state machine and the HTTP schemas also use (NODE_ID_RULE). */
export const NODE_ID_RE = new RegExp(NODE_ID_RULE.pattern, 'u');

/**
 * `host:port` (host a name, IPv4 or [IPv6], including IPv4-mapped [::ffff:127.0.0.1]; port
 * 0..65535) split into its parts; `host` is what a socket takes (an IPv6 address without brackets).
 */
export function hostPort(text: string): { host: string; port: number } {
  const m = /^([A-Za-z0-9.-]+|\[([0-9a-fA-F:.]+)\]):(\d{1,5})$/.exec(text);
  if (!m) throw new SettingValueError(`"${text}" is not host:port`);
  if (m[2] !== undefined && !isIPv6(m[2]))
    throw new SettingValueError(`"${text}": [${m[2]}] is not an IPv6 address`);
  const port = Number(m[3]);
  if (port > 65535) throw new SettingValueError(`port ${port} is outside 0..65535`);
  return { host: m[2] ?? m[1]!, port };
}

/** `text` when it is `host:port`. */
export function hostPortText(text: string): string {
  hostPort(text);
  return text;
}

/** Parse the `--peers` list: syntax, node ids, unique ids, at least one member. */
export function peersList(text: string): PeerConfig[] {
  const peers: PeerConfig[] = [];
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  for (const part of parts) {
    const m = /^([^=]+)=([^@]+)@(.+)$/.exec(part);
    if (!m) throw new SettingValueError(`"${part}" is not id=raftHost:port@httpHost:port`);
    const id = m[1]!;
    if (!NODE_ID_RE.test(id))
      throw new SettingValueError(`node id "${id}" must match ${NODE_ID_RE.source}`);
    hostPort(m[2]!);
    hostPort(m[3]!);
    if (peers.some((p) => p.id === id))
      throw new SettingValueError(`node id "${id}" appears twice`);
    peers.push({ id, raftAddress: m[2]!, httpAddress: m[3]! });
  }
  if (peers.length === 0) throw new SettingValueError('at least one member is required');
  return peers;
}

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
  const m = /^([A-Za-z0-9.-]+|\[([^\]]*)\]):(\d{1,5})$/.exec(text);
  if (!m) throw new SettingValueError(`"${text}" is not host:port${whyNotHostPort(text)}`);
  if (m[2] !== undefined && !isIPv6(m[2]))
    throw new SettingValueError(`"${text}": [${m[2]}] is not an IPv6 address`);
  const port = Number(m[3]);
  if (port > 65535) throw new SettingValueError(`port ${port} is outside 0..65535`);
  return { host: m[2] ?? m[1]!, port };
}

/** What is wrong with a `text` that is not host:port, as a suffix of the message ('' if unclear). */
function whyNotHostPort(text: string): string {
  if (text.startsWith('[') && !text.includes(']')) return ': the [ of an IPv6 host is not closed';
  if (/^\[[^\]]*\]$/.test(text) || !/:\d+$/.test(text)) return ': the :port is missing';
  if (!text.startsWith('[') && text.indexOf(':') !== text.lastIndexOf(':'))
    return ': an IPv6 host goes in brackets, e.g. [::1]:7001';
  return '';
}

/**
 * `ip` in one canonical text, so that two spellings of an address compare equal: an IPv6 address
 * in its shortest lowercase form (`0:0:0:0:0:0:0:1` → `::1`, as a URL writes it), an IPv4-mapped
 * one (`::ffff:127.0.0.1`, `::ffff:7f00:1`) as its IPv4 address; anything else (a name, IPv4)
 * lowercased.
 */
export function canonicalIp(ip: string): string {
  if (!isIPv6(ip)) return ip.toLowerCase();
  let text: string;
  try {
    text = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip.toLowerCase(); // a zone id (fe80::1%eth0) has no URL form
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(text);
  if (mapped === null) return text;
  const hi = parseInt(mapped[1]!, 16);
  const lo = parseInt(mapped[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * A valid `host:port` written one way (canonicalIp host, port): equal keys are one listener
 * without asking DNS. Names are not resolved (`localhost` and `127.0.0.1` keep different keys).
 */
export function addressKey(text: string): string {
  const { host, port } = hostPort(text);
  return `${canonicalIp(host)}:${port}`;
}

/** `text` when it is `host:port`. */
export function hostPortText(text: string): string {
  hostPort(text);
  return text;
}

/**
 * Parse the `--peers` list: syntax, node ids, unique ids, every Raft and HTTP address its own (as
 * written, IP spellings aside: addressKey), at least one member.
 */
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
    for (const address of [m[2]!, m[3]!]) {
      const taken = peers.find((p) =>
        [p.raftAddress, p.httpAddress].some((a) => addressKey(a) === addressKey(address)),
      );
      if (taken !== undefined)
        throw new SettingValueError(
          `${id}'s address ${address} is ${taken.id}'s too: every listener needs its own address`,
        );
    }
    if (addressKey(m[2]!) === addressKey(m[3]!))
      throw new SettingValueError(
        `${id}'s Raft and HTTP addresses are one listener (${m[2]!}): give each its own port`,
      );
    peers.push({ id, raftAddress: m[2]!, httpAddress: m[3]! });
  }
  if (peers.length === 0) throw new SettingValueError('at least one member is required');
  return peers;
}

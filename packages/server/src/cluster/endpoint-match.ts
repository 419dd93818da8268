/**
 * Whether two `host:port` addresses name one listener (docs/operations.md "Membership changes":
 * two members must never share an address). Equal text does; so do the same port and a common IP
 * address once both hosts are resolved, so `localhost:7001` and `127.0.0.1:7001` match. A host that
 * does not resolve within RESOLVE_MS compares by its text only: a name not in DNS yet (a pod that
 * has not started) is not a reason to refuse.
 */
import { lookup } from 'node:dns/promises';
import { hostPort } from '../config/addresses.js';

/** How long one host's resolution may take before it counts as unresolved (ms). */
export const RESOLVE_MS = 2_000;

/** Resolves a host (no brackets) to its IP addresses; rejects or returns [] when it cannot. */
export type Resolver = (host: string) => Promise<readonly string[]>;

/** The system resolver (getaddrinfo, as a connect would use), bounded by RESOLVE_MS. */
export const systemResolver: Resolver = async (host) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<readonly string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), RESOLVE_MS);
  });
  try {
    const found = lookup(host, { all: true }).then((list) => list.map((a) => a.address));
    return await Promise.race([found, timeout]);
  } finally {
    clearTimeout(timer);
  }
};

/** A resolver that remembers each host's answer (one add request resolves each host once). */
export function cachedResolver(resolve: Resolver = systemResolver): Resolver {
  const seen = new Map<string, Promise<readonly string[]>>();
  return (host) => {
    let answer = seen.get(host);
    if (answer === undefined) {
      answer = resolve(host).catch((): readonly string[] => []);
      seen.set(host, answer);
    }
    return answer;
  };
}

/** `ip` with an IPv4-mapped IPv6 form (`::ffff:127.0.0.1`, `::ffff:7f00:1`) as its IPv4 address. */
export function unmappedIp(ip: string): string {
  const m = /^(?:0{0,4}:){0,5}:?ffff:(.+)$/i.exec(ip);
  if (m === null) return ip.toLowerCase();
  const tail = m[1]!;
  if (/^\d+\.\d+\.\d+\.\d+$/.test(tail)) return tail;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(tail);
  if (hex === null) return ip.toLowerCase();
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** True when `a` and `b` (both valid `host:port`) name the same listener, as described above. */
export async function sameEndpoint(a: string, b: string, resolve: Resolver): Promise<boolean> {
  if (a.toLowerCase() === b.toLowerCase()) return true;
  const x = hostPort(a);
  const y = hostPort(b);
  if (x.port !== y.port) return false;
  const unbracket = (host: string) => host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const [ipsA, ipsB] = await Promise.all([
    resolve(unbracket(x.host)).catch((): readonly string[] => []),
    resolve(unbracket(y.host)).catch((): readonly string[] => []),
  ]);
  const setB = new Set(ipsB.map(unmappedIp));
  return ipsA.some((ip) => setB.has(unmappedIp(ip)));
}

/**
 * Whether two `host:port` addresses name one listener (docs/operations.md "Membership changes":
 * two members must never share an address). Equal text does (IP spellings aside: addressKey); so
 * do the same port and a common IP
 * address once both hosts are resolved, so `localhost:7001` and `127.0.0.1:7001` match. A host that
 * does not resolve within RESOLVE_MS compares by its text only: a name not in DNS yet (a pod that
 * has not started) is not a reason to refuse.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { addressKey, canonicalIp, hostPort } from '../config/addresses.js';

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

/** The IPs `host` stands for: an IP literal itself, a name what `resolve` answers ([] on failure). */
function addressesOf(host: string, resolve: Resolver): Promise<readonly string[]> {
  if (isIP(host) !== 0) return Promise.resolve([host]);
  return resolve(host).catch((): readonly string[] => []);
}

/** True when `a` and `b` (both valid `host:port`) name the same listener, as described above. */
export async function sameEndpoint(a: string, b: string, resolve: Resolver): Promise<boolean> {
  if (addressKey(a) === addressKey(b)) return true; // equal text, IP spellings aside
  const x = hostPort(a);
  const y = hostPort(b);
  if (x.port !== y.port) return false;
  const [ipsA, ipsB] = await Promise.all([
    addressesOf(x.host, resolve),
    addressesOf(y.host, resolve),
  ]);
  const setB = new Set(ipsB.map(canonicalIp));
  return ipsA.some((ip) => setB.has(canonicalIp(ip)));
}

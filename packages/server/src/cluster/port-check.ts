/**
 * Start-up checks of the launcher's ports, before any node starts: the HTTP and Raft ranges must
 * not overlap, and each port a node will listen on must be free now (a port another process holds
 * would otherwise let that process answer for our node). Each problem is one sentence.
 */
import { createServer } from 'node:net';
import type { LocalNodeSpec } from './local-nodes.js';

/** `a-b` or `a` for a range of ports. */
function range(first: number, count: number): string {
  return count === 1 ? String(first) : `${first}-${first + count - 1}`;
}

/** Problems of the layout itself: overlapping ranges, ports beyond 65535. */
export function layoutProblems(o: {
  readonly httpPort: number;
  readonly raftPort: number;
  readonly nodes: number;
}): string[] {
  const problems: string[] = [];
  const http = range(o.httpPort, o.nodes);
  const raft = range(o.raftPort, o.nodes);
  if (o.httpPort + o.nodes - 1 > 65535) problems.push(`HTTP ports ${http} go beyond 65535`);
  if (o.raftPort + o.nodes - 1 > 65535) problems.push(`Raft ports ${raft} go beyond 65535`);
  if (o.httpPort < o.raftPort + o.nodes && o.raftPort < o.httpPort + o.nodes)
    problems.push(`HTTP ports ${http} and Raft ports ${raft} overlap`);
  return problems;
}

/** Whether `host:port` can be listened on right now (listen, then close at once). */
export function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * One sentence per address of `nodes` that is already in use. Each distinct address is probed once
 * and one at a time, so overlapping ranges (reported by layoutProblems) never make a free port look
 * taken by our own probe.
 */
export async function takenPorts(nodes: readonly LocalNodeSpec[]): Promise<string[]> {
  const checks = nodes.flatMap((n) => [
    { address: n.httpAddress, what: `${n.id} HTTP` },
    { address: n.raftAddress, what: `${n.id} Raft` },
  ]);
  const free = new Map<string, boolean>();
  for (const { address } of checks) {
    if (free.has(address)) continue;
    const i = address.lastIndexOf(':');
    free.set(address, await portFree(address.slice(0, i), Number(address.slice(i + 1))));
  }
  return checks
    .filter((c) => free.get(c.address) === false)
    .map((c) => `${c.address} (${c.what}) is already in use`);
}

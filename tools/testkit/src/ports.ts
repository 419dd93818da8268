/**
 * Free TCP ports for tests and benches (never fixed ports): the OS picks them.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';

/**
 * `count` distinct TCP ports free on 127.0.0.1 right now: each is bound with port 0 (the OS picks),
 * all are held together so they differ, then all are released. A port may be taken by another
 * process before the caller binds it; callers that can bind port 0 themselves should. A port freed
 * this way is also a "closed port" (nothing listens) for tests of refused connections.
 * Rejects with the socket error when the OS refuses to bind.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: count }, () => listenOnAnyPort()));
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** One free TCP port on 127.0.0.1 (see {@link freePorts}). */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

function listenOnAnyPort(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

// Proves the launcher's port check reports only ports another process really holds: overlapping
// ranges (a port listed for two nodes) are probed once, so a free port never looks taken.
import t from 'tap';
import { createServer, type Server } from 'node:net';
import { takenPorts } from '../src/cluster/port-check.js';

function listen(port = 0): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port }, () => resolve(server));
  });
}

function portOf(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function freePort(): Promise<number> {
  const server = await listen();
  const port = portOf(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

t.test('a port listed twice (overlapping ranges) is not reported as taken', async (t) => {
  const [a, b, c] = [await freePort(), await freePort(), await freePort()];
  const nodes = [
    { id: 'n1', httpAddress: `127.0.0.1:${a}`, raftAddress: `127.0.0.1:${b}`, dataDir: 'x' },
    { id: 'n2', httpAddress: `127.0.0.1:${b}`, raftAddress: `127.0.0.1:${c}`, dataDir: 'y' },
  ];
  t.same(await takenPorts(nodes), []);
});

t.test('a port another process holds is reported for every node that wants it', async (t) => {
  const holder = await listen();
  t.teardown(() => holder.close());
  const taken = portOf(holder);
  const free = await freePort();
  const nodes = [
    { id: 'n1', httpAddress: `127.0.0.1:${taken}`, raftAddress: `127.0.0.1:${free}`, dataDir: 'x' },
  ];
  t.same(await takenPorts(nodes), [`127.0.0.1:${taken} (n1 HTTP) is already in use`]);
});

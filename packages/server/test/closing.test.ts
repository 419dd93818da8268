// Proves a stopping node's answer to requests that arrive during its drain (docs/api.md, 503
// no_leader): in the error shape with `Retry-After`, not Fastify's own 503 body, while the request
// already running finishes with its own answer.
import { once } from 'node:events';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { harness } from './fixtures/harness.js';

/** One HTTP/1.1 request with a JSON body, as raw text for a pipelined write. */
const raw = (method: 'POST' | 'PUT', path: string, body: unknown): string => {
  const text = JSON.stringify(body);
  return (
    `${method} ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
  );
};

t.test('a request pipelined behind a running one during close gets 503 no_leader', async (t) => {
  const h = await harness();
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const held = await h.app.inject({
    method: 'POST',
    url: '/v1/leases/a/acquire',
    payload: { holder: 'A', ttlMs: 60_000 },
  });
  t.equal(held.statusCode, 200);
  const socket = net.connect((h.app.server.address() as AddressInfo).port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  // The first waits for the held lease (its own waitMs ends it); the second is parsed only then.
  socket.write(
    raw('POST', '/v1/leases/a/acquire', { holder: 'B', ttlMs: 60_000, waitMs: 300 }) +
      raw('PUT', '/v1/kv/k', { value: 'v' }),
  );
  // Close once the first request is running (parsed and routed; it waits for the lease).
  await once(h.app.server, 'request');
  const closed = h.close();
  await once(socket, 'end');
  await closed;
  const answers = received.split(/(?=HTTP\/1\.1 )/);
  t.equal(answers.length, 2, 'two answers on the connection');
  t.match(answers[0], /^HTTP\/1\.1 (200|408|409|504)/, 'the running request got its own answer');
  t.match(answers[1], /^HTTP\/1\.1 503/);
  t.match(answers[1], /retry-after: 1/i);
  t.match(answers[1], /connection: close/i);
  t.match(answers[1], /"code":"no_leader"/);
  t.match(answers[1], /this node is stopping/);
  t.equal(h.coord.getKv('k'), null, 'the refused write was not applied');
});

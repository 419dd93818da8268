// Proves the abuse bounds of docs/security.md on a real listening node (slowloris needs real
// sockets): a request that does not arrive in time ends with 408 and a closed connection (never
// a 5xx, never a hang), a body longer than its Content-Length is a 400, a long-poll longer than
// the receive timeout is not cut by it, one address cannot hold more than its connections, and
// long-polls beyond their bound get 429. Timeouts are small settings; every wait is on an event.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { HttpError } from '../src/http-error.js';
import { LongPolls } from '../src/long-polls.js';
import { harness, type Harness } from './fixtures/harness.js';

const FAST = ['--headers-timeout-ms', '300', '--receive-timeout-ms', '500'];

async function listening(args: string[]): Promise<{ h: Harness; port: number }> {
  const h = await harness(args);
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  return { h, port: (h.app.server.address() as AddressInfo).port };
}

/** One node with small timeouts, shared by the tests that only need those timeouts. */
let fast: Promise<{ h: Harness; port: number }> | null = null;
async function fastPort(): Promise<number> {
  fast ??= listening(FAST);
  return (await fast).port;
}
t.teardown(async () => {
  if (fast !== null) await (await fast).h.close();
});

/** A raw connection: everything it received once the server closed it. */
function rawConnection(port: number): { socket: net.Socket; closed: Promise<string> } {
  const socket = net.connect({ host: '127.0.0.1', port });
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => {}); // a reset is a close too
  const closed = new Promise<string>((resolve) =>
    socket.once('close', () => resolve(Buffer.concat(chunks).toString('utf8'))),
  );
  return { socket, closed };
}

/** Status codes of the HTTP answers in `text`. */
function statuses(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
}

t.test('a body shorter than its Content-Length ends with 408 and a close', async (t) => {
  const port = await fastPort();
  const c = rawConnection(port);
  c.socket.write(
    'PUT /v1/kv/a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      'Content-Length: 100\r\n\r\n{"value":',
  );
  const answer = await c.closed;
  t.same(statuses(answer), [408]);
  t.match(answer, /"code":"timeout"/);
});

t.test('headers sent a byte at a time end with 408 and a close', async (t) => {
  const port = await fastPort();
  const c = rawConnection(port);
  const text = 'GET /v1/leases/a HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'z'.repeat(10_000);
  let i = 0;
  const drip = setInterval(() => {
    if (!c.socket.destroyed && i < text.length) c.socket.write(text[i++]!);
  }, 20);
  t.teardown(() => clearInterval(drip));
  const answer = await c.closed;
  clearInterval(drip);
  t.same(statuses(answer), [408]);
  t.ok(i < text.length, 'closed before the headers were complete');
});

t.test('a connection that never sends a byte is closed', async (t) => {
  const port = await fastPort();
  const answer = await rawConnection(port).closed;
  t.ok(
    statuses(answer).every((s) => s === 408),
    `answer: ${answer.slice(0, 40)}`,
  );
});

t.test('a body longer than its Content-Length: 400s, never a 5xx', async (t) => {
  const port = await fastPort();
  const c = rawConnection(port);
  const body = '{"value":1}';
  c.socket.write(
    'PUT /v1/kv/a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `Content-Length: 5\r\n\r\n${body}`,
  );
  const answer = await c.closed;
  const codes = statuses(answer);
  t.ok(codes.length >= 1, answer);
  t.ok(
    codes.every((s) => s === 400),
    `only 400s: ${codes.join(',')}`,
  );
  t.match(answer, /longer than its Content-Length/, 'the answer says what went wrong');
});

t.test('a long-poll outlasts the receive timeout', async (t) => {
  const port = await fastPort();
  const r = await fetch(`http://127.0.0.1:${port}/v1/leases/a/watch?timeoutMs=1500`);
  t.equal(r.status, 200);
  t.match(await r.json(), { changed: false });
});

t.test('connections over the per-address bound are closed at arrival', async (t) => {
  const { h, port } = await listening(['--connections-per-address-max', '2']);
  t.teardown(h.close);
  const held = [rawConnection(port), rawConnection(port)];
  const extra = rawConnection(port);
  t.equal(await extra.closed, '', 'closed without an answer');
  const metrics = await h.app.inject({ method: 'GET', url: '/metrics' });
  t.match(metrics.body, /tenure_http_connections_refused_total\{reason="per_address"\} 1/);
  // The two held connections still serve requests.
  for (const c of held) {
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    t.same(statuses(await c.closed), [200]);
  }
});

t.test('long-polls beyond --long-polls-max get 429 with Retry-After', async (t) => {
  const polls = new LongPolls(1);
  let release!: () => void;
  const first = polls.hold(() => new Promise<void>((resolve) => (release = resolve)));
  t.equal(polls.open, 1);
  const refused = await polls.hold(async () => 'no').catch((err: unknown) => err);
  t.ok(refused instanceof HttpError);
  t.match(refused, { code: 'resource_exhausted', headers: { 'retry-after': '1' } });
  release();
  await first;
  t.equal(await polls.hold(async () => 'yes'), 'yes', 'admitted once the first ended');
  t.equal(polls.open, 0);
});

t.test('with auth, a refused request is closed, its announced body never read', async (t) => {
  const { h, port } = await listening(['--auth']);
  t.teardown(h.close);
  const totalBytes = 256 * 1024 * 1024;
  const c = rawConnection(port);
  let closed = false;
  const answer = c.closed.then((text) => {
    closed = true;
    return text;
  });
  c.socket.write(
    'PUT /v1/kv/big HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${totalBytes}\r\n\r\n`,
  );
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  let sentBytes = 0;
  while (!closed && sentBytes < totalBytes) {
    sentBytes += chunk.length;
    if (!c.socket.write(chunk))
      await Promise.race([new Promise((r) => c.socket.once('drain', r)), c.closed]);
  }
  if (!closed) c.socket.destroy();
  const text = await answer;
  t.same(statuses(text), [401], 'answered 401');
  t.match(text, /connection: close/i, 'and closed');
  t.ok(sentBytes < totalBytes, `the body was not read to its end (${sentBytes} bytes sent)`);
});

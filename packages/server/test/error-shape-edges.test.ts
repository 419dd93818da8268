// Proves the error shape holds at the edges a first-time user hit: a too-long name names its
// field without echoing it; integer headers and query values are decimal digits only and a bad
// deadline reads one message; a repeated Idempotency-Key, Authorization or Content-Type, integers
// past 2^53 and invalid UTF-8 are refused rather than silently changed; gzip and UTF-16 bodies
// are 415; and what node:http itself refuses (oversized headers, a malformed Content-Length)
// still answers in the error shape.
import net from 'node:net';
import t from 'tap';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { createRootToken, harness, send } from './fixtures/harness.js';

const json = { 'content-type': 'application/json' };

t.test('a 10,000-character name names params.name and is not echoed', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  for (const [method, url, field] of [
    ['POST', `/v1/leases/${'a'.repeat(10_000)}/acquire`, 'params.name'],
    ['GET', `/v1/elections/${'g'.repeat(10_000)}`, 'params.group'],
    ['PUT', `/v1/kv/${'k'.repeat(10_000)}`, 'params.key'],
  ] as const) {
    const r = await h.app.inject({ method, url, headers: json, payload: '{}' });
    t.equal(r.statusCode, 400);
    t.match(r.json(), { error: { code: 'invalid_argument', field } });
    t.ok(r.body.length < 400, `short answer (${r.body.length} bytes)`);
  }
  const unknown = await h.app.inject({ method: 'GET', url: `/v2/${'x'.repeat(10_000)}` });
  t.equal(unknown.statusCode, 404);
  t.ok(unknown.body.length < 400, 'an unknown route is not echoed whole either');
});

t.test('integer headers and query values: digits only, one message', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const timeout = async (v: string) =>
    (
      await h.app.inject({
        method: 'GET',
        url: '/v1/leases/a',
        headers: { 'request-timeout-ms': v },
      })
    ).json();
  const zero = await timeout('0');
  t.match(zero.error.message, /whole number of milliseconds, at least 1/);
  for (const v of ['1e3', '0x10', '1.5', '-5', '1000abc'])
    t.match(
      await timeout(v),
      { error: { code: 'invalid_argument', field: 'header Request-Timeout-Ms' } },
      v,
    );
  const q = await h.app.inject({ method: 'GET', url: '/v1/leases?limit=1e2' });
  t.match(q.json(), { error: { field: 'query.limit', message: 'query.limit must be an integer' } });
  t.equal((await h.app.inject({ method: 'GET', url: '/v1/leases?limit=10' })).statusCode, 200);
});

t.test('two Idempotency-Key headers are refused, not joined', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (h.app.server.address() as AddressInfo).port;
  // Over a real socket: node:http joins the two into "a, b", which must not become one key.
  const r = await raw(
    port,
    'PUT /v1/kv/k HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n' +
      'Idempotency-Key: a\r\nIdempotency-Key: b\r\nContent-Length: 11\r\n\r\n{"value":1}',
  );
  t.match(r, /^HTTP\/1\.1 400 /);
  t.match(r, /"field":"header Idempotency-Key"/);
  t.match(r, /given once/);
  const one = await send(h.app, 'PUT', '/v1/kv/k', { value: 1 }, { 'idempotency-key': 'a, b' });
  t.equal(one.statusCode, 200, 'one key with a comma is fine');
});

t.test('two Authorization or Content-Type headers are refused, not first-wins', async (t) => {
  const h = await harness(['--auth']);
  t.teardown(h.close);
  const root = 'root-secret-for-tests-0123456789';
  await createRootToken(h, root);
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (h.app.server.address() as AddressInfo).port;
  const put = (headers: string) =>
    raw(
      port,
      `PUT /v1/kv/k HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${headers}` +
        'Content-Length: 11\r\n\r\n{"value":1}',
    );
  // node:http keeps the first of each: the first token (valid) would win over the second.
  const twoTokens = await put(
    `Authorization: Bearer ${root}\r\nAuthorization: Bearer other\r\nContent-Type: application/json\r\n`,
  );
  t.match(twoTokens, /^HTTP\/1\.1 400 /);
  t.match(twoTokens, /"field":"header Authorization"/);
  t.match(twoTokens, /header Authorization must be given once/);
  const twoTypes = await put(
    `Authorization: Bearer ${root}\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\n`,
  );
  t.match(twoTypes, /^HTTP\/1\.1 400 /);
  t.match(twoTypes, /"field":"header Content-Type"/);
  const one = await put(`Authorization: Bearer ${root}\r\nContent-Type: application/json\r\n`);
  t.match(one, /^HTTP\/1\.1 200 /, 'one of each is fine');
});

t.test('integers past 2^53 are refused naming the field; safe ones pass', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const put = (payload: string) =>
    h.app.inject({ method: 'PUT', url: '/v1/kv/k', headers: json, payload });
  const r = await put('{"value":{"list":[1,12345678901234567890]}}');
  t.equal(r.statusCode, 400);
  t.match(r.json(), { error: { field: 'body.value.list[1]', message: /2\^53/ } });
  t.equal((await put('{"value":9007199254740991}')).statusCode, 200, '2^53 - 1 is kept');
  t.equal((await put('{"value":"12345678901234567890"}')).statusCode, 200, 'as a string');
  t.equal((await put('{"value":0.12345678901234567}')).statusCode, 200, 'a long fraction');
  const token = await send(h.app, 'POST', '/v1/leases/a/renew', {});
  t.equal(token.statusCode, 400);
});

t.test('bodies that would be changed silently are refused', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const badUtf8 = Buffer.concat([
    Buffer.from('{"value":"a'),
    Buffer.from([0xff]),
    Buffer.from('"}'),
  ]);
  const r = await h.app.inject({ method: 'PUT', url: '/v1/kv/k', headers: json, payload: badUtf8 });
  t.match(r.json(), { error: { code: 'invalid_argument', field: 'body', message: /UTF-8/ } });
  const utf16 = await h.app.inject({
    method: 'PUT',
    url: '/v1/kv/k',
    headers: { 'content-type': 'application/json; charset=utf-16' },
    payload: '{"value":1}',
  });
  t.equal(utf16.statusCode, 415);
  const gz = await h.app.inject({
    method: 'PUT',
    url: '/v1/kv/k',
    headers: { ...json, 'content-encoding': 'gzip' },
    payload: gzipSync('{"value":1}'),
  });
  t.equal(gz.statusCode, 415);
  t.equal(gz.json().error.code, 'unsupported_media_type');
  const bad = await h.app.inject({
    method: 'PUT',
    url: '/v1/kv/k',
    headers: json,
    payload: '{"value":',
  });
  t.equal(bad.json().error.message.match(/not valid JSON/g)?.length, 1, 'said once');
});

/** Sends raw bytes to the app's listening port and returns the whole answer. */
async function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = net.connect({ host: '127.0.0.1', port }, () => s.write(text));
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

t.test('node:http refusals answer in the error shape', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (h.app.server.address() as AddressInfo).port;
  const big = await raw(
    port,
    `GET /v1/leases/a HTTP/1.1\r\nHost: x\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`,
  );
  t.match(big, /^HTTP\/1\.1 431 /);
  const bigBody = JSON.parse(big.slice(big.indexOf('\r\n\r\n') + 4)) as unknown;
  t.same(bigBody, {
    error: {
      code: 'invalid_argument',
      message: 'headers are over the size limit',
      field: 'headers',
    },
  });
  // 2,000 short headers: node:http counts only names and values (~16 KB), the head is ~23 KB.
  const many = Array.from({ length: 2000 }, (_, i) => `X-H${i}: v\r\n`).join('');
  const manyAnswer = await raw(port, `GET /v1/leases/a HTTP/1.1\r\nHost: x\r\n${many}\r\n`);
  t.match(manyAnswer, /^HTTP\/1\.1 431 /, 'many short headers count whole');
  t.same(JSON.parse(manyAnswer.slice(manyAnswer.indexOf('\r\n\r\n') + 4)), bigBody);
  const fine = await raw(
    port,
    `GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${many.split('\r\n').slice(0, 800).join('\r\n')}\r\n\r\n`,
  );
  t.match(fine, /^HTTP\/1\.1 200 /, 'a head under the limit is served');
  const cl = await raw(
    port,
    'PUT /v1/kv/k HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: abc\r\n\r\n{}',
  );
  t.match(cl, /^HTTP\/1\.1 400 /);
  t.match(cl, /"field":"header Content-Length"/);
});

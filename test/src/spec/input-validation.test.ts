// Proves docs/api.md input rules (strict JSON types, unknown fields, 415/400/413, names of up to 200 bytes and %2F in every route, header limits) through a follower of a real cluster, including lone-surrogate strings, __proto__ keys and query strings on every route.
import t from 'tap';
import { LocalCluster } from '../support/cluster.js';
import { connect } from 'node:net';
import { isError, raw, uniq } from './helpers.js';

/**
 * Announces a PUT body of `contentLength` bytes but sends only its first bytes, then reads the
 * answer: the server answers 413 from the announced length, before any body over the limit is read.
 * Writing the whole body would race the server's close (EPIPE before the answer is read).
 */
function putOverLimit(
  url: string,
  contentLength: number,
): Promise<{ status: number; body: unknown }> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    const done = (): boolean => {
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const length = /content-length: *(\d+)/i.exec(text.slice(0, end));
      if (length === null || text.length < end + 4 + Number(length[1])) return false;
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: JSON.parse(text.slice(end + 4, end + 4 + Number(length[1]))) });
      socket.destroy();
      return true;
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      done();
    });
    socket.on('error', (err) => {
      if (!done()) reject(err);
    });
    socket.on('close', () => {
      if (!done()) reject(new Error(`connection closed before a whole answer: ${text}`));
    });
    socket.write(
      `PUT ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${contentLength}\r\nConnection: close\r\n\r\n{"value":"xxxx`,
    );
  });
}

t.test('docs/api.md input validation', async (t) => {
  const c = await LocalCluster.start();
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  const f = c.nodes.map((n) => n.id).find((id) => id !== leader)!;

  t.test('strict JSON types and unknown fields: 400 naming the field', async (t) => {
    const cases: [string, string, unknown, string][] = [
      ['/v1/leases/v1/acquire', 'POST', { holder: 'a', ttlMs: '1000' }, 'ttlMs'],
      ['/v1/leases/v1/acquire', 'POST', { holder: 5, ttlMs: 1000 }, 'holder'],
      ['/v1/leases/v1/acquire', 'POST', { holder: 'a', ttlMs: 1000.5 }, 'ttlMs'],
      ['/v1/leases/v1/acquire', 'POST', { holder: 'a', ttlMs: true }, 'ttlMs'],
      ['/v1/leases/v1/acquire', 'POST', { holder: 'a', ttlMs: 1000, waitMs: null }, 'waitMs'],
      ['/v1/leases/v1/acquire', 'POST', { holder: 'a', ttlMs: 1000, extra: 1 }, 'extra'],
      ['/v1/leases/v1/acquire', 'POST', { holder: 'a', ttlMs: 99 }, 'ttlMs'],
      ['/v1/leases/v1/acquire', 'POST', { holder: 'a', ttlMs: 3600001 }, 'ttlMs'],
      ['/v1/leases/v1/acquire', 'POST', { holder: 'a', ttlMs: 1000, waitMs: 60001 }, 'waitMs'],
      ['/v1/leases/v1/acquire', 'POST', { holder: '', ttlMs: 1000 }, 'holder'],
      ['/v1/leases/v1/acquire', 'POST', { holder: 'h'.repeat(201), ttlMs: 1000 }, 'holder'],
      ['/v1/leases/v1/acquire', 'POST', { holder: 'a\u0001b', ttlMs: 1000 }, 'holder'],
      ['/v1/leases/v1/renew', 'POST', { holder: 'a', fencingToken: '1' }, 'fencingToken'],
      ['/v1/leases/v1/release', 'POST', { holder: 'a', fencingToken: 1, x: 1 }, 'x'],
      ['/v1/elections/g1/campaign', 'POST', { candidate: 'c', ttlMs: 1000, waitMs: '0' }, 'waitMs'],
      ['/v1/elections/g1/campaign', 'POST', { candidate: 7, ttlMs: 1000 }, 'candidate'],
      ['/v1/elections/g1/resign', 'POST', { candidate: 'c', extra: true }, 'extra'],
      ['/v1/fence/check', 'POST', { lease: 'x', fencingToken: '5' }, 'fencingToken'],
      ['/v1/kv/k1', 'PUT', { value: 1, ifRevision: '0' }, 'ifRevision'],
      ['/v1/kv/k1', 'PUT', { value: 1, fence: { lease: 'x', fencingToken: 1, extra: 1 } }, 'extra'],
      ['/v1/kv/k1', 'PUT', { value: 1, bogus: 1 }, 'bogus'],
    ];
    for (const [path, method, body, field] of cases) {
      const r = await raw(c, f, path, { method, json: body });
      t.equal(r.status, 400, `${method} ${path} ${JSON.stringify(body).slice(0, 80)}`);
      t.ok(isError(r.body, 'invalid_argument'), 'invalid_argument');
      t.match(r.body?.error?.message, field, `message names ${field}`);
    }
  });

  t.test('bodies that are not JSON, and content types', async (t) => {
    const path = '/v1/leases/ct/acquire';
    const good = '{"holder":"a","ttlMs":1000}';
    for (const bad of ['not json', '{"holder":"a"', '', '{"holder":"a","ttlMs":1000} trailing']) {
      const r = await raw(c, f, path, {
        method: 'POST',
        rawBody: bad,
        headers: { 'content-type': 'application/json' },
      });
      t.equal(r.status, 400, `body ${JSON.stringify(bad)}`);
      t.ok(isError(r.body, 'invalid_argument'));
    }
    for (const ct of [
      undefined,
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/merge-patch+json',
    ]) {
      const r = await raw(c, f, path, {
        method: 'POST',
        rawBody: good,
        headers: ct === undefined ? {} : { 'content-type': ct },
      });
      t.ok(r.status === 415 || r.status === 400, `content-type ${ct}: ${r.status}`);
      t.ok(
        isError(r.body, 'unsupported_media_type') || isError(r.body, 'invalid_argument'),
        'in the error shape',
      );
    }
    const d = await raw(c, f, '/v1/kv/ct', {
      method: 'DELETE',
      rawBody: '{}',
      headers: { 'content-type': 'text/plain' },
    });
    t.equal(d.status, 415, 'DELETE with a non-JSON body type');
    const ok = await raw(c, f, path, {
      method: 'POST',
      rawBody: good,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    t.equal(ok.status, 200, 'application/json with charset is accepted');
  });

  t.test(
    'names up to 200 bytes work in every route; %2F and other characters are 400',
    async (t) => {
      const n = 'n'.repeat(199) + 'x';
      const checks: [string, string, unknown][] = [
        [`/v1/leases/${n}/acquire`, 'POST', { holder: 'a', ttlMs: 30000 }],
        [`/v1/leases/${n}`, 'GET', undefined],
        [`/v1/leases/${n}/watch?timeoutMs=0`, 'GET', undefined],
        [`/v1/elections/${n}/campaign`, 'POST', { candidate: 'c', ttlMs: 30000 }],
        [`/v1/elections/${n}`, 'GET', undefined],
        [`/v1/elections/${n}/observe?timeoutMs=0`, 'GET', undefined],
        [`/v1/kv/${n}`, 'PUT', { value: 1 }],
        [`/v1/kv/${n}`, 'GET', undefined],
      ];
      for (const [path, method, body] of checks) {
        const r = await raw(c, f, path, body === undefined ? { method } : { method, json: body });
        t.equal(r.status, 200, `200-byte name: ${method} ${path.replace(n, '<200>')}`);
      }
      const g = await raw(c, f, `/v1/leases/${n}`);
      t.equal(g.body?.name, n);
      const renew = await raw(c, f, `/v1/leases/${n}/renew`, {
        json: { holder: 'a', fencingToken: g.body?.fencingToken },
      });
      t.equal(renew.status, 200, '200-byte name: renew');
      const rel = await raw(c, f, `/v1/leases/${n}/release`, {
        json: { holder: 'a', fencingToken: g.body?.fencingToken },
      });
      t.equal(rel.status, 200, '200-byte name: release');

      const badNames = ['a%2Fb', 'a%20b', '_ab', '.ab', '%C3%A9', 'n'.repeat(201)];
      const routes: [string, string, unknown][] = [
        ['/v1/leases/{}/acquire', 'POST', { holder: 'a', ttlMs: 1000 }],
        ['/v1/leases/{}/renew', 'POST', { holder: 'a', fencingToken: 1 }],
        ['/v1/leases/{}', 'GET', undefined],
        ['/v1/leases/{}/watch?timeoutMs=0', 'GET', undefined],
        ['/v1/elections/{}/campaign', 'POST', { candidate: 'c', ttlMs: 1000 }],
        ['/v1/elections/{}', 'GET', undefined],
        ['/v1/elections/{}/observe?timeoutMs=0', 'GET', undefined],
        ['/v1/kv/{}', 'PUT', { value: 1 }],
        ['/v1/kv/{}', 'GET', undefined],
        ['/v1/kv/{}', 'DELETE', {}],
      ];
      for (const name of badNames) {
        for (const [tmpl, method, body] of routes) {
          const path = tmpl.replace('{}', name);
          const r = await raw(c, f, path, body === undefined ? { method } : { method, json: body });
          t.equal(
            r.status,
            400,
            `${method} ${tmpl} with ${name.length > 20 ? '<201 bytes>' : name}`,
          );
        }
      }
      const fc = await raw(c, f, '/v1/fence/check', { json: { lease: 'a/b', fencingToken: 1 } });
      t.equal(fc.status, 400, 'fence check with a bad lease name');
    },
  );

  t.test('413 payload_too_large; deep values; header limits', async (t) => {
    const big = await raw(c, f, `/v1/kv/${uniq('big')}`, {
      method: 'PUT',
      json: { value: 'x'.repeat(65536) },
    });
    t.equal(big.status, 413, 'KV value over 64 KiB');
    t.ok(isError(big.body, 'payload_too_large'));
    const fits = await raw(c, f, `/v1/kv/${uniq('big')}`, {
      method: 'PUT',
      json: { value: 'x'.repeat(65534) },
    });
    t.equal(fits.status, 200, 'a 64 KiB value (as JSON) fits');
    const ev = await raw(c, f, `/v1/elections/${uniq('bigv')}/campaign`, {
      json: { candidate: 'c', ttlMs: 1000, value: 'x'.repeat(65536) },
    });
    t.equal(ev.status, 413, 'election value over 64 KiB');
    // The server answers 413 from the announced length, before it reads a body over the limit.
    const huge = await putOverLimit(c.node(f).url + `/v1/kv/${uniq('huge')}`, 3_000_020);
    t.equal(huge.status, 413, 'body over the body limit');
    t.ok(isError(huge.body, 'payload_too_large'), 'in the error shape');
    const deep = await raw(c, f, `/v1/kv/${uniq('deep')}`, {
      method: 'PUT',
      rawBody: `{"value":${'['.repeat(5000)}${']'.repeat(5000)}}`,
      headers: { 'content-type': 'application/json' },
    });
    t.equal(deep.status, 400, 'a 5,000-deep value is a clean 400');
    for (const v of ['0', 'abc', '-5']) {
      const r = await raw(c, f, '/v1/leases/x', { headers: { 'request-timeout-ms': v } });
      t.equal(r.status, 400, `Request-Timeout-Ms: ${v}`);
      t.ok(isError(r.body, 'invalid_argument'));
    }
    // Above the node's maximum counts as the maximum (docs/api.md): served, not refused.
    const over = await raw(c, f, '/v1/leases/x', {
      headers: { 'request-timeout-ms': '999999999' },
    });
    t.equal(over.status, 404, 'Request-Timeout-Ms over the maximum is served (x is not held)');
    for (const q of ['timeoutMs=60001', 'timeoutMs=abc', 'afterToken=-1', 'bogus=1']) {
      const r = await raw(c, f, `/v1/leases/x/watch?${q}`);
      t.equal(r.status, 400, `watch ?${q}`);
    }
  });

  t.test('query strings are checked alike on every route', async (t) => {
    const post = await raw(c, f, `/v1/leases/${uniq('q')}/acquire?bogus=1`, {
      json: { holder: 'A', ttlMs: 1000 },
    });
    t.equal(post.status, 400, 'a POST with an unknown query parameter');
    t.equal(post.body?.error?.field, 'query.bogus');
    const rep = await raw(c, f, '/v1/leases?limit=1&limit=2');
    t.equal(rep.status, 400, 'a repeated query parameter');
    t.equal(rep.body?.error?.message, 'query.limit must be given once');
  });

  t.test('lone surrogates and __proto__ keys', async (t) => {
    // Lone UTF-16 surrogates are not printable characters (docs/api.md: holder is 1–200 printable
    // characters); MessagePack's UTF-8 would turn them into U+FFFD, so distinct holders would
    // collide: they must be refused with 400 (or at least never share a grant).
    const L = uniq('surrogate');
    const a = await raw(c, f, `/v1/leases/${L}/acquire`, {
      method: 'POST',
      rawBody: '{"holder":"x\\ud800","ttlMs":30000}',
      headers: { 'content-type': 'application/json' },
    });
    const b = await raw(c, f, `/v1/leases/${L}/acquire`, {
      method: 'POST',
      rawBody: '{"holder":"x\\ufffd\\ufffd\\ufffd","ttlMs":30000}',
      headers: { 'content-type': 'application/json' },
    });
    t.equal(a.status, 400, 'a lone-surrogate holder is refused');
    t.equal(a.body?.error?.field, 'body.holder');
    const exclusive = a.status === 400 || b.status === 409;
    t.ok(
      exclusive,
      `distinct holders "x\\ud800" (${a.status}) and "x\\ufffd\\ufffd\\ufffd" (${b.status}) must not both hold ${L}`,
    );
    const k = uniq('surrogate-kv');
    const p = await raw(c, f, `/v1/kv/${k}`, {
      method: 'PUT',
      rawBody: '{"value":"\\ud800"}',
      headers: { 'content-type': 'application/json' },
    });
    const g = await raw(c, f, `/v1/kv/${k}`);
    t.ok(
      p.status === 400 || g.body?.value === '\ud800',
      `KV value round-trips or is refused (stored ${JSON.stringify(g.body?.value)})`,
    );
    t.equal(p.body?.error?.field, 'body.value', 'the refusal names the value');
    // A JSON object with a "__proto__" key is valid JSON: refused with a message naming the key.
    const proto = await raw(c, f, `/v1/kv/${uniq('proto')}`, {
      method: 'PUT',
      rawBody: '{"value":{"__proto__":"x"}}',
      headers: { 'content-type': 'application/json' },
    });
    t.equal(proto.status, 400, 'a __proto__ key is refused');
    t.notMatch(
      String(proto.body?.error?.message),
      /not valid JSON/,
      `message does not call valid JSON invalid: ${proto.body?.error?.message}`,
    );
    t.equal(proto.body?.error?.field, 'body.value.__proto__');
  });
});

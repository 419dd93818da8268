// Proves the one-listener rule of member addresses (cluster/endpoint-match.ts): equal text, or the
// same port and a shared IP once resolved; an unresolvable host compares by text; each host is
// resolved once per request.
import t from 'tap';
import {
  cachedResolver,
  sameEndpoint,
  unmappedIp,
  type Resolver,
} from '../src/cluster/endpoint-match.js';

const table: Readonly<Record<string, readonly string[]>> = {
  localhost: ['127.0.0.1', '::1'],
  '127.0.0.1': ['127.0.0.1'],
  '::1': ['::1'],
  'tenure-0.tenure': ['10.0.0.5'],
  '10.0.0.5': ['10.0.0.5'],
  '::ffff:7f00:1': ['::ffff:7f00:1'],
};
const fake: Resolver = (host) =>
  table[host] !== undefined ? Promise.resolve(table[host]) : Promise.reject(new Error('ENOTFOUND'));

t.test('same listener: text, or the same port and a shared address', async (t) => {
  t.ok(await sameEndpoint('a:1', 'A:1', fake), 'host names are case-insensitive');
  t.ok(await sameEndpoint('localhost:7001', '127.0.0.1:7001', fake));
  t.ok(await sameEndpoint('[::1]:7001', 'localhost:7001', fake), 'bracketed IPv6');
  t.ok(await sameEndpoint('tenure-0.tenure:7001', '10.0.0.5:7001', fake));
  t.ok(await sameEndpoint('[::ffff:7f00:1]:7001', 'localhost:7001', fake), 'IPv4-mapped IPv6');
  t.notOk(await sameEndpoint('localhost:7001', '127.0.0.1:7002', fake), 'other port');
  t.notOk(await sameEndpoint('tenure-0.tenure:7001', '127.0.0.1:7001', fake), 'other address');
  t.notOk(
    await sameEndpoint('not-yet.tenure:7001', '10.0.0.5:7001', fake),
    'an unresolvable host compares by text',
  );
  t.ok(await sameEndpoint('not-yet.tenure:7001', 'not-yet.tenure:7001', fake));
});

t.test('a cached resolver asks once per host, and a failure reads as no address', async (t) => {
  const asked: string[] = [];
  const resolve = cachedResolver((host) => {
    asked.push(host);
    return fake(host);
  });
  await sameEndpoint('localhost:1', '127.0.0.1:1', resolve);
  await sameEndpoint('localhost:1', 'nowhere:1', resolve);
  await sameEndpoint('nowhere:1', '127.0.0.1:1', resolve);
  t.same(asked, ['localhost', '127.0.0.1', 'nowhere']);
  t.same(await resolve('nowhere'), []);
});

t.test('IPv4-mapped IPv6 addresses compare as their IPv4 address', async (t) => {
  t.equal(unmappedIp('::ffff:7f00:1'), '127.0.0.1');
  t.equal(unmappedIp('::FFFF:127.0.0.1'), '127.0.0.1');
  t.equal(unmappedIp('0:0:0:0:0:ffff:a00:5'), '10.0.0.5');
  t.equal(unmappedIp('::1'), '::1');
  t.equal(unmappedIp('10.0.0.5'), '10.0.0.5');
});

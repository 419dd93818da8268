// Proves the one-listener rule of member addresses (cluster/endpoint-match.ts): equal text, or the
// same port and a shared IP once resolved; an unresolvable host compares by text; each host is
// resolved once per request.
import t from 'tap';
import { cachedResolver, sameEndpoint, type Resolver } from '../src/cluster/endpoint-match.js';
import { canonicalIp } from '../src/config/addresses.js';

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
  t.ok(await sameEndpoint('[0:0:0:0:0:0:0:1]:7001', '[::1]:7001', fake), 'IPv6 written out');
  t.ok(await sameEndpoint('[0::1]:7001', 'localhost:7001', fake), 'IPv6 written out, a name');
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
  t.same(asked, ['localhost', 'nowhere'], 'an IP address is not resolved');
  t.same(await resolve('nowhere'), []);
});

t.test(
  'an IP address compares in one spelling; IPv4-mapped IPv6 as its IPv4 address',
  async (t) => {
    t.equal(canonicalIp('::ffff:7f00:1'), '127.0.0.1');
    t.equal(canonicalIp('::FFFF:127.0.0.1'), '127.0.0.1');
    t.equal(canonicalIp('0:0:0:0:0:ffff:a00:5'), '10.0.0.5');
    t.equal(canonicalIp('::1'), '::1');
    t.equal(canonicalIp('0:0:0:0:0:0:0:1'), '::1');
    t.equal(canonicalIp('0::1'), '::1');
    t.equal(canonicalIp('FD00:0:0::0A'), 'fd00::a');
    t.equal(canonicalIp('10.0.0.5'), '10.0.0.5');
  },
);

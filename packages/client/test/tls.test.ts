// Proves the client's TLS options and the CLI's TLS flags: nothing set keeps the global fetch;
// cert without key (or key without cert) and a custom fetch combined with TLS options are refused;
// certificate-trust failures get a hint naming the `ca` option; `--ca`/`--cert`/`--key` and
// TENURE_CA/TENURE_CERT/TENURE_KEY read the files (the flag wins) and an unreadable file is a usage
// error (exit 2) naming the flag or the variable.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { main, type CliIo } from '../src/cli/cli.js';
import { UsageError } from '../src/cli/exit-codes.js';
import { tlsOptionsFrom } from '../src/cli/tls-flags.js';
import { TenureClient } from '../src/index.js';
import { tlsFetch, tlsTrustHint } from '../src/tls.js';

const dir = mkdtempSync(join(tmpdir(), 'tenure-client-tls-'));
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const caFile = file('ca.pem', 'CA PEM');
const otherCaFile = file('other-ca.pem', 'OTHER CA PEM');
const certFile = file('cert.pem', 'CERT PEM');
const keyFile = file('key.pem', 'KEY PEM');

t.test('TLS options of the client', async (t) => {
  t.equal(tlsFetch({}), null, 'no TLS option: the global fetch');
  t.throws(() => tlsFetch({ cert: 'x' }), TypeError);
  t.throws(() => tlsFetch({ key: 'x' }), TypeError);
  const f = tlsFetch({ ca: ['a', 'b'] });
  t.type(f?.fetch, 'function');
  await f?.close();
  t.throws(
    () => new TenureClient({ endpoints: ['https://127.0.0.1:1'], ca: 'x', fetch }),
    /fetch and ca\/cert\/key/,
  );
  const client = new TenureClient({ endpoints: ['https://127.0.0.1:1'], ca: 'x' });
  await client.close();
});

t.test('certificate-trust failures get a hint; other errors do not', async (t) => {
  for (const code of [
    'SELF_SIGNED_CERT_IN_CHAIN',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'ERR_TLS_CERT_ALTNAME_INVALID',
  ])
    t.match(tlsTrustHint(code), /TLS certificate was refused .*TENURE_CA/, code);
  t.equal(tlsTrustHint('ECONNREFUSED'), null);
  t.equal(tlsTrustHint(undefined), null);
});

t.test('CLI TLS flags and environment', async (t) => {
  t.same(tlsOptionsFrom({}, {}), {});
  const fromEnv = tlsOptionsFrom(
    {},
    { TENURE_CA: caFile, TENURE_CERT: certFile, TENURE_KEY: keyFile },
  );
  t.same(
    [fromEnv.ca?.toString(), fromEnv.cert?.toString(), fromEnv.key?.toString()],
    ['CA PEM', 'CERT PEM', 'KEY PEM'],
  );
  t.equal(
    tlsOptionsFrom({ ca: otherCaFile }, { TENURE_CA: caFile }).ca?.toString(),
    'OTHER CA PEM',
  );
  t.throws(() => tlsOptionsFrom({ cert: certFile }, {}), UsageError);
  t.throws(
    () => tlsOptionsFrom({}, { TENURE_CA: join(dir, 'nope.pem') }),
    /TENURE_CA: cannot read/,
  );

  const err: string[] = [];
  const io: CliIo = {
    stdout: { write: () => true },
    stderr: { write: (s: string) => err.push(s) },
    env: {},
    interrupt: new AbortController().signal,
  };
  const code = await main(['--ca', join(dir, 'nope.pem'), 'cluster', 'status'], io);
  t.equal(code, 2, 'usage error');
  t.match(err.join(''), /--ca: cannot read ".*nope\.pem" \(ENOENT\)/);
});

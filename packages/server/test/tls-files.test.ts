// Proves the TLS settings are read and checked at start: files go together (a key without its
// certificate, a client CA without a server certificate, an incomplete peer set are refused naming
// the setting), unreadable files, files without the expected PEM block and a key that is not the
// certificate's are refused by the flag or env var the user gave; good files land in the config.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError, loadConfig } from '../src/config.js';
import { createCa, issueNodeCert } from '../src/cluster/certificates.js';

const PEERS = 'n1=127.0.0.1:7101@127.0.0.1:7001,n2=127.0.0.1:7102@127.0.0.1:7002';
const BASE = ['--id', 'n1', '--peers', PEERS];

const dir = mkdtempSync(join(tmpdir(), 'tenure-tls-files-'));
const ca = createCa('test CA');
const n1 = issueNodeCert(ca, { commonName: 'n1', hosts: ['127.0.0.1'] });
const n2 = issueNodeCert(ca, { commonName: 'n2', hosts: ['127.0.0.1'] });
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const F = {
  ca: file('ca.pem', ca.certPem),
  cert: file('n1.pem', n1.certPem),
  key: file('n1-key.pem', n1.keyPem),
  otherKey: file('n2-key.pem', n2.keyPem),
  junk: file('junk.pem', 'not a certificate\n'),
};

function thrown(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

t.test('without TLS settings the node is plain HTTP and plain TCP', async (t) => {
  const c = loadConfig(BASE, {});
  t.equal(c.tls, null);
  t.equal(c.peerTls, null);
});

t.test('HTTP and peer TLS files are read into the configuration', async (t) => {
  const c = loadConfig(
    [...BASE, '--tls-cert', F.cert, '--tls-key', F.key, '--tls-client-ca', F.ca],
    { TENURE_PEER_TLS_CERT: F.cert, TENURE_PEER_TLS_KEY: F.key, TENURE_PEER_TLS_CA: F.ca },
  );
  t.equal(c.tls?.cert.toString(), n1.certPem);
  t.equal(c.tls?.key.toString(), n1.keyPem);
  t.equal(c.tls?.clientCa?.toString(), ca.certPem);
  t.equal(c.tls?.ca, null, 'forwarding trusts the built-in roots unless --tls-ca is set');
  t.equal(String(c.peerTls?.ca), ca.certPem);
  const relative = loadConfig(
    ['--tls-cert', 'n1.pem', '--tls-key', 'n1-key.pem', ...BASE],
    {},
    dir,
  );
  t.equal(relative.tls?.cert.toString(), n1.certPem, 'paths are relative to the working directory');
});

t.test('settings that need another one name both', async (t) => {
  const cases: [string[], Record<string, string>, string, string][] = [
    [['--tls-key', F.key], {}, 'tls-key', '--tls-cert'],
    [['--tls-cert', F.cert], {}, 'tls-cert', '--tls-key'],
    [['--tls-client-ca', F.ca], {}, 'tls-client-ca', '--tls-cert'],
    [['--tls-ca', F.ca], {}, 'tls-ca', '--tls-cert'],
    [['--peer-tls-cert', F.cert, '--peer-tls-key', F.key], {}, 'peer-tls-cert', '--peer-tls-ca'],
    [[], { TENURE_PEER_TLS_CA: F.ca }, 'peer-tls-ca', '--peer-tls-cert'],
  ];
  for (const [argv, env, setting, needs] of cases) {
    const e = thrown(() => loadConfig([...BASE, ...argv], env));
    t.equal(e.setting, setting, `${argv.join(' ')} ${Object.keys(env).join(' ')}`);
    t.match(e.message, `needs ${needs}`);
  }
});

t.test('unreadable, non-PEM and mismatched files are refused naming the setting', async (t) => {
  const missing = thrown(() =>
    loadConfig([...BASE, '--tls-cert', join(dir, 'nope.pem'), '--tls-key', F.key], {}),
  );
  t.equal(missing.setting, 'tls-cert');
  t.match(missing.message, /cannot read .*nope\.pem.* \(ENOENT\)/);
  const junk = thrown(() =>
    loadConfig([...BASE, '--tls-cert', F.cert, '--tls-key', F.key], {
      TENURE_TLS_CLIENT_CA: F.junk,
    }),
  );
  t.equal(junk.source, 'TENURE_TLS_CLIENT_CA', 'an env var is named as given');
  t.match(junk.message, 'holds no PEM CERTIFICATE');
  const keyAsCert = thrown(() =>
    loadConfig([...BASE, '--tls-cert', F.key, '--tls-key', F.key], {}),
  );
  t.match(keyAsCert.message, 'holds no PEM CERTIFICATE');
  const mismatch = thrown(() =>
    loadConfig(
      [...BASE, '--peer-tls-cert', F.cert, '--peer-tls-key', F.otherKey, '--peer-tls-ca', F.ca],
      {},
    ),
  );
  t.equal(mismatch.setting, 'peer-tls-key');
  t.match(mismatch.message, 'unusable with --peer-tls-cert');
});

// Proves the `--secure` launch: the switch is read from argv or TENURE_LAUNCH_SECURE and kept in
// the restart command; the first secure launch writes a CA, node certificates valid for 127.0.0.1
// and a root token (mode 0600, printed once), and a second launch reuses them; every node gets the
// HTTPS and peer mutual-TLS flags of its own files.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { launchPlan, restartCommand } from '../src/cluster/launch-plan.js';
import { prepareSecureLaunch } from '../src/cluster/secure.js';

t.test('--secure and TENURE_LAUNCH_SECURE', async (t) => {
  t.equal(launchPlan([], {}).secure, false);
  const p = launchPlan(['--secure', '--http-port', '8001'], {});
  t.equal(p.secure, true);
  t.equal(p.httpPort, 8001, 'other settings still read');
  t.match(restartCommand('n2', p), /^npm run node -- n2 --secure /);
  t.equal(launchPlan([], { TENURE_LAUNCH_SECURE: '1' }).secure, true);
  t.equal(launchPlan(['--', '--secure'], {}).secure, false, 'after -- it is a node flag');
  t.equal(launchPlan(['--secure', 'off'], {}).secure, false, 'an explicit off');
  t.throws(() => launchPlan([], { TENURE_LAUNCH_SECURE: 'yes' }), /TENURE_LAUNCH_SECURE/);
});

t.test('certificates and the root token are made once, then reused', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tenure-secure-'));
  const p = launchPlan(['--data-dir', dataDir], {});
  const lines: string[] = [];
  const first = prepareSecureLaunch(p, (l) => lines.push(l));
  const token = readFileSync(join(dataDir, 'root.token'), 'utf8').trim();
  t.match(token, /^[A-Za-z0-9_-]{43}$/, '32 random bytes');
  t.equal(statSync(join(dataDir, 'root.token')).mode & 0o777, 0o600);
  t.equal(statSync(join(dataDir, 'tls', 'n1-key.pem')).mode & 0o777, 0o600);
  t.equal(lines.filter((l) => l.includes(token)).length, 1, 'the token is printed once');
  const caPem = readFileSync(first.caFile, 'utf8');
  const ca = new X509Certificate(caPem);
  const n2 = new X509Certificate(readFileSync(join(dataDir, 'tls', 'n2.pem')));
  t.ok(n2.verify(ca.publicKey), 'node certificates are signed by the CA');
  t.equal(n2.checkIP('127.0.0.1'), '127.0.0.1');
  const args = first.argsOf('n2');
  for (const flag of ['--tls-cert', '--tls-key', '--tls-ca', '--peer-tls-cert', '--peer-tls-ca'])
    t.ok(args.includes(flag), flag);
  t.equal(args[args.indexOf('--peer-tls-key') + 1], join(dataDir, 'tls', 'n2-key.pem'));

  lines.length = 0;
  const second = prepareSecureLaunch(p, (l) => lines.push(l));
  t.equal(readFileSync(second.caFile, 'utf8'), caPem, 'the CA is reused');
  t.equal(readFileSync(join(dataDir, 'root.token'), 'utf8').trim(), token, 'the token is kept');
  t.notOk(
    lines.some((l) => l.includes(token)),
    'and not printed again',
  );
});

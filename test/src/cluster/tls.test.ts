// Proves a cluster of real processes with TLS on both sides (HTTPS requiring client certificates,
// mutual TLS between peers) elects a leader, serves, and forwards a follower's writes to the leader
// over HTTPS; the client with the CA and its certificate works, without the CA it fails naming the
// certificate problem, without a client certificate it is refused, and plain HTTP gets no answer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { TenureClient, TenureError } from '@tenure/client';
import { LocalCluster } from '../support/cluster.js';
import { fetchTrusting, TestCa, tlsArgs } from '../support/tls.js';

const dir = mkdtempSync(join(tmpdir(), 'tenure-tls-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const ca = new TestCa(join(dir, 'ca'), 'tls test CA');
const user = ca.issue('user');
const nodeFiles = new Map(['n1', 'n2', 'n3'].map((id) => [id, ca.issue(id)]));

t.test('a TLS cluster elects, serves and forwards over HTTPS', async (t) => {
  const c = await LocalCluster.start({
    scheme: 'https',
    fetch: fetchTrusting([ca.ca.certPem], user.pem),
    nodeArgs: (n) => tlsArgs(nodeFiles.get(n.id)!, ca.caFile, { clientCa: true }),
  });
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  const follower = c.nodes.find((n) => n.id !== leader)!.id;
  t.match(c.node(leader).url, /^https:/);

  // A write sent to a follower is forwarded to the leader (HTTPS, leader certificate verified).
  const put = await c.request(follower, 'PUT', '/v1/kv/tls-forwarded', { value: 'over TLS' });
  t.equal(put.status, 200, `forwarded write: ${JSON.stringify(put.body)}`);
  const read = await c.request(leader, 'GET', '/v1/kv/tls-forwarded');
  t.equal(read.body.value, 'over TLS');

  const endpoints = c.nodes.map((n) => n.url);
  const client = new TenureClient({
    endpoints,
    ca: ca.ca.certPem,
    cert: user.pem.certPem,
    key: user.pem.keyPem,
  });
  t.teardown(() => client.close());
  const lease = await client.acquire('tls-lease', { ttlMs: 30_000, autoRenew: false });
  t.ok(lease.fencingToken > 0, 'the client with the CA and a certificate acquires');
  await lease.release();

  const noCa = new TenureClient({ endpoints, cert: user.pem.certPem, key: user.pem.keyPem });
  t.teardown(() => noCa.close());
  const untrusted = await noCa.kv
    .get('tls-forwarded', { timeoutMs: 2000 })
    .catch((e: unknown) => e);
  t.ok(untrusted instanceof TenureError, 'without the CA the call fails');
  t.match((untrusted as TenureError).message, "the server's TLS certificate was refused");
  t.match((untrusted as TenureError).message, 'TENURE_CA');
  t.equal((untrusted as TenureError).code, 'unavailable', 'final once every endpoint refused');

  const noCert = new TenureClient({ endpoints, ca: ca.ca.certPem });
  t.teardown(() => noCert.close());
  const refused = await noCert.kv
    .get('tls-forwarded', { timeoutMs: 2000 })
    .catch((e: unknown) => e);
  t.ok(refused instanceof TenureError, 'without a client certificate the call fails');
  // TLS 1.3 reports the refusal to the client as a closed connection: retried until the deadline.
  t.match((refused as TenureError).code, /^(unavailable|timeout)$/);

  const plain = await fetch(`http://127.0.0.1:${c.node(leader).httpPort}/healthz`, {
    signal: AbortSignal.timeout(10_000),
  }).catch((e: unknown) => e);
  t.ok(plain instanceof Error, 'plain HTTP to the HTTPS port gets no HTTP answer');
});

t.test(
  'with TLS and auth, a wiped member is refused and rejoins: peers are asked over HTTPS',
  async (t) => {
    const root = 'root-secret-tls-membership';
    const c = await LocalCluster.start({
      scheme: 'https',
      fetch: fetchTrusting([ca.ca.certPem], user.pem),
      nodeArgs: (n) => [...tlsArgs(nodeFiles.get(n.id)!, ca.caFile, { clientCa: true }), '--auth'],
      env: { TENURE_ROOT_TOKEN: root },
      token: root,
      logLevel: 'info',
    });
    t.teardown(() => c.teardown());
    const leader = await c.waitForLeader();
    const victim = c.nodes.find((n) => n.id !== leader)!.id;
    t.equal((await c.request(leader, 'PUT', '/v1/kv/before', { value: 1 })).status, 200);
    await c.kill(victim);
    c.wipe(victim);
    await t.rejects(c.restart(victim), /exited during start/, 'the wiped member is refused');
    t.equal(await c.waitExit(victim), 2, 'exit code 2');

    const removed = await c.request(leader, 'DELETE', `/v1/cluster/members/${victim}`);
    t.equal(removed.status, 200, `removed: ${JSON.stringify(removed.body)}`);
    await c.restart(victim, undefined, { join: c.node(leader).url });
    const read = () => c.request(victim, 'GET', '/v1/kv/before?consistency=stale');
    let got = await read();
    for (let i = 0; i < 600 && got.body.value !== 1; i++) {
      await new Promise((r) => setTimeout(r, 100)); // polls the learner's catch-up
      got = await read();
    }
    t.equal(
      got.body.value,
      1,
      `rejoined over HTTPS with the root token: ${JSON.stringify(got.body)}`,
    );
  },
);

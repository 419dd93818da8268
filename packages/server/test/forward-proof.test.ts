// Proves a client cannot skip its rate limit by sending Tenure-Forwarded itself (docs/security.md,
// "Forwarded requests"): only a proof made with the cluster's key (from the replicated root token
// and the cluster id) over this method, URL and node, and recent, skips the leader's count.
import t from 'tap';
import {
  ADMIN_ROLE,
  encodeEnvelope,
  readSnapshotFile,
  ROOT_TOKEN_NAME,
  type TokenRecord,
} from '@tenure/coord-state';
import { hashSecret } from '../src/auth/secrets.js';
import { ForwardProof, PROOF_AGE_MAX_MS } from '../src/auth/forward-proof.js';
import { createRootToken, harness, send, type Harness } from './fixtures/harness.js';

const ROOT = 'root-secret-for-tests-0123456789';
const root: TokenRecord = {
  name: ROOT_TOKEN_NAME,
  roles: [ADMIN_ROLE],
  quota: null,
  hash: 'aGFzaA',
  salt: 'c2FsdA',
} as unknown as TokenRecord;
const req = { method: 'POST', url: '/v1/leases/a/acquire', fromNodeId: 'n2' };
const NOW = 1_800_000_000_000;

t.test('a proof verifies only for its cluster, root key, request and time', async (t) => {
  const proof = new ForwardProof('c1', (n) => (n === ROOT_TOKEN_NAME ? root : null));
  const p = proof.sign(req, NOW)!;
  t.ok(proof.verify(req, p, NOW + 1000));
  t.notOk(proof.verify(req, p, NOW + PROOF_AGE_MAX_MS + 1), 'too old');
  t.notOk(proof.verify({ ...req, url: '/v1/leases/b/acquire' }, p, NOW), 'another URL');
  t.notOk(proof.verify({ ...req, method: 'DELETE' }, p, NOW), 'another method');
  t.notOk(proof.verify({ ...req, fromNodeId: 'n3' }, p, NOW), 'another node');
  t.notOk(proof.verify(req, undefined, NOW), 'none');
  t.notOk(proof.verify(req, 'n2', NOW), 'not a proof');
  t.notOk(proof.verify(req, `${NOW}.${'A'.repeat(43)}`, NOW), 'a made-up MAC');
  const otherCluster = new ForwardProof('c2', (n) => (n === ROOT_TOKEN_NAME ? root : null));
  t.notOk(otherCluster.verify(req, p, NOW), 'another cluster id');
  const otherRoot = new ForwardProof('c1', () => ({ ...root, hash: 'b3RoZXI' }));
  t.notOk(otherRoot.verify(req, p, NOW), 'another root token');
  const noRoot = new ForwardProof('c1', () => null);
  t.equal(noRoot.sign(req, NOW), null, 'no key without a root token');
  t.notOk(noRoot.verify(req, p, NOW));
});

t.test(
  'a client sending Tenure-Forwarded itself is refused; a proven forward skips the rate',
  async (t) => {
    const h = await harness(['--auth']);
    t.teardown(h.close);
    await createRootToken(h, ROOT);
    const admin = { authorization: `Bearer ${ROOT}` };
    await send(
      h.app,
      'PUT',
      '/v1/auth/roles/all',
      { rules: [{ kinds: ['lease'], prefix: '', actions: ['read'] }] },
      admin,
    );
    const made = await send(
      h.app,
      'POST',
      '/v1/auth/tokens',
      { name: 'slow', roles: ['all'], quota: { requestsPerSecond: 1 } },
      admin,
    );
    const slow = { authorization: `Bearer ${made.json().secret}` };
    const burst = (headers: Record<string, string>) =>
      Promise.all(
        [1, 2, 3, 4].map(() =>
          h.app.inject({ method: 'GET', url: '/v1/leases', headers: { ...slow, ...headers } }),
        ),
      );
    const forged = await burst({ 'tenure-forwarded': 'n2' });
    t.same(
      forged.map((r) => r.statusCode),
      [400, 400, 400, 400],
      'a forged header is refused, never a way around the rate',
    );
    t.equal(forged[0]!.json().error.field, 'header Tenure-Forwarded');
    const badProof = await burst({ 'tenure-forwarded': 'n2', 'tenure-forwarded-proof': '1.x' });
    t.ok(
      badProof.some((r) => r.statusCode === 429) && badProof.every((r) => r.statusCode !== 400),
      `a proof that does not verify (clocks apart) is served, counted again: ${badProof.map((r) => r.statusCode).join(',')}`,
    );
    const proof = new ForwardProof(h.config.clusterId, (n) => h.coord.authToken(n));
    const signed = proof.sign({ method: 'GET', url: '/v1/leases', fromNodeId: 'n2' }, Date.now())!;
    const proven = await burst({ 'tenure-forwarded': 'n2', 'tenure-forwarded-proof': signed });
    t.same(
      proven.map((r) => r.statusCode),
      [200, 200, 200, 200],
      'a proven forward was counted where it was served',
    );
  },
);

t.test(
  'on a follower with auth on: a forged forward is 400, a proven one 503 no_leader',
  async (t) => {
    const h = await harness(['--auth']);
    t.teardown(h.close);
    await createRootToken(h, ROOT);
    const admin = { authorization: `Bearer ${ROOT}` };
    h.raft.setRole('follower', 'n2');
    const url = '/v1/leases/L/acquire';
    const body = { holder: 'A', ttlMs: 1000 };
    const forged = await send(h.app, 'POST', url, body, { ...admin, 'tenure-forwarded': 'n3' });
    t.equal(forged.statusCode, 400, 'a client error, not a retryable 503');
    t.match(forged.json().error, { code: 'invalid_argument', field: 'header Tenure-Forwarded' });
    t.match(forged.json().error.message, /clients must not send it/);
    t.equal(forged.headers['connection'], 'close', 'refused before the body: the body is not read');
    const proof = new ForwardProof(h.config.clusterId, (n) => h.coord.authToken(n));
    const signed = proof.sign({ method: 'POST', url, fromNodeId: 'n3' }, Date.now())!;
    const proven = await send(h.app, 'POST', url, body, {
      ...admin,
      'tenure-forwarded': 'n3',
      'tenure-forwarded-proof': signed,
    });
    t.equal(proven.statusCode, 503, 'a real forward reaching a non-leader: retry elsewhere');
    t.equal(proven.json().error.code, 'no_leader');
    t.equal(h.forwarder.calls.length, 0, 'never forwarded twice');
  },
);

t.test('a follower signs the read-index question of a backup like any forward', async (t) => {
  const h = await harness(['--auth']);
  t.teardown(h.close);
  await createRootToken(h, ROOT);
  h.raft.setRole('follower', 'n2');
  h.forwarder.respond = () => ({ statusCode: 503, headers: {}, body: '{}' });
  const res = await h.app.inject({
    method: 'GET',
    url: '/v1/cluster/snapshot',
    headers: { authorization: `Bearer ${ROOT}` },
  });
  t.equal(res.statusCode, 503, 'the fake leader gave no read index');
  const call = h.forwarder.calls[0]!;
  t.equal(call.req.url, '/v1/cluster/snapshot');
  const proof = new ForwardProof(h.config.clusterId, (n) => h.coord.authToken(n));
  t.ok(
    proof.verify(
      { method: 'GET', url: call.req.url, fromNodeId: 'n1' },
      call.req.proof,
      Date.now(),
    ),
    'the leader verifies it, so it does not count against the rate again',
  );
});

/** Makes the same root token (same salt and hash: the same forward key) on every harness. */
async function sameRoot(secret: string, ...nodes: Harness[]): Promise<void> {
  const { hash, salt } = await hashSecret(secret);
  const command = {
    type: 'auth.createToken' as const,
    name: ROOT_TOKEN_NAME,
    roles: [ADMIN_ROLE],
    quota: null,
    hash,
    salt,
  };
  for (const h of nodes) await h.raft.propose(encodeEnvelope({ v: 1, command, idempotency: null }));
}

t.test('a backup on a follower: the leader accepts its signed read-index question', async (t) => {
  const leader = await harness(['--auth']);
  t.teardown(leader.close);
  const follower = await harness(['--auth']);
  t.teardown(follower.close);
  await sameRoot(ROOT, leader, follower);
  follower.raft.setRole('follower', 'n2');
  // The follower's forwarder delivers to the leader's app, headers as the real forwarder sets them.
  follower.forwarder.respond = async (req) => {
    const res = await leader.app.inject({
      method: req.method as 'GET',
      url: req.url,
      headers: {
        'tenure-forwarded': req.fromNodeId,
        'request-timeout-ms': String(Math.max(1, Math.floor(req.requestTimeoutMs))),
        ...(req.authorization === undefined ? {} : { authorization: req.authorization }),
        ...(req.proof === undefined ? {} : { 'tenure-forwarded-proof': req.proof }),
        ...req.headers,
      },
    });
    return { statusCode: res.statusCode, headers: {}, body: res.body };
  };
  const res = await follower.app.inject({
    method: 'GET',
    url: '/v1/cluster/snapshot',
    headers: { authorization: `Bearer ${ROOT}` },
  });
  t.equal(res.statusCode, 200, res.statusCode === 200 ? 'backup file' : res.body);
  t.equal(readSnapshotFile(res.rawPayload).header.nodeId, 'n1', 'encoded by the node asked');
  const unsigned = await leader.app.inject({
    method: 'GET',
    url: '/v1/cluster/snapshot',
    headers: {
      authorization: `Bearer ${ROOT}`,
      'tenure-forwarded': 'n2',
      'tenure-snapshot-read-index': '1',
    },
  });
  t.equal(unsigned.statusCode, 400, 'the same question without the proof is refused');
});

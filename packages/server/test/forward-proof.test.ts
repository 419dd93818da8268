// Proves a client cannot skip its rate limit by sending Tenure-Forwarded itself (docs/security.md,
// "Forwarded requests"): only a proof made with the cluster's key (from the replicated root token
// and the cluster id) over this method, URL and node, and recent, skips the leader's count.
import t from 'tap';
import { ADMIN_ROLE, ROOT_TOKEN_NAME, type TokenRecord } from '@tenure/coord-state';
import { ForwardProof, PROOF_AGE_MAX_MS } from '../src/auth/forward-proof.js';
import { createRootToken, harness, send } from './fixtures/harness.js';

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

t.test('a client sending Tenure-Forwarded itself is still rate-limited', async (t) => {
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
  t.ok(
    forged.some((r) => r.statusCode === 429),
    'a forged header does not skip the rate',
  );
  const proof = new ForwardProof(h.config.clusterId, (n) => h.coord.authToken(n));
  const signed = proof.sign({ method: 'GET', url: '/v1/leases', fromNodeId: 'n2' }, Date.now())!;
  const proven = await burst({ 'tenure-forwarded': 'n2', 'tenure-forwarded-proof': signed });
  t.same(
    proven.map((r) => r.statusCode),
    [200, 200, 200, 200],
    'a proven forward was counted where it was served',
  );
});

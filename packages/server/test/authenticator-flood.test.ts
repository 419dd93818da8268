// Proves a flood of made-up tokens is bounded (docs/security.md, Abuse resistance): secret checks
// run a few at a time, a full waiting line answers 429 with Retry-After instead of queueing without
// end, a repeated wrong token is refused from memory, and a right token still passes.
import t from 'tap';
import { ADMIN_ROLE, ROOT_TOKEN_NAME, type TokenRecord } from '@tenure/coord-state';
import { Authenticator } from '../src/auth/authenticator.js';
import { HttpError } from '../src/http-error.js';
import { hashSecret } from '../src/auth/secrets.js';

t.test('secret checks are bounded; the rest get 401 or 429, never hang', async (t) => {
  const root = {
    name: ROOT_TOKEN_NAME,
    roles: [ADMIN_ROLE],
    quota: null,
    ...(await hashSecret('right-secret')),
  } as unknown as TokenRecord;
  const auth = new Authenticator((n) => (n === ROOT_TOKEN_NAME ? root : null), {
    verifyingMax: 1,
    queueMax: 1,
  });
  const codes = await Promise.all(
    ['wrong-1', 'wrong-2', 'wrong-3'].map((s) =>
      auth.authenticate(`Bearer ${s}`).then(
        () => 'ok',
        (err: unknown) => (err instanceof HttpError ? err.code : 'other'),
      ),
    ),
  );
  t.same(codes, ['unauthorized', 'unauthorized', 'resource_exhausted']);
  const again = await auth.authenticate('Bearer wrong-1').catch((err: unknown) => err);
  t.match(again, { code: 'unauthorized' }, 'a repeated wrong token is refused again');
  t.equal(await auth.authenticate('Bearer right-secret'), root);
});

// Proves tokens and roles as replicated state (create, revoke, roles, isAllowed), grant ownership (another token is refused whatever it sends; admin revoke and expiry still work; no principal = no check) and per-token caps, all surviving snapshot and restore byte for byte.
import t from 'tap';
import {
  CoordStateMachine,
  isAllowed,
  type Command,
  type Principal,
  type TokenRecord,
} from '../src/index.js';
import { Driver, errCode, okValue } from './fixtures/driver.js';

const HASH = 'ab'.repeat(32);
const SALT = 'cd'.repeat(16);
const alice: Principal = { token: 'alice', leasesMax: null, sessionsMax: null, waitersMax: null };
const bob: Principal = { token: 'bob', leasesMax: null, sessionsMax: null, waitersMax: null };

function createToken(name: string, roles: string[]): Command {
  return { type: 'auth.createToken', name, roles, quota: null, hash: HASH, salt: SALT };
}

t.test(
  'tokens: create once (already_exists after), list without hash, revoke, not_found',
  async (t) => {
    const d = new Driver();
    t.same(okValue(d.run(createToken('root', ['admin'])).result), {
      name: 'root',
      roles: ['admin'],
      quota: null,
    });
    t.equal(errCode(d.run(createToken('root', ['admin'])).result), 'already_exists');
    t.equal(errCode(d.run(createToken('x', ['nope'])).result), 'invalid_argument');
    t.same(d.sm.authTokens(), [{ name: 'root', roles: ['admin'], quota: null }]);
    t.equal(d.sm.authToken('root')?.hash, HASH, 'the server sees the hash to verify against');
    okValue(d.run(createToken('ops', ['admin'])).result);
    t.same(okValue(d.run({ type: 'auth.revokeToken', name: 'root' }).result), {
      name: 'root',
      revoked: true,
    });
    t.equal(d.sm.authToken('root'), null);
    t.equal(errCode(d.run({ type: 'auth.revokeToken', name: 'root' }).result), 'not_found');
  },
);

t.test('a malformed auth command is invalid_argument naming the field', async (t) => {
  const d = new Driver();
  const bad = { ...createToken('a', []), hash: 'XYZ' } as Command;
  t.match(d.run(bad).result, {
    ok: false,
    error: { code: 'invalid_argument', details: { field: 'hash' } },
  });
  const rule = { kinds: ['lease'], prefix: '', actions: ['delete'] };
  t.match(d.run({ type: 'auth.putRole', name: 'r', rules: [rule] } as unknown as Command).result, {
    ok: false,
    error: { details: { field: 'rules[0].actions' } },
  });
  t.equal(
    errCode(d.run({ type: 'auth.putRole', name: 'admin', rules: [] }).result),
    'invalid_argument',
    'admin is built in',
  );
  t.match(d.run({ type: 'auth.putRole', name: 'admin', rules: [] }).result, {
    error: {
      message: /admin is built in and cannot be changed/,
      details: { field: 'params.name' },
    },
  });
  t.match(d.run({ type: 'auth.deleteRole', name: 'admin' }).result, {
    ok: false,
    error: {
      code: 'invalid_argument',
      message: /admin is built in and cannot be deleted/,
      details: { field: 'params.name' },
    },
  });
  t.match(d.run(createToken('x', ['nope'])).result, {
    error: { message: /role nope/, details: { field: 'body.roles' } },
  });
});

t.test('the last token with the admin role cannot be revoked (last_admin)', async (t) => {
  const d = new Driver();
  okValue(d.run(createToken('root', ['admin'])).result);
  okValue(d.run({ type: 'auth.putRole', name: 'rw', rules: [] }).result);
  okValue(d.run(createToken('w', ['rw'])).result);
  t.match(d.run({ type: 'auth.revokeToken', name: 'root' }).result, {
    ok: false,
    error: {
      code: 'last_admin',
      message: /last token with the admin role/,
      details: { name: 'root' },
    },
  });
  t.not(d.sm.authToken('root'), null, 'root is still there');
  okValue(d.run({ type: 'auth.revokeToken', name: 'w' }).result);
  okValue(d.run(createToken('ops', ['rw', 'admin'])).result);
  // Two revokes of the last two admin tokens, in one log order: only the first one passes.
  okValue(d.run({ type: 'auth.revokeToken', name: 'root' }).result);
  t.equal(errCode(d.run({ type: 'auth.revokeToken', name: 'ops' }).result), 'last_admin');
  t.same(
    d.sm.authTokens().map((x) => x.name),
    ['ops'],
  );
});

t.test(
  'idempotency keys are scoped per token: another token neither uses up nor replays a key',
  async (t) => {
    const d = new Driver();
    const acquire = (holder: string): Command => ({
      type: 'lease.acquire',
      name: 'l',
      holder,
      ttlMs: 10_000,
      waitMs: 0,
      lockDelayMs: 0,
      maxHoldMs: null,
    });
    const other = d.run(acquire('B'), { key: 'idem-1', fingerprint: 'fp-b', principal: bob });
    t.equal(other.result.ok, true, 'bob takes the lease');
    const mine = d.run(acquire('A'), { key: 'idem-1', fingerprint: 'fp-a', principal: alice });
    t.equal(
      errCode(mine.result),
      'held',
      "alice's request is applied, not refused as a reused key",
    );
    t.not(mine.result.replayed, true, "and not answered with bob's result");
    const again = d.run(acquire('A'), { key: 'idem-1', fingerprint: 'fp-a', principal: alice });
    t.equal(again.result.replayed, true, "alice's own retry is a replay");
    const wrong = d.run(acquire('A'), { key: 'idem-1', fingerprint: 'fp-x', principal: alice });
    t.equal(errCode(wrong.result), 'idempotency_key_reused', 'reused within one token');
    t.match(wrong.result, { error: { message: /Idempotency-Key idem-1 / } });
    const open = d.run(acquire('C'), { key: 'idem-1', fingerprint: 'fp-c' });
    t.equal(errCode(open.result), 'held', 'no principal is its own (global) scope');
  },
);

t.test(
  'roles: rules by kind, prefix and action; write implies read; admin allows all',
  async (t) => {
    const d = new Driver();
    okValue(
      d.run({
        type: 'auth.putRole',
        name: 'jobs',
        rules: [{ kinds: ['lease', 'semaphore'], prefix: 'jobs/', actions: ['write'] }],
      }).result,
    );
    okValue(
      d.run({
        type: 'auth.putRole',
        name: 'viewer',
        rules: [{ kinds: ['kv'], prefix: '', actions: ['read'] }],
      }).result,
    );
    okValue(d.run(createToken('worker', ['jobs', 'viewer'])).result);
    const st = d.sm.authState();
    const worker = d.sm.authToken('worker')!;
    t.ok(isAllowed(st, worker, { kind: 'lease', name: 'jobs/a', action: 'write' }));
    t.ok(
      isAllowed(st, worker, { kind: 'semaphore', name: 'jobs/a', action: 'read' }),
      'write ⇒ read',
    );
    t.notOk(isAllowed(st, worker, { kind: 'lease', name: 'other', action: 'read' }), 'prefix');
    t.notOk(isAllowed(st, worker, { kind: 'election', name: 'jobs/a', action: 'read' }), 'kind');
    t.ok(isAllowed(st, worker, { kind: 'kv', name: 'any', action: 'read' }));
    t.notOk(isAllowed(st, worker, { kind: 'kv', name: 'any', action: 'write' }), 'read ⇏ write');
    t.notOk(isAllowed(st, worker, { admin: true }));
    const root: TokenRecord = {
      name: 'root',
      roles: ['admin'],
      quota: null,
      hash: HASH,
      salt: SALT,
    };
    t.ok(isAllowed(st, root, { admin: true }));
    const inUse = d.run({ type: 'auth.deleteRole', name: 'jobs' }).result;
    t.match(inUse, {
      ok: false,
      error: { code: 'in_use', details: { name: 'jobs', tokens: ['worker'], tokenCount: 1 } },
    });
    t.match(inUse.ok ? '' : inUse.error.message, /named by 1 token\(s\): worker; revoke them/);
    t.ok(isAllowed(st, worker, { kind: 'lease', name: 'jobs/a', action: 'write' }), 'kept');
    okValue(d.run({ type: 'auth.revokeToken', name: 'worker' }).result);
    okValue(d.run({ type: 'auth.deleteRole', name: 'jobs' }).result);
    t.notOk(d.sm.authState().roles.has('jobs'), 'role gone once no token names it');
    t.equal(errCode(d.run({ type: 'auth.deleteRole', name: 'jobs' }).result), 'not_found');
  },
);

t.test(
  'ownership: another token is forbidden whatever it sends; the owner and admin revoke work',
  async (t) => {
    const d = new Driver();
    const acq = (holder: string): Command => ({
      type: 'lease.acquire',
      name: 'L',
      holder,
      ttlMs: 5_000,
      waitMs: 0,
      lockDelayMs: 0,
      maxHoldMs: null,
    });
    const g = okValue<{ fencingToken: number }>(d.run(acq('A'), { principal: alice }).result);
    const tok = g.fencingToken;
    const as = (cmd: Command, p: Principal): string | null => {
      const r = d.run(cmd, { principal: p }).result;
      return r.ok ? null : r.error.code;
    };
    t.equal(
      as({ type: 'lease.renew', name: 'L', holder: 'A', fencingToken: tok }, bob),
      'forbidden',
    );
    t.equal(
      as({ type: 'lease.release', name: 'L', holder: 'A', fencingToken: tok }, bob),
      'forbidden',
    );
    t.equal(as(acq('A'), bob), 'forbidden', 'renew-by-acquire too');
    t.equal(d.sm.getLease('L', d.nowMs)?.fencingToken, tok, 'untouched');
    t.equal(as({ type: 'lease.renew', name: 'L', holder: 'A', fencingToken: tok }, alice), null);
    t.equal(
      as({ type: 'lease.revoke', name: 'L', fencingToken: null, reason: 'ops' }, bob),
      null,
      'revoke is an admin route: the state machine never checks owners for it',
    );
    t.equal(d.sm.getLease('L', d.nowMs), null);
  },
);

t.test(
  'ownership covers permits, candidacies and sessions; no principal means no check',
  async (t) => {
    const d = new Driver();
    const p = okValue<{ fencingToken: number }>(
      d.run(
        {
          type: 'semaphore.acquire',
          name: 'S',
          holder: 'A',
          limit: 2,
          ttlMs: 5_000,
          session: null,
          waitMs: 0,
        },
        { principal: alice },
      ).result,
    );
    t.equal(
      errCode(
        d.run(
          { type: 'semaphore.release', name: 'S', holder: 'A', fencingToken: p.fencingToken },
          { principal: bob },
        ).result,
      ),
      'forbidden',
    );
    okValue(
      d.run(
        { type: 'election.campaign', group: 'G', candidate: 'A', ttlMs: 5_000, value: 1 },
        { principal: alice },
      ).result,
    );
    t.equal(
      errCode(
        d.run({ type: 'election.resign', group: 'G', candidate: 'A' }, { principal: bob }).result,
      ),
      'forbidden',
    );
    const s = okValue<{ sessionId: string }>(
      d.run({ type: 'session.create', ttlMs: 5_000, name: null }, { principal: alice }).result,
    );
    t.equal(
      errCode(
        d.run({ type: 'session.keepalive', sessionId: s.sessionId }, { principal: bob }).result,
      ),
      'forbidden',
    );
    t.equal(
      errCode(
        d.run(
          {
            type: 'lease.acquire',
            name: 'M',
            holder: 'B',
            ttlMs: null,
            session: s.sessionId,
            waitMs: 0,
            lockDelayMs: 0,
            maxHoldMs: null,
          },
          { principal: bob },
        ).result,
      ),
      'forbidden',
      'nobody binds grants to another token’s session',
    );
    okValue(
      d.run({ type: 'session.end', sessionId: s.sessionId }).result,
      'no principal: no check',
    );
  },
);

t.test(
  'leases expire whatever happens to the tokens (the owner revoked, all tokens gone)',
  async (t) => {
    const d = new Driver();
    okValue(d.run(createToken('alice', [])).result);
    okValue(
      d.run(
        {
          type: 'lease.acquire',
          name: 'L',
          holder: 'A',
          ttlMs: 1_000,
          waitMs: 0,
          lockDelayMs: 0,
          maxHoldMs: null,
        },
        { principal: alice },
      ).result,
    );
    okValue(d.run({ type: 'auth.revokeToken', name: 'alice' }).result);
    t.equal(d.sm.nextDueMs(), 1_000, 'the expiry is still due');
    d.at(1_000);
    t.equal(d.sm.getLease('L', 1_000), null);
    t.match(d.sm.history('lease', 'L', 5), [{ holder: 'A', endReason: 'expired' }]);
  },
);

t.test(
  'caps: leases, waiters and sessions per token → resource_exhausted; freed when they end',
  async (t) => {
    const d = new Driver();
    const capped: Principal = { token: 'c', leasesMax: 1, sessionsMax: 1, waitersMax: 1 };
    const acq = (name: string, waitMs = 0): Command => ({
      type: 'lease.acquire',
      name,
      holder: 'H',
      ttlMs: 1_000,
      waitMs,
      lockDelayMs: 0,
      maxHoldMs: null,
    });
    const first = okValue<{ fencingToken: number }>(d.run(acq('a'), { principal: capped }).result);
    t.match(d.run(acq('b'), { principal: capped }).result, {
      ok: false,
      error: { code: 'resource_exhausted', details: { limit: 'quota.leasesMax' } },
    });
    okValue(d.run(acq('a'), { principal: capped }).result, 'renew-by-acquire is not a new lease');
    okValue(d.run(acq('b'), { principal: alice }).result, 'other tokens are not capped by it');
    okValue(
      d.run({ ...acq('b', 5_000), holder: 'W' } as Command, { principal: capped }).result,
      'one waiter',
    );
    t.equal(
      errCode(d.run({ ...acq('b', 5_000), holder: 'W2' } as Command, { principal: capped }).result),
      'resource_exhausted',
    );
    okValue(
      d.run({ type: 'session.create', ttlMs: 5_000, name: null }, { principal: capped }).result,
    );
    t.equal(
      errCode(
        d.run({ type: 'session.create', ttlMs: 5_000, name: null }, { principal: capped }).result,
      ),
      'resource_exhausted',
    );
    okValue(
      d.run(
        { type: 'lease.release', name: 'a', holder: 'H', fencingToken: first.fencingToken },
        { principal: capped },
      ).result,
    );
    okValue(d.run(acq('c'), { principal: capped }).result, 'freed by the release');
  },
);

t.test('snapshot: auth state and owners survive restore, byte for byte', async (t) => {
  const d = new Driver();
  okValue(d.run(createToken('alice', [])).result);
  okValue(
    d.run({
      type: 'auth.putRole',
      name: 'r',
      rules: [{ kinds: ['kv'], prefix: 'k', actions: ['read'] }],
    }).result,
  );
  okValue(
    d.run(
      {
        type: 'lease.acquire',
        name: 'L',
        holder: 'A',
        ttlMs: 5_000,
        waitMs: 0,
        lockDelayMs: 0,
        maxHoldMs: null,
      },
      { principal: alice },
    ).result,
  );
  const bytes = d.sm.snapshot();
  const copy = new CoordStateMachine();
  copy.restore(bytes);
  t.same(Buffer.from(copy.snapshot()), Buffer.from(bytes));
  t.same(copy.authRoles(), d.sm.authRoles());
  const g = copy.getLease('L', d.nowMs)!;
  const r = copy.apply(d.index + 1, d.nowMs, {
    v: 1,
    command: { type: 'lease.renew', name: 'L', holder: 'A', fencingToken: g.fencingToken },
    idempotency: null,
    principal: bob,
  });
  t.equal(errCode(r.result), 'forbidden', 'the owner is restored');
});

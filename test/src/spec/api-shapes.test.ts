// Proves the exact docs/api.md response shapes (fields, JSON types, revision semantics, headers, health/metrics/docs) on every node of a real three-process cluster.
import t from 'tap';
import { LocalCluster } from '../support/cluster.js';
import { isError, isInt, keysOf, raw, uniq } from './helpers.js';

const T = { 'content-type': 'application/json' };

t.test('docs/api.md shapes', async (t) => {
  const c = await LocalCluster.start();
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  const ids = c.nodes.map((n) => n.id);
  const follower = ids.find((id) => id !== leader)!;

  t.test('lease routes', async (t) => {
    const L = uniq('shape-lease');
    const a = await raw(c, follower, `/v1/leases/${L}/acquire`, {
      json: { holder: 'A', ttlMs: 30000 },
    });
    t.equal(a.status, 200);
    t.same(
      keysOf(a.body),
      ['fencingToken', 'holder', 'name', 'ttlMs'],
      'acquire: {name, holder, fencingToken, ttlMs}',
    );
    t.ok(
      isInt(a.body.fencingToken) && a.body.fencingToken > 0,
      'fencingToken is a positive JSON integer',
    );
    t.equal(a.body.ttlMs, 30000);
    const tok = a.body.fencingToken as number;

    const again = await raw(c, leader, `/v1/leases/${L}/acquire`, {
      json: { holder: 'A', ttlMs: 30000 },
    });
    t.equal(
      again.body.fencingToken,
      tok,
      'acquire by the holder that holds it returns the same token',
    );

    const g = await raw(c, follower, `/v1/leases/${L}`);
    t.same(
      keysOf(g.body),
      ['fencingToken', 'holder', 'name', 'remainingMs', 'ttlMs'],
      'GET: {name, holder, fencingToken, ttlMs, remainingMs}',
    );
    t.ok(
      isInt(g.body.remainingMs) && g.body.remainingMs > 0 && g.body.remainingMs <= 30000,
      'remainingMs is an integer in (0, ttlMs]',
    );
    t.equal(g.headers['tenure-stale'], undefined, 'a linearizable read has no Tenure-Stale header');

    const list = await raw(c, follower, `/v1/leases?prefix=${L}&limit=10`);
    t.same(keysOf(list.body), ['leases', 'nextCursor']);
    t.equal(list.body.nextCursor, null, 'one page: no cursor');
    t.equal(list.body.leases.length, 1);
    t.same(keysOf(list.body.leases[0]), keysOf(g.body), 'list entries have the GET shape');
    t.match(list.body.leases[0], { name: L, holder: 'A', fencingToken: tok, ttlMs: 30000 });

    const r = await raw(c, follower, `/v1/leases/${L}/renew`, {
      json: { holder: 'A', fencingToken: tok },
    });
    t.same(
      r.body,
      { name: L, holder: 'A', fencingToken: tok, ttlMs: 30000 },
      'renew: {name, holder, fencingToken, ttlMs}',
    );

    const rel = await raw(c, follower, `/v1/leases/${L}/release`, {
      json: { holder: 'A', fencingToken: tok },
    });
    t.same(rel.body, { name: L, released: true }, 'release: {name, released: true}');

    const gone = await raw(c, follower, `/v1/leases/${L}`);
    t.equal(gone.status, 404, 'a released lease reads as 404');
    t.ok(isError(gone.body, 'not_found'));
    const w = await raw(c, follower, `/v1/leases/${L}/watch?afterToken=${tok}&timeoutMs=1000`);
    t.same(
      w.body,
      { name: L, holder: null, fencingToken: null, changed: true },
      'watch of a gone lease: {name, holder: null, fencingToken: null, changed}',
    );

    const next = await raw(c, leader, `/v1/leases/${L}/acquire`, {
      json: { holder: 'B', ttlMs: 30000 },
    });
    t.ok(next.body.fencingToken > tok, 'a new grant has a higher token');
  });

  t.test('elections', async (t) => {
    const G = uniq('shape-group');
    const empty = await raw(c, follower, `/v1/elections/${G}`);
    t.equal(empty.status, 200, 'an empty group is never 404');
    t.same(empty.body, { group: G, leader: null, candidates: [], revision: 0 });

    const c1 = await raw(c, follower, `/v1/elections/${G}/campaign`, {
      json: { candidate: 'c1', ttlMs: 30000 },
    });
    t.same(keysOf(c1.body), ['candidate', 'elected', 'fencingToken', 'group', 'leader']);
    t.equal(c1.body.elected, true);
    t.ok(isInt(c1.body.fencingToken));
    t.same(
      c1.body.leader,
      { candidate: 'c1', value: null, fencingToken: c1.body.fencingToken },
      'leader {candidate, value: null, fencingToken}',
    );
    const c2 = await raw(c, leader, `/v1/elections/${G}/campaign`, {
      json: { candidate: 'c2', ttlMs: 30000, value: { addr: 'x' } },
    });
    t.equal(c2.body.elected, false);
    t.notOk('fencingToken' in c2.body, 'a candidate that is not elected gets no fencingToken');

    const v1 = await raw(c, follower, `/v1/elections/${G}`);
    t.same(keysOf(v1.body), ['candidates', 'group', 'leader', 'revision']);
    t.same(
      v1.body.candidates,
      [
        { candidate: 'c1', value: null },
        { candidate: 'c2', value: { addr: 'x' } },
      ],
      'candidates queue in order, [{candidate, value}]',
    );
    t.equal(
      v1.body.candidates[0].candidate,
      v1.body.leader.candidate,
      'leader is the head of candidates',
    );
    t.ok(isInt(v1.body.revision) && v1.body.revision > 0);

    const rn = await raw(c, follower, `/v1/elections/${G}/renew`, { json: { candidate: 'c1' } });
    t.same(keysOf(rn.body), keysOf(c1.body), 'renew has the campaign shape');

    const p = await raw(c, follower, `/v1/elections/${G}/proclaim`, {
      json: { candidate: 'c1', fencingToken: c1.body.fencingToken, value: 'v2' },
    });
    t.same(
      p.body,
      { group: G, leader: { candidate: 'c1', value: 'v2', fencingToken: c1.body.fencingToken } },
      'proclaim: {group, leader}; token unchanged',
    );
    const v2 = await raw(c, follower, `/v1/elections/${G}`);
    t.ok(v2.body.revision > v1.body.revision, 'revision increases on a change of value');

    const rs = await raw(c, follower, `/v1/elections/${G}/resign`, { json: { candidate: 'c1' } });
    t.same(rs.body, { group: G, resigned: true });
    const v3 = await raw(c, follower, `/v1/elections/${G}`);
    t.equal(v3.body.leader.candidate, 'c2', 'the next candidate leads');
    t.ok(v3.body.leader.fencingToken > c1.body.fencingToken, 'with a higher token');
    t.ok(v3.body.revision > v2.body.revision, 'revision increases on a change of leader');

    const f = await raw(c, follower, '/v1/fence/check', {
      json: { election: G, fencingToken: v3.body.leader.fencingToken },
    });
    t.same(f.body, { valid: true, current: v3.body.leader.fencingToken });
    const stale = await raw(c, follower, '/v1/fence/check', {
      json: { election: G, fencingToken: c1.body.fencingToken },
    });
    t.same(stale.body, { valid: false, current: v3.body.leader.fencingToken });
  });

  t.test('fence check on never-granted resources', async (t) => {
    for (const res of [{ lease: uniq('never') }, { election: uniq('never') }]) {
      const f = await raw(c, follower, '/v1/fence/check', { json: { ...res, fencingToken: 1 } });
      t.equal(f.status, 200);
      t.same(f.body, { valid: false, current: null }, JSON.stringify(res));
    }
  });

  t.test('KV revisions are global log indexes', async (t) => {
    const k1 = uniq('kv');
    const k2 = uniq('kv');
    const p1 = await raw(c, follower, `/v1/kv/${k1}`, {
      method: 'PUT',
      json: { value: { a: 1 }, ifRevision: 0 },
    });
    t.same(keysOf(p1.body), ['key', 'revision']);
    t.ok(isInt(p1.body.revision));
    const dup = await raw(c, follower, `/v1/kv/${k1}`, {
      method: 'PUT',
      json: { value: 2, ifRevision: 0 },
    });
    t.equal(dup.status, 409, 'ifRevision 0 = create only if absent');
    t.ok(isError(dup.body, 'revision_mismatch'));
    const p2 = await raw(c, leader, `/v1/kv/${k2}`, { method: 'PUT', json: { value: 'x' } });
    t.ok(p2.body.revision > p1.body.revision, 'a write to another key moves the global revision');
    const cl = await raw(c, leader, '/v1/cluster');
    t.ok(p2.body.revision <= cl.body.commitIndex, 'revision is a log index (≤ commitIndex)');
    const wrong = await raw(c, follower, `/v1/kv/${k1}`, {
      method: 'PUT',
      json: { value: 3, ifRevision: p1.body.revision + 1 },
    });
    t.equal(wrong.status, 409);
    t.ok(isError(wrong.body, 'revision_mismatch'));
    const ok = await raw(c, follower, `/v1/kv/${k1}`, {
      method: 'PUT',
      json: { value: 3, ifRevision: p1.body.revision },
    });
    t.equal(ok.status, 200);
    const g = await raw(c, follower, `/v1/kv/${k1}`);
    t.same(
      g.body,
      { key: k1, value: 3, revision: ok.body.revision },
      'GET: {key, value, revision}',
    );
    const d = await raw(c, follower, `/v1/kv/${k1}`, { method: 'DELETE', json: {} });
    t.same(d.body, { key: k1, deleted: true });
    t.equal((await raw(c, follower, `/v1/kv/${k1}`)).status, 404);
    const re = await raw(c, follower, `/v1/kv/${k1}`, {
      method: 'PUT',
      json: { value: null, ifRevision: 0 },
    });
    t.equal(re.status, 200, 'ifRevision 0 after delete creates again');
    t.same(
      (await raw(c, follower, `/v1/kv/${k1}`)).body,
      { key: k1, value: null, revision: re.body.revision },
      'a null value is stored as null',
    );
  });

  t.test('/v1/cluster members', async (t) => {
    for (const id of ids) {
      const v = await raw(c, id, '/v1/cluster');
      t.equal(v.body.id, id);
      t.equal(v.body.leader, leader);
      for (const f of ['term', 'commitIndex', 'appliedIndex'])
        t.ok(isInt(v.body[f]), `${id}: ${f} integer`);
      t.equal(v.body.members.length, 3);
      for (const m of v.body.members as Record<string, unknown>[]) {
        t.ok(typeof m['id'] === 'string' && /^n\d$/.test(m['id']), 'id is a string like n1');
        t.ok(['leader', 'follower', 'candidate', 'learner'].includes(m['role'] as string), 'role');
        t.match(m['httpAddress'], /^[^:]+:\d+$/, 'httpAddress host:port');
        t.match(m['raftAddress'], /^[^:]+:\d+$/, 'raftAddress host:port');
        for (const k of Object.keys(m))
          t.ok(
            [
              'id',
              'role',
              'httpAddress',
              'raftAddress',
              'matchIndex',
              'lastContactMs',
              'reachable',
              'lagEntries',
            ].includes(k),
            `member field ${k} is in docs/api.md`,
          );
      }
      t.equal(
        (v.body.members as { id: string; role: string }[]).find((m) => m.role === 'leader')?.id,
        leader,
      );
    }
  });

  t.test('Tenure-Leader on every response from every node; health, metrics, docs', async (t) => {
    const paths: [string, RequestInit?][] = [
      ['/healthz'],
      ['/readyz'],
      ['/metrics'],
      ['/docs'],
      ['/docs/json'],
      ['/v1/cluster'],
      ['/no/such/route'],
      ['/v1/leases/a%2Fb'],
      ['/v1/leases/never-held-x'],
      ['/v1/elections/g-x'],
      ['/v1/kv/never-k'],
    ];
    for (const id of ids) {
      for (const [p] of paths) {
        const r = await raw(c, id, p);
        t.equal(r.headers['tenure-leader'], leader, `${id} GET ${p} (${r.status})`);
      }
      const bad = await raw(c, id, '/v1/leases/x/acquire', {
        method: 'POST',
        rawBody: '{"holder":"a","ttlMs":1000}',
        headers: { 'content-type': 'text/plain' },
      });
      t.equal(bad.status, 415);
      t.equal(bad.headers['tenure-leader'], leader, `${id} 415`);
      const st = await raw(c, id, `/v1/leases/never-held-x?consistency=stale`);
      t.equal(
        st.headers['tenure-stale'],
        'true',
        `${id}: ?consistency=stale says Tenure-Stale: true`,
      );
      const ready = await raw(c, id, '/readyz');
      t.equal(ready.status, 200, `${id} ready`);
      t.equal((await raw(c, id, '/healthz')).status, 200);
    }
    const m = await raw(c, leader, '/metrics');
    t.match(m.headers['content-type'], /^text\/plain/, 'metrics are Prometheus text');
    t.match(m.text, /^# (HELP|TYPE) /m);
    t.match(m.text, /^tenure_raft_term \d+/m);
    t.match(m.text, /^tenure_raft_commit_index \d+/m);
    const docs = await raw(c, follower, '/docs/json');
    t.match(docs.body?.openapi, /^3\./, 'OpenAPI document');
    const paths3 = Object.keys(docs.body?.paths ?? {});
    for (const p of [
      '/v1/leases/{name}/acquire',
      '/v1/leases/{name}/renew',
      '/v1/leases/{name}/release',
      '/v1/leases/{name}',
      '/v1/leases',
      '/v1/leases/{name}/watch',
      '/v1/elections/{group}/campaign',
      '/v1/elections/{group}/renew',
      '/v1/elections/{group}/resign',
      '/v1/elections/{group}/proclaim',
      '/v1/elections/{group}',
      '/v1/elections/{group}/observe',
      '/v1/fence/check',
      '/v1/kv/{key}',
      '/v1/cluster',
    ]) {
      t.ok(paths3.includes(p), `/docs describes ${p}`);
    }
    t.equal((await raw(c, follower, '/docs')).status, 200);
  });

  t.test('error shape and unknown routes', async (t) => {
    const nf = await raw(c, follower, '/v1/nope', { json: {}, headers: T });
    t.equal(nf.status, 404);
    t.ok(isError(nf.body, 'not_found'), 'unknown route: 404 not_found in the error shape');
    const held = uniq('held');
    await raw(c, leader, `/v1/leases/${held}/acquire`, { json: { holder: 'A', ttlMs: 30000 } });
    const h = await raw(c, follower, `/v1/leases/${held}/acquire`, {
      json: { holder: 'B', ttlMs: 30000 },
    });
    t.equal(h.status, 409);
    t.ok(isError(h.body, 'held'));
    t.equal(h.body.error.holder, 'A', 'held names the current holder');
  });
});

// Proves the membership routes (plugins/members.ts, docs/api.md "Membership") over the fake Raft:
// the member list and one member's local view, idempotent add and promote, address validation,
// refusal codes mapped to HTTP errors, and the `--join` settings.
import t from 'tap';
import { MembershipChangeError } from '@tenure/raft';
import { loadConfig } from '../src/config.js';
import { harness, PEERS, send } from './fixtures/harness.js';

t.test('list, local view, idempotent add and promote, validation, refusals', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const list = await h.app.inject({ method: 'GET', url: '/v1/cluster/members' });
  t.equal(list.statusCode, 200);
  t.same(
    list.json().members.map((m: { id: string; role: string }) => `${m.id}:${m.role}`),
    ['n1:leader', 'n2:follower', 'n3:follower'],
  );
  t.equal(list.json().configIndex, 0);
  const view = await h.app.inject({ method: 'GET', url: '/v1/cluster/members/n2' });
  t.match(view.json(), { id: 'n2', from: 'n1', member: true, leader: 'n1' });
  const stranger = await h.app.inject({ method: 'GET', url: '/v1/cluster/members/n9' });
  t.match(stranger.json(), { member: false });

  const same = { id: 'n2', raftAddress: '127.0.0.1:7102', httpAddress: '127.0.0.1:7002' };
  t.equal((await send(h.app, 'POST', '/v1/cluster/members', same)).statusCode, 200, 'no-op add');
  const moved = await send(h.app, 'POST', '/v1/cluster/members', { ...same, raftAddress: 'x:1' });
  t.equal(moved.json().error.code, 'already_exists');
  const bad = await send(h.app, 'POST', '/v1/cluster/members', {
    ...same,
    id: 'n4',
    httpAddress: 'nope',
  });
  for (const [field, taken] of [
    ['raftAddress', { raftAddress: '127.0.0.1:7101' }],
    ['httpAddress', { httpAddress: '127.0.0.1:7001' }],
  ] as const) {
    const r = await send(h.app, 'POST', '/v1/cluster/members', { ...same, id: 'n9', ...taken });
    t.equal(r.statusCode, 409, `${field} of n1 is taken`);
    t.match(r.json().error, { code: 'already_exists', field: `body.${field}`, member: 'n1' });
  }
  for (const [raftAddress, httpAddress, field, why] of [
    ['localhost:7101', '127.0.0.1:7009', 'raftAddress', "localhost:7101 is n1's 127.0.0.1:7101"],
    ['127.0.0.1:7109', '127.0.0.1:7101', 'httpAddress', "an HTTP address on n1's Raft listener"],
  ] as const) {
    const r = await send(h.app, 'POST', '/v1/cluster/members', {
      id: 'n9',
      raftAddress,
      httpAddress,
    });
    t.equal(r.statusCode, 409, why);
    t.match(r.json().error, { field: `body.${field}`, member: 'n1' });
  }
  const sameWritten = { id: 'n2', raftAddress: 'localhost:7102', httpAddress: 'LOCALHOST:7002' };
  t.equal(
    (await send(h.app, 'POST', '/v1/cluster/members', sameWritten)).statusCode,
    200,
    'a member at its own addresses written differently: no-op add',
  );
  const oneListener = await send(h.app, 'POST', '/v1/cluster/members', {
    id: 'n9',
    raftAddress: 'localhost:7109',
    httpAddress: '127.0.0.1:7109',
  });
  t.equal(oneListener.statusCode, 400, 'one listener for both, written differently');
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().error.field, 'body.httpAddress');
  t.equal((await send(h.app, 'POST', '/v1/cluster/members/n2/promote')).statusCode, 200);
  t.equal((await send(h.app, 'POST', '/v1/cluster/members/n9/promote')).statusCode, 404);
  t.same(h.raft.membershipChanges, [], 'no-ops never reach Raft');

  const same8 = { id: 'n8', raftAddress: '127.0.0.1:7108', httpAddress: '127.0.0.1:7108' };
  const clash = await send(h.app, 'POST', '/v1/cluster/members', same8);
  t.equal(clash.statusCode, 400, 'one address for both');
  t.match(clash.json().error, { code: 'invalid_argument', field: 'body.httpAddress' });
  for (const field of ['raftAddress', 'httpAddress'] as const) {
    // Port 0 and wildcard hosts name no listener another member could dial.
    for (const undiallable of ['127.0.0.1:0', '0.0.0.0:7109', '[::]:7109']) {
      const ok = { id: 'n8', raftAddress: '127.0.0.1:7108', httpAddress: '127.0.0.1:7008' };
      const body = { ...ok, [field]: undiallable };
      const r = await send(h.app, 'POST', '/v1/cluster/members', body);
      t.equal(r.statusCode, 400, `${undiallable} in ${field}`);
      t.match(r.json().error, { code: 'invalid_argument', field: `body.${field}` });
    }
  }
  h.raft.membershipAnswer = () => Promise.resolve(h.raft.status());
  const n4 = { id: 'n4', raftAddress: '127.0.0.1:7104', httpAddress: '127.0.0.1:7004' };
  const added = await send(h.app, 'POST', '/v1/cluster/members', n4);
  t.equal(added.statusCode, 200);
  t.match(h.raft.membershipChanges[0], { type: 'addLearner', id: 'n4' });
  for (const [reason, status, code] of [
    ['reconfiguration_in_progress', 409, 'reconfiguration_in_progress'],
    ['not_caught_up', 409, 'not_caught_up'],
    ['not_a_member', 404, 'not_found'],
    ['last_voter', 400, 'invalid_argument'],
    ['leader_not_ready', 503, 'no_leader'],
  ] as const) {
    h.raft.membershipAnswer = () => Promise.reject(new MembershipChangeError(reason, reason));
    const r = await send(h.app, 'DELETE', '/v1/cluster/members/n3');
    t.equal(r.statusCode, status, reason);
    t.equal(r.json().error.code, code, reason);
    if (reason === 'last_voter') t.equal(r.json().error.field, 'params.id', 'names the field');
  }
});

t.test('--join settings', async (t) => {
  const joined = loadConfig(
    [
      '--id',
      'n4',
      '--join',
      'http://127.0.0.1:7001/',
      '--http',
      '127.0.0.1:7004',
      '--raft',
      '127.0.0.1:7104',
    ],
    {},
  );
  t.equal(joined.join, 'http://127.0.0.1:7001');
  t.same(joined.peers, [
    { id: 'n4', raftAddress: '127.0.0.1:7104', httpAddress: '127.0.0.1:7004' },
  ]);
  t.throws(() => loadConfig(['--id', 'n4', '--join', 'http://a:1'], {}), /--http/);
  t.throws(() => loadConfig(['--id', 'n4', '--join', 'ftp://a:1'], {}), /http:\/\//);
  t.throws(() => loadConfig(['--id', 'n4'], {}), /--join/);
  t.equal(loadConfig(['--id', 'n1', '--peers', PEERS], {}).join, null);
});

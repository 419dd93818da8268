// Proves `--join` refuses at once, saying why, where it used to wait forever (docs/operations.md,
// docs/security.md): a member that answers 401 (auth on, no admin token in TENURE_ROOT_TOKEN), an
// https:// --join to a member serving plain HTTP (an http:// one to a TLS member is retried with a
// hint: a restarting member also closes the connection), and
// a cluster whose id is not this node's (its Raft peers would refuse each other for good); and data
// of a member removed while it was down (the cluster's membership no longer lists it); an empty node
// under a voter's id (it lost its vote and log). A joined node with data starts on its own data
// when nobody answers. Without --cluster-id, a joining node takes the cluster's id; stored data keeps its own.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LevelRaftStorage, storedClusterId } from '@tenure/raft';
import { pino } from 'pino';
import t from 'tap';
import { loadConfig } from '../src/config.js';
import { createCa, issueNodeCert } from '../src/cluster/certificates.js';
import {
  joinPeers,
  peerCalls,
  refuseRemovedData,
  RemovedDataError,
  requestJoin,
  settleClusterId,
  StartRefusedError,
} from '../src/cluster/membership-startup.js';
import { harness } from './fixtures/harness.js';

async function member(args: string[]): Promise<{ url: string; close: () => Promise<void> }> {
  const h = await harness(args);
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`,
    close: h.close,
  };
}

function joiner(join: string, extra: string[], env: NodeJS.ProcessEnv = {}) {
  return loadConfig(
    ['--id', 'n9', '--join', join, '--http', '127.0.0.1:1', '--raft', '127.0.0.1:2', ...extra],
    env,
  );
}

async function refusal(config: ReturnType<typeof joiner>): Promise<unknown> {
  const calls = peerCalls(config);
  try {
    return await joinPeers(config, calls, pino({ level: 'silent' }), {
      empty: true,
      attemptsMax: 3,
    }).catch((e: unknown) => e);
  } finally {
    await calls.dispatcher.close();
  }
}

t.test('a member that answers 401: refused, naming TENURE_ROOT_TOKEN', async (t) => {
  const m = await member(['--auth']);
  t.teardown(m.close);
  const err = await refusal(joiner(m.url, ['--auth']));
  t.ok(err instanceof StartRefusedError, 'refused at once');
  t.match((err as Error).message, /401[\s\S]*admin token in TENURE_ROOT_TOKEN/);
});

t.test('a cluster with another id: refused, naming the id to use', async (t) => {
  const m = await member([]);
  t.teardown(m.close);
  const err = await refusal(joiner(m.url, ['--cluster-id', 'not-theirs']));
  t.ok(err instanceof StartRefusedError, 'refused at once');
  t.match((err as Error).message, /has cluster id "[^"]+" and this node "not-theirs"/);
  t.match((err as Error).message, /--cluster-id /);
});

t.test(
  'an https:// join to a member serving plain HTTP: refused, naming the http:// URL',
  async (t) => {
    const m = await member([]);
    t.teardown(m.close);
    const https = m.url.replace(/^http:/, 'https:');
    const err = await refusal(joiner(https, []));
    t.ok(err instanceof StartRefusedError, 'refused at once');
    t.match((err as Error).message, `the member answered in plain HTTP, not TLS; use ${m.url}`);
  },
);

t.test('an http:// join to a TLS member: retried, with an https:// hint in the log', async (t) => {
  const ca = createCa('join CA');
  const cert = issueNodeCert(ca, { commonName: 'm1', hosts: ['127.0.0.1'] });
  const server = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, (_req, res) =>
    res.end('{}'),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const config = joiner(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, []);
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const calls = peerCalls(config);
  t.teardown(() => calls.dispatcher.close());
  const peers = await joinPeers(config, calls, log, { empty: true, attemptsMax: 1 });
  t.equal(peers, null, 'no member answered: not refused (a restarting member closes too)');
  t.match(lines[0], {
    msg: 'waiting for the cluster',
    failure: 'other side closed',
    hint: /not its Raft address.*use https:\/\//,
  });
});

t.test('a join to an address where nothing listens: retried, with a hint in the log', async (t) => {
  const closed = createServer();
  closed.listen(0, '127.0.0.1');
  await once(closed, 'listening');
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const config = joiner(`http://127.0.0.1:${port}`, []);
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const calls = peerCalls(config);
  t.teardown(() => calls.dispatcher.close());
  t.equal(await joinPeers(config, calls, log, { empty: true, attemptsMax: 1 }), null);
  t.match(lines[0], {
    failure: /ECONNREFUSED/,
    hint: /^nothing listens there: check that --join is a member's HTTP address/,
  });
});

/** A member that answers GET /v1/cluster/members with `members` at `configIndex`. */
async function membersAt(
  ids: string[],
  configIndex: number,
): Promise<{ url: string; close: () => Promise<void> }> {
  const members = ids.map((id) => ({
    id,
    role: 'follower',
    raftAddress: 'x:1',
    httpAddress: 'x:2',
  }));
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ members, configIndex }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

t.test('--join on data of a member removed while it was down: refused, saying why', async (t) => {
  const m = await membersAt(['n1', 'n2', 'n3'], 40);
  t.teardown(m.close);
  const config = joiner(m.url, []);
  const calls = peerCalls(config);
  t.teardown(() => calls.dispatcher.close());
  const removed = await refuseRemovedData(config, calls, {
    lastLogIndex: 30,
    configIndex: 12,
  }).catch((e: unknown) => e);
  t.ok(removed instanceof RemovedDataError, 'data up to membership 12, cluster at 40 without n9');
  t.match(
    (removed as Error).message,
    /log up to 30\), but the cluster's membership 40 does not list n9[\s\S]*empty data/,
  );
  await t.rejects(
    refuseRemovedData(config, calls, { lastLogIndex: 30, configIndex: 0 }),
    RemovedDataError,
    'a never-changed membership (bootstrap, index 0): refused too',
  );
});

t.test('--join on data the cluster still lists, or newer, or none: goes on', async (t) => {
  const listed = await membersAt(['n1', 'n9'], 40);
  t.teardown(listed.close);
  const stale = await membersAt(['n1', 'n2'], 10);
  t.teardown(stale.close);
  for (const [url, configIndex, why] of [
    [listed.url, 12, 'the cluster lists n9 (a join restarted mid-way)'],
    [stale.url, 12, 'its own membership is newer (an add a leader change lost)'],
    [stale.url, 0, 'no replicated data (a new node)'],
    ['http://127.0.0.1:1', 12, 'nobody answers'],
  ] as const) {
    const config = joiner(url, []);
    const calls = peerCalls(config);
    t.equal(
      await refuseRemovedData(config, calls, {
        lastLogIndex: configIndex === 0 ? 0 : 30,
        configIndex,
      }),
      undefined,
      why,
    );
    await calls.dispatcher.close();
  }
});

t.test(
  '--join with an empty data directory under a voter id: refused (it lost its vote and log)',
  async (t) => {
    const voter = await membersAt(['n1', 'n9'], 40);
    t.teardown(voter.close);
    const err = await refusal(joiner(voter.url, []));
    t.ok(err instanceof StartRefusedError, 'refused');
    t.match(
      (err as Error).message,
      /lists n9 as a voter[\s\S]*lost its vote and log[\s\S]*remove n9/,
    );
  },
);

t.test(
  '--join goes on: a listed learner, a voter with data; nobody answering gives null',
  async (t) => {
    const learner = await membersAt(['n1'], 40);
    t.teardown(learner.close);
    const withLearner = createServer((_req, res) =>
      res.end(
        JSON.stringify({
          configIndex: 41,
          members: [
            { id: 'n1', role: 'leader', raftAddress: 'x:1', httpAddress: 'x:2' },
            { id: 'n9', role: 'learner', raftAddress: 'y:1', httpAddress: 'y:2' },
          ],
        }),
      ),
    );
    await new Promise<void>((r) => withLearner.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => withLearner.close(() => r())));
    const learnerUrl = `http://127.0.0.1:${(withLearner.address() as AddressInfo).port}`;
    const voter = await membersAt(['n1', 'n9'], 40);
    t.teardown(voter.close);
    const log = pino({ level: 'silent' });
    for (const [url, empty, attemptsMax, want, why] of [
      [learnerUrl, true, 3, ['n9', 'n1'], 'an empty learner (a join restarted after a wipe)'],
      [voter.url, false, 3, ['n9', 'n1'], 'a voter restarted on its data'],
      ['http://127.0.0.1:1', false, 1, null, 'nobody answers'],
    ] as const) {
      const config = joiner(url, []);
      const calls = peerCalls(config);
      const peers = await joinPeers(config, calls, log, { empty, attemptsMax });
      t.same(peers?.map((p) => p.id) ?? null, want, why);
      await calls.dispatcher.close();
    }
  },
);

t.test(
  'without --cluster-id: the stored id wins, and a --join node with no data takes the cluster id',
  async (t) => {
    const server = createServer((_req, res) =>
      res.end(JSON.stringify({ clusterId: 'local-4f2a' })),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => server.close(() => r())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dir = mkdtempSync(join(tmpdir(), 'cluster-id-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const settle = async (extra: string[]) => {
      const config = joiner(url, ['--data-dir', join(dir, 'n9'), ...extra]);
      const calls = peerCalls(config);
      try {
        return (await settleClusterId(config, calls)).clusterId;
      } finally {
        await calls.dispatcher.close();
      }
    };
    t.equal(
      await settle([]),
      'local-4f2a',
      'an empty --join node takes the id of the cluster it joins',
    );
    t.equal(
      await settle(['--cluster-id', 'mine']),
      'mine',
      'a given id is kept (and checked later)',
    );
    const storage = await LevelRaftStorage.open({
      dataDir: join(dir, 'n9'),
      clusterId: 'stored-1',
      nodeId: 'n9',
    });
    await storage.close();
    t.equal(await storedClusterId(join(dir, 'n9')), 'stored-1');
    t.equal(await storedClusterId(join(dir, 'none')), null, 'no data: null');
    t.notOk(existsSync(join(dir, 'none')), 'and the directory is not created');
    mkdirSync(join(dir, 'empty'));
    t.equal(await storedClusterId(join(dir, 'empty')), null, 'an empty directory: null');
    t.same(
      readdirSync(join(dir, 'empty')),
      [],
      'and it stays empty (a wiped voter is still caught)',
    );
    t.equal(await settle([]), 'stored-1', 'the data directory’s id wins over the cluster asked');
  },
);

t.test(
  'requestJoin checks the data before each ask (no leader may have answered at start)',
  async (t) => {
    const m = await membersAt(['n1', 'n2', 'n3'], 40);
    t.teardown(m.close);
    const config = joiner(m.url, []);
    const calls = peerCalls(config);
    t.teardown(() => calls.dispatcher.close());
    const log = pino({ level: 'silent' });
    const err = await requestJoin(
      config,
      calls,
      log,
      () => false,
      () => ({
        lastLogIndex: 30,
        configIndex: 12,
      }),
    ).catch((e: unknown) => e);
    t.ok(
      err instanceof RemovedDataError,
      'refused as a removed member’s data, before asking to join',
    );
  },
);

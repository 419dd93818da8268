// Proves membership changes on real processes (docs/operations.md): a SIGKILLed node whose disk is lost is refused at start (with --peers or --join), its old data is refused with --join once it was removed, then it is replaced (remove, wipe, --join, promote) and the cluster survives the loss of any other node (it restarts with its --join while the named member is down); a cluster grows 3 → 5 → 3 (removing the leader too) under a writer without losing an acknowledged write; a changed --peers never changes the voters.
import t from 'tap';
import { pollUntil } from '@tenure/testkit';
import { cpSync, readFileSync } from 'node:fs';
import { LocalCluster } from '../support/cluster.js';
import { retrying } from '../support/http-client.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Bounds a broken cluster only (a loaded 2-core machine is slow, never this slow). */
const UNTIL_MS = 120_000;

interface Members {
  members: { id: string; role: string; raftAddress: string; httpAddress: string }[];
  configIndex: number;
}

/** Polls `check` until it returns a value (not undefined/false); fails after UNTIL_MS. */
const until = <T>(what: string, check: () => Promise<T>) =>
  pollUntil(what, check, { timeoutMs: UNTIL_MS, intervalMs: 100 });

/** A membership change through any node, retried on 503/504 and while another change commits. */
async function change(c: LocalCluster, method: string, path: string, body?: unknown) {
  return until(`${method} ${path}`, async () => {
    const a = await retrying<Members>(c, method, path, body, { totalMs: UNTIL_MS });
    if (
      a.status === 409 &&
      /reconfiguration_in_progress|not_caught_up/.test(JSON.stringify(a.body))
    )
      return undefined;
    return a;
  });
}

/** The members in the leader's view, as `id:role` sorted. */
async function roles(c: LocalCluster): Promise<string[]> {
  const a = await retrying<Members>(c, 'GET', '/v1/cluster/members', undefined, {
    totalMs: UNTIL_MS,
  });
  return a.body.members.map((m) => `${m.id}:${m.role === 'leader' ? 'follower' : m.role}`).sort();
}

async function ready(c: LocalCluster, id: string): Promise<void> {
  await until(
    `${id} ready`,
    async () => (await c.request(id, 'GET', '/readyz', undefined, {}, 5000)).status === 200,
  );
}

async function put(c: LocalCluster, key: string, value: unknown): Promise<number> {
  const a = await retrying(c, 'PUT', `/v1/kv/${key}`, { value }, { totalMs: UNTIL_MS });
  if (a.status !== 200) throw new Error(`PUT ${key}: ${a.status} ${JSON.stringify(a.body)}`);
  return a.status;
}

async function get(c: LocalCluster, key: string): Promise<unknown> {
  const a = await retrying(c, 'GET', `/v1/kv/${key}`, undefined, { totalMs: UNTIL_MS });
  return a.status === 200 ? (a.body as { value: unknown }).value : `status ${a.status}`;
}

t.test(
  'replace a SIGKILLed node with a lost disk, then survive the loss of any other',
  async (t) => {
    const c = await LocalCluster.start({ logLevel: 'info' });
    t.teardown(() => c.teardown());
    await c.waitForLeader();
    await put(c, 'before', 1);
    await ready(c, 'n3');
    // n3 leads when it dies: the refusal must not depend on another leader having seen it ack.
    await until('n3 leads', async () => {
      await retrying(
        c,
        'POST',
        '/v1/cluster/transfer-leadership',
        { to: 'n3' },
        { totalMs: 10_000 },
      );
      return (await c.waitForLeader()) === 'n3';
    });
    await c.kill('n3');
    const kept = `${c.node('n3').dataDir}-kept`;
    cpSync(c.node('n3').dataDir, kept, { recursive: true });
    c.wipe('n3');

    await t.rejects(c.restart('n3'), /exited during start/, 'a wiped member is refused');
    t.equal(await c.waitExit('n3'), 2, 'exit code 2');
    t.match(readFileSync(c.node('n3').logFile, 'utf8'), /lost its vote and log[\s\S]*--join/);
    await t.rejects(
      c.restart('n3', undefined, { join: c.node('n1').url }),
      /exited during start/,
      'a wiped voter is refused with --join too',
    );
    t.equal(await c.waitExit('n3'), 2, 'exit code 2');
    t.match(readFileSync(c.node('n3').logFile, 'utf8'), /lists n3 as a voter/);

    const removed = await change(c, 'DELETE', '/v1/cluster/members/n3');
    t.equal(removed.status, 200, 'n3 removed');
    t.same(await roles(c), ['n1:follower', 'n2:follower']);

    // Its old disk comes back: removed while down, it must not rejoin with that data.
    cpSync(kept, c.node('n3').dataDir, { recursive: true });
    await t.rejects(
      c.restart('n3', undefined, { join: c.node('n1').url }),
      /exited during start/,
      'the data of a member removed while down is refused with --join',
    );
    t.equal(await c.waitExit('n3'), 2, 'exit code 2');
    t.match(readFileSync(c.node('n3').logFile, 'utf8'), /removed while this node was down/);
    t.same(await roles(c), ['n1:follower', 'n2:follower'], 'not added back');
    c.wipe('n3');

    await c.restart('n3', undefined, { join: c.node('n1').url });
    await until('n3 a learner', async () => (await roles(c)).includes('n3:learner'));
    await ready(c, 'n3');
    const promoted = await change(c, 'POST', '/v1/cluster/members/n3/promote');
    t.equal(promoted.status, 200, 'n3 promoted');
    t.same(await roles(c), ['n1:follower', 'n2:follower', 'n3:follower']);
    t.equal(await get(c, 'before'), 1, 'the replaced node serves the old state');

    for (const victim of ['n1', 'n2', 'n3']) {
      await c.kill(victim);
      await c.waitForLeader(UNTIL_MS, c.running());
      await put(c, `without-${victim}`, victim);
      t.equal(await get(c, 'before'), 1, `written data survives the loss of ${victim}`);
      await c.restart(victim, undefined, victim === 'n3' ? { join: c.node('n1').url } : {});
      await ready(c, victim);
    }
    t.same(await roles(c), ['n1:follower', 'n2:follower', 'n3:follower'], 'still three voters');

    // Restarted with its usual --join while the member it names is down, n3 starts on its own
    // data: with n2 it forms a majority.
    await c.kill('n1');
    await c.kill('n3');
    await c.restart('n3', undefined, { join: c.node('n1').url });
    await c.waitForLeader(UNTIL_MS, c.running());
    await put(c, 'n1-down', 1);
    t.equal(await get(c, 'n1-down'), 1, 'n2 and n3 serve writes without n1');
  },
);

t.test('grow 3 → 5 → 3 under a writer: no acknowledged write is lost', async (t) => {
  const c = await LocalCluster.start({ logLevel: 'info' });
  t.teardown(() => c.teardown());
  await c.waitForLeader();
  const acked = new Map<string, number>();
  let stop = false;
  const writer = (async () => {
    for (let i = 0; !stop; i++) {
      const a = await retrying(c, 'PUT', `/v1/kv/w${i}`, { value: i }, { totalMs: UNTIL_MS });
      if (a.status === 200) acked.set(`w${i}`, i);
      await sleep(50); // a steady writer, not a flood: the point is writes across every change
    }
  })();

  for (const id of ['n4', 'n5']) {
    await c.addNode(id);
    await c.restart(id, undefined, { join: c.node('n1').url });
    await ready(c, id);
    t.equal((await change(c, 'POST', `/v1/cluster/members/${id}/promote`)).status, 200);
  }
  t.same(await roles(c), [
    'n1:follower',
    'n2:follower',
    'n3:follower',
    'n4:follower',
    'n5:follower',
  ]);
  // A node added at run time is not in the others' --peers: followers still forward to it.
  await until('n5 leads', async () => {
    await retrying(c, 'POST', '/v1/cluster/transfer-leadership', { to: 'n5' }, { totalMs: 10_000 });
    return (await c.waitForLeader(UNTIL_MS, c.running())) === 'n5';
  });
  const via = await c.request('n1', 'PUT', '/v1/kv/via-n1', { value: 1 });
  t.equal(via.status, 200, `n1 forwards a write to leader n5: ${JSON.stringify(via.body)}`);
  const backup = await c.request('n1', 'GET', '/v1/cluster/snapshot');
  t.equal(backup.status, 200, 'n1 asks leader n5 for the read index of a backup');

  const leader = await c.waitForLeader(UNTIL_MS, c.running());
  const leaderExit = c.waitExit(leader);
  // One request through a follower, not retried: the leader hands over, the new leader (just
  // elected) removes it, the answer comes back through both.
  const removal = await c.request(
    'n1',
    'DELETE',
    `/v1/cluster/members/${leader}`,
    undefined,
    {},
    60_000,
  );
  t.equal(removal.status, 200, `leader removed in one request: ${JSON.stringify(removal.body)}`);
  t.equal(await leaderExit, 0, 'the removed leader exits once it learns it was removed');
  const other = ['n1', 'n2', 'n3', 'n4', 'n5'].find((id) => id !== leader && id !== 'n5')!;
  const otherExit = c.waitExit(other);
  t.equal((await change(c, 'DELETE', `/v1/cluster/members/${other}`)).status, 200);
  t.equal(await otherExit, 0, 'a removed follower exits too');
  const left = ['n1', 'n2', 'n3', 'n4', 'n5'].filter((id) => id !== leader && id !== other);
  t.same(await roles(c), left.map((id) => `${id}:follower`).sort(), 'three voters left');
  // Restarted on its old data, a removed member is refused before it talks to the cluster, with
  // --peers (its stored membership still lists it) and with --join (it would be added again).
  for (const [id, how] of [
    [other, {}],
    [leader, { join: c.node(left[0]!).url }],
  ] as const) {
    await t.rejects(c.restart(id, undefined, how), /exited during start/, `${id} refused`);
    t.equal(await c.waitExit(id), 2, `a removed member restarted on its data exits 2 (${id})`);
    t.match(readFileSync(c.node(id).logFile, 'utf8'), /was removed from the cluster.*wipe/);
  }

  while (acked.size < 20) await sleep(50);
  stop = true;
  await writer;
  const all = [...acked];
  for (let i = 0; i < all.length; i += 25) {
    const batch = all.slice(i, i + 25);
    const values = await Promise.all(batch.map(([key]) => get(c, key)));
    batch.forEach(([key, value], j) => {
      if (values[j] !== value) t.fail(`acknowledged ${key} = ${value} lost`);
    });
  }
  t.pass(`${acked.size} acknowledged writes all read back`);
});

t.test('a changed --peers never changes the voters', async (t) => {
  const c = await LocalCluster.start({ logLevel: 'info' });
  t.teardown(() => c.teardown());
  await c.waitForLeader();
  await put(c, 'k', 1);
  await c.addNode('n4');
  await c.addNode('n5');
  const five = c.peersOf(['n1', 'n2', 'n3', 'n4', 'n5']);

  await c.stop('n1');
  await c.restart('n1', undefined, { peers: five });
  await ready(c, 'n1');
  t.match(readFileSync(c.node('n1').logFile, 'utf8'), /peers differ from the stored membership/);
  t.same(await roles(c), ['n1:follower', 'n2:follower', 'n3:follower'], 'still three voters');

  await t.rejects(c.restart('n4', undefined, { peers: five }), /exited during start/);
  t.equal(await c.waitExit('n4'), 2, 'a new node on a --nodes 5 list is refused: it must --join');
  t.match(readFileSync(c.node('n4').logFile, 'utf8'), /not a member of the existing cluster/);
  await put(c, 'k', 2);
  t.equal(await get(c, 'k'), 2, 'the three voters still commit');
});

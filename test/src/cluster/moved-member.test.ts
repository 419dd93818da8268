// Proves on real processes that a member moved to a new address under its old id (remove, wipe,
// --join at the new address, promote: docs/operations.md "Move a node to a new address") is reached
// there by a follower whose --peers still lists the old address: a write sent to that follower is
// forwarded to the moved member once it leads. Over a minute on a loaded 2-core machine, so
// outside the suite: `npm run test:moved-member` (TENURE_MOVED_MEMBER=1). The suite covers the
// rule with packages/server/test/forwarding.test.ts and member-view.test.ts, and the address book
// with packages/raft/test/runtime/membership-node.test.ts.
import t from 'tap';
import { freePorts } from '@tenure/testkit';
import { LocalCluster } from '../support/cluster.js';
import { retrying } from '../support/http-client.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Bounds a broken cluster only (a loaded 2-core machine is slow, never this slow). */
const UNTIL_MS = 120_000;

/** Polls `check` until it returns a value (not undefined); fails after UNTIL_MS. */
async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + UNTIL_MS;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** A membership change through any node, retried while another change or a catch-up is pending. */
async function change(c: LocalCluster, method: string, path: string): Promise<number> {
  return until(`${method} ${path}`, async () => {
    const a = await retrying(c, method, path, undefined, { totalMs: UNTIL_MS });
    if (
      a.status === 409 &&
      /reconfiguration_in_progress|not_caught_up/.test(JSON.stringify(a.body))
    )
      return undefined;
    return a.status;
  });
}

/** Gives the stopped node `id` new ports (its --peers entry elsewhere keeps the old ones). */
async function moveNode(c: LocalCluster, id: string): Promise<void> {
  const [httpPort, raftPort] = (await freePorts(2)) as [number, number];
  const i = c.nodes.findIndex((n) => n.id === id);
  c.nodes[i] = {
    ...c.nodes[i]!,
    httpPort,
    raftPort,
    httpAddress: `127.0.0.1:${httpPort}`,
    raftAddress: `127.0.0.1:${raftPort}`,
    url: `http://127.0.0.1:${httpPort}`,
  };
}

const skip = process.env.TENURE_MOVED_MEMBER === '1' ? false : 'npm run test:moved-member';

t.test('a follower forwards to a member that moved under its old id', { skip }, async (t) => {
  const c = await LocalCluster.start({ logLevel: 'info' });
  t.teardown(() => c.teardown());
  const leader = await c.waitForLeader();
  const [moving, other] = ['n1', 'n2', 'n3'].filter((id) => id !== leader) as [string, string];

  await c.kill(moving);
  t.equal(await change(c, 'DELETE', `/v1/cluster/members/${moving}`), 200, 'removed');
  c.wipe(moving);
  await moveNode(c, moving);
  await c.restart(moving, undefined, { join: c.node(leader).url });
  await until(`${moving} ready`, async () =>
    (await c.request(moving, 'GET', '/readyz', undefined, {}, 5000)).status === 200
      ? true
      : undefined,
  );
  t.equal(await change(c, 'POST', `/v1/cluster/members/${moving}/promote`), 200, 'promoted');

  await until(`${moving} leads`, async () => {
    await retrying(
      c,
      'POST',
      '/v1/cluster/transfer-leadership',
      { to: moving },
      { totalMs: 10_000 },
    );
    return (await c.waitForLeader(UNTIL_MS, c.running())) === moving ? true : undefined;
  });
  const via = await c.request(other, 'PUT', '/v1/kv/via-moved', { value: 1 });
  t.equal(
    via.status,
    200,
    `${other} forwards to ${moving} at its new address: ${JSON.stringify(via.body)}`,
  );
  t.equal(via.headers['tenure-leader'], moving);
});

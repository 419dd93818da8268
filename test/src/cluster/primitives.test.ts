// Proves sessions, semaphores, shared locks and revoke on a real three-node cluster: 20 concurrent acquirers of a 3-permit semaphore never see more than 3 live permits and get strictly increasing tokens; a session's end (close, or expiry) ends all its grants in one entry with history reason session_ended; a waiting exclusive acquire blocks later shared ones; revoke fences the holder's token.
import t from 'tap';
import { TenureClient, TenureError, type HistoryGrant, type Lease } from '@tenure/client';
import { pollUntil, seededRandom, testSeed } from '../client/support.js';
import { LocalCluster } from '../support/cluster.js';

/** Generous per-call deadline: the machine running the suite is loaded. */
const CALL_TIMEOUT_MS = 30_000;
/** Waits and polls are bounded in minutes, never asserted as timings. */
const WAIT_MS = 60_000;

let cluster: LocalCluster;
let client: TenureClient;

t.before(async () => {
  cluster = await LocalCluster.start();
  await cluster.waitForLeader();
  client = new TenureClient({
    endpoints: cluster.nodes.map((n) => n.url),
    requestTimeoutMs: CALL_TIMEOUT_MS,
  });
});
t.teardown(() => cluster?.teardown());

/** The largest number of grants of `grants` live at one cluster time (end times exclusive). */
function maxOverlap(grants: readonly HistoryGrant[]): number {
  const edges = grants.flatMap((g) => [
    { atMs: g.grantedAtMs, delta: 1 },
    ...(g.endedAtMs === null ? [] : [{ atMs: g.endedAtMs, delta: -1 }]),
  ]);
  // At equal times an end comes before a grant (a release and the next grant share an entry).
  edges.sort((a, b) => a.atMs - b.atMs || a.delta - b.delta);
  let live = 0;
  let max = 0;
  for (const e of edges) max = Math.max(max, (live += e.delta));
  return max;
}

t.test('20 concurrent acquirers of a semaphore of 3: never more than 3 live permits', async (t) => {
  const random = seededRandom(testSeed(11));
  const limit = 3;
  const tokens: number[] = [];
  let clientLive = 0;
  let clientMax = 0;
  const worker = async (i: number): Promise<void> => {
    const permit = await client.semaphore('pool', {
      limit,
      ttlMs: 60_000,
      waitMs: WAIT_MS,
      holder: `worker-${i}`,
    });
    clientMax = Math.max(clientMax, ++clientLive);
    tokens.push(permit.fencingToken);
    const view = await client.getSemaphore('pool');
    t.ok(
      view !== null && view.holders.length <= limit,
      `server view: ${view?.holders.length} ≤ ${limit}`,
    );
    t.ok(
      view?.holders.some((h) => h.fencingToken === permit.fencingToken),
      'our permit is live',
    );
    // Hold a little (seeded), then give the permit back.
    await new Promise((r) => setTimeout(r, Math.floor(random() * 50)));
    clientLive--;
    t.equal(await permit.release(), true);
  };
  await Promise.all(Array.from({ length: 20 }, (_, i) => worker(i)));
  t.equal(tokens.length, 20, 'every acquirer got a permit');
  t.equal(new Set(tokens).size, 20, 'every permit has its own token');
  t.ok(clientMax <= limit, `at most ${limit} permits held at once by the clients (${clientMax})`);
  const history = await client.history('pool', { kind: 'semaphore', limit: 100 });
  t.ok(history.length >= 16, `history keeps at least 16 grants (${history.length})`);
  for (let i = 1; i < history.length; i++)
    t.ok(
      history[i - 1]!.fencingToken > history[i]!.fencingToken,
      'newest first, tokens strictly increasing',
    );
  t.ok(maxOverlap(history) <= limit, `history never shows more than ${limit} live permits`);
  t.ok(history.every((g) => g.endReason === 'released'));
  t.equal(await client.getSemaphore('pool'), null, 'all released');
});

/** History entry of `name`'s grant `fencingToken` once it has ended. */
async function endedGrant(
  kind: 'lease' | 'semaphore',
  name: string,
  fencingToken: number,
): Promise<HistoryGrant> {
  return pollUntil(
    `${kind} ${name} token ${fencingToken} ended`,
    async () => {
      const grants = await client.history(name, { kind });
      const g = grants.find((e) => e.fencingToken === fencingToken);
      return g !== undefined && g.endReason !== null ? g : undefined;
    },
    WAIT_MS,
  );
}

t.test('closing a session ends all its grants in one entry', async (t) => {
  const session = await client.session({ ttlMs: 30_000, name: 'cron' });
  const a = await client.acquire('cron-a', { session });
  const b = await client.acquire('cron-b', { session, mode: 'shared' });
  const p = await client.semaphore('cron-pool', { limit: 2, session });
  const view = await client.getSession(session.sessionId);
  t.match(view, {
    leases: [{ name: 'cron-a' }, { name: 'cron-b' }],
    semaphores: [{ name: 'cron-pool', fencingToken: p.fencingToken }],
  });
  t.equal(await session.close(), true);
  for (const h of [a, b, p]) t.ok(h.signal.aborted, `${h.name}: the handle ended with the session`);
  const ends = [
    await endedGrant('lease', 'cron-a', a.fencingToken),
    await endedGrant('lease', 'cron-b', b.fencingToken),
    await endedGrant('semaphore', 'cron-pool', p.fencingToken),
  ];
  t.ok(ends.every((g) => g.endReason === 'session_ended' && g.session === session.sessionId));
  t.equal(new Set(ends.map((g) => g.endedAtMs)).size, 1, 'all grants ended at one cluster time');
  t.equal(await client.getSession(session.sessionId), null);
  t.equal(await client.getLease('cron-a'), null);
});

t.test('an expired session ends its grants together, once, with session_ended', async (t) => {
  const session = await client.session({ ttlMs: 5000, autoRenew: false });
  const a = await client.acquire('exp-a', { session, autoRenew: false });
  const p = await client.semaphore('exp-pool', { limit: 1, session, autoRenew: false });
  await pollUntil(
    'the session expired',
    async () => (await client.getSession(session.sessionId)) === null,
    WAIT_MS,
  );
  const ends = [
    await endedGrant('lease', 'exp-a', a.fencingToken),
    await endedGrant('semaphore', 'exp-pool', p.fencingToken),
  ];
  t.ok(ends.every((g) => g.endReason === 'session_ended'));
  t.equal(ends[0]!.endedAtMs, ends[1]!.endedAtMs, 'in one entry');
  await t.rejects(client.keepaliveSession(session.sessionId), { code: 'not_found' });
});

t.test('a waiting exclusive acquire blocks later shared acquires (FIFO)', async (t) => {
  const r1 = await client.acquire('cfg', { ttlMs: 60_000, mode: 'shared' });
  const writer = client.acquire('cfg', { ttlMs: 60_000, waitMs: WAIT_MS, holder: 'writer' });
  const leader = await cluster.leader();
  await pollUntil(
    'the exclusive acquire is queued',
    async () => {
      const m = await cluster.request(leader, 'GET', '/metrics');
      const line = String(m.body)
        .split('\n')
        .find((l) => l.startsWith('tenure_lease_waiters '));
      return Number(line?.split(' ')[1]) === 1;
    },
    WAIT_MS,
  );
  await t.rejects(
    client.acquire('cfg', { ttlMs: 60_000, mode: 'shared' }),
    { code: 'held' },
    'a shared acquire after the waiting exclusive one is refused',
  );
  const laterReader = client.acquire('cfg', { ttlMs: 60_000, mode: 'shared', waitMs: WAIT_MS });
  t.equal(await r1.release(), true);
  const w: Lease = await writer;
  t.equal(w.mode, 'exclusive');
  t.ok(w.fencingToken > r1.fencingToken);
  t.equal(await w.release(), true);
  const r2 = await laterReader;
  t.ok(r2.fencingToken > w.fencingToken, 'the later reader is granted after the writer');
  await r2.release();
});

t.test('revoke fences the holder: its fenced write and renew are refused', async (t) => {
  const lease = await client.acquire('job', { ttlMs: 60_000 });
  await client.kv.put('job-out', 1, { fence: { lease: 'job', fencingToken: lease.fencingToken } });
  const lost = new Promise<TenureError>((resolve) => lease.once('lost', resolve));
  t.same(await client.revoke('job', { fencingToken: lease.fencingToken, reason: 'stuck' }), [
    lease.fencingToken,
  ]);
  await t.rejects(
    client.kv.put('job-out', 2, { fence: { lease: 'job', fencingToken: lease.fencingToken } }),
    { code: 'stale_token' },
  );
  await t.rejects(lease.renew());
  t.ok(['not_holder', 'lease_expired'].includes((await lost).code), 'the handle is lost');
  const [g] = await client.history('job', { limit: 1 });
  t.match(g, { fencingToken: lease.fencingToken, endReason: 'revoked' });
  t.same(
    await client.kv.get('job-out').then((v) => v?.value),
    1,
    'only the write under the live grant',
  );
});

// Proves BC-02 on a real three-node cluster: a holder process SIGSTOPped for 0.5–3× its TTL (seeded) wakes to find a strictly higher token granted to B, its stale write is rejected by the fenced store (no accepted-stale write, no lost increment), its renewals after B's grant fail, and get(L) never shows it again — also when the server leader is the one paused.
//
// A is a real child process (node -e) that acquires L, reads the fenced store ("FS"), renews every
// ttl/3, and writes v+1 with its token when told to; SIGSTOP freezes its renewals for real.
import t, { type Test } from 'tap';
import { LocalCluster } from '../support/cluster.js';
import { startFencedStore, type FencedStoreServer } from '@tenure/testkit';
import {
  acquire,
  ChildClient,
  childPrelude,
  deltaMaxMs,
  electionTimeoutMs,
  followerOf,
  getLease,
  heartbeatMs,
  nowMs,
  scenarioSeed,
  seededRandom,
  sleep,
} from './fixtures/helpers.js';

const repetitions = Number(process.env['TENURE_BC02_REPETITIONS'] ?? 10);
const seed = scenarioSeed(20_261_129);

/** Child A: acquire, read FS, renew every ttl/3; on `b-granted` note it; on `go` write FS + fenced KV, release, exit. */
const holderScript = `${childPrelude}
const { URL_BASE, FS_URL, NAME, HOLDER, TTL_MS, RESOURCE } = process.env;
const ttlMs = Number(TTL_MS);
const g = await call('POST', URL_BASE + '/v1/leases/' + NAME + '/acquire', { holder: HOLDER, ttlMs });
if (g.status !== 200) { out({ event: 'failed', ...g }); process.exit(1); }
const token = g.body.fencingToken;
const read = await call('GET', FS_URL + '/read?resource=' + encodeURIComponent(RESOURCE));
const v = read.body.value ?? 0;
out({ event: 'ready', token, v });
let afterB = false;
const timer = setInterval(async () => {
  const sentAfterB = afterB;
  const r = await call('POST', URL_BASE + '/v1/leases/' + NAME + '/renew', { holder: HOLDER, fencingToken: token });
  out({ event: 'renewed', status: r.status, code: r.body?.error?.code ?? null, sentAfterB });
}, Math.floor(ttlMs / 3));
for (;;) {
  const cmd = await line();
  if (cmd === 'b-granted') { afterB = true; continue; }
  if (cmd === 'go') break;
}
const w = await call('POST', FS_URL + '/write', { resource: RESOURCE, fencingToken: token, writer: HOLDER, payload: v + 1 });
const kv = await call('PUT', URL_BASE + '/v1/kv/' + NAME, { value: v + 1, fence: { lease: NAME, fencingToken: token } });
clearInterval(timer);
const last = await call('POST', URL_BASE + '/v1/leases/' + NAME + '/renew', { holder: HOLDER, fencingToken: token });
out({ event: 'renewed', status: last.status, code: last.body?.error?.code ?? null, sentAfterB: afterB });
await call('POST', URL_BASE + '/v1/leases/' + NAME + '/release', { holder: HOLDER, fencingToken: token });
out({ event: 'wrote', fs: w.status, kv: kv.status, kvCode: kv.body?.error?.code ?? null });
process.exit(0);
`;

/** B's critical section: acquire (waiting), read FS, write read+1 with its token (and to the fenced KV). */
async function bCriticalSection(
  c: LocalCluster,
  via: string,
  fs: FencedStoreServer,
  name: string,
  resource: string,
  waitMs: number,
): Promise<
  | { token: number; grantedMs: number; readSeq: number; fsStatus: number; kvStatus: number }
  | { error: string }
> {
  const g = await acquire(c, via, name, { holder: 'B', ttlMs: 5000, waitMs }, waitMs + 10_000);
  if (g.status !== 200) return { error: `B's acquire: ${g.status} ${JSON.stringify(g.body)}` };
  const grantedMs = nowMs();
  const token = g.body.fencingToken as number;
  // A read-modify-write reads under its token: a write with a lower token landing between this
  // read and B's write is refused, so no increment is lost (fencing orders reads too).
  const cur = fs.store.readFenced(resource, token);
  if (cur === null) return { error: `B's fenced read with token ${token} was refused as stale` };
  const readSeq = fs.store.records().length;
  const value = (typeof cur.value === 'number' ? cur.value : 0) + 1;
  const w = await fetch(`${fs.url}/write`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ resource, fencingToken: token, writer: 'B', payload: value }),
  });
  const kv = await c.request(via, 'PUT', `/v1/kv/${name}`, {
    value,
    fence: { lease: name, fencingToken: token },
  });
  await c.request(via, 'POST', `/v1/leases/${name}/release`, { holder: 'B', fencingToken: token });
  return { token, grantedMs, readSeq, fsStatus: w.status, kvStatus: kv.status };
}

/** FS invariants of one resource: no accepted write below the highest token before it; value = accepted count. */
function checkFs(t: Test, fs: FencedStoreServer, resource: string): void {
  const recs = fs.store.records().filter((r) => r.resource === resource);
  const acceptedStale = recs.filter(
    (r) => r.accepted && r.highestBefore !== null && r.fencingToken < r.highestBefore,
  ).length;
  t.equal(acceptedStale, 0, 'accepted-stale = 0');
  const state = fs.store.read(resource);
  t.equal(
    state.value,
    state.acceptedCount,
    `no increment lost: value ${String(state.value)} = accepted writes ${state.acceptedCount}`,
  );
}

t.test('BC-02: a paused holder cannot write after its lease expired', async (t) => {
  const c = await LocalCluster.start({ heartbeatMs, electionTimeoutMs });
  const fs = await startFencedStore({ now: () => nowMs() });
  t.teardown(async () => {
    await fs.close();
    await c.teardown();
  });
  const rnd = seededRandom(seed);
  t.comment(`seed ${seed} (TENURE_SCENARIO_SEED replays it)`);
  let staleRejected = 0;

  for (let rep = 0; rep < repetitions; rep++) {
    const ttlMs = 600 + Math.floor(rnd() * 401);
    const pauseMs = Math.round(ttlMs * (0.5 + 2.5 * rnd()));
    await t.test(`rep ${rep}: ttl ${ttlMs} ms, A paused ${pauseMs} ms`, async (t) => {
      const leader = await c.waitForLeader();
      const follower = followerOf(c, leader);
      const name = `bc02-${rep}`;
      const resource = `lease:${name}`;
      const a = new ChildClient(holderScript, {
        URL_BASE: c.node(leader).url,
        FS_URL: fs.url,
        NAME: name,
        HOLDER: `A-${rep}`,
        TTL_MS: String(ttlMs),
        RESOURCE: resource,
      });
      t.teardown(() => a.destroy());
      const ready = (await a.next('ready')).msg;
      const t1 = ready.token as number;
      a.signal('SIGSTOP');
      const b = bCriticalSection(c, follower, fs, name, resource, pauseMs + 3 * ttlMs + deltaMaxMs);
      let bDone: Awaited<typeof b> | null = null;
      void b.then((r) => (bDone = r));
      await sleep(pauseMs); // the pause IS the scenario
      a.signal('SIGCONT');
      // Scenario order: if B was granted during the pause, its write lands before A wakes and writes.
      if (bDone === null && (await getLease(c, leader, name)).body?.holder === 'B') await b;
      const bBeforeA = bDone !== null;
      if (bBeforeA) a.send('b-granted');
      a.send('go');
      const wrote = (await a.next('wrote')).msg;
      const bRes = await b;
      if ('error' in bRes) {
        t.fail(bRes.error);
        return;
      }
      t.ok(bRes.token > t1, `t2 ${bRes.token} > t1 ${t1}`);
      t.equal(bRes.fsStatus, 200, "B's write accepted");
      t.equal(bRes.kvStatus, 200, "B's fenced KV write accepted");
      // Judge A's write by the order the store saw: after B's fenced read it must be rejected
      // (fencing); before it (A woke in time), it is a legitimate write of the then-holder.
      const recs = fs.store.records().filter((r) => r.resource === resource);
      const aRec = recs.find((r) => r.writer === `A-${rep}`);
      const bRec = recs.find((r) => r.writer === 'B');
      t.ok(aRec && bRec, 'both writes reached the store');
      if (aRec && bRec && aRec.seq > bRes.readSeq) {
        staleRejected++;
        t.equal(wrote.fs, 409, "A's stale FS write after B's fenced read is rejected");
        t.notOk(aRec.accepted, 'FS recorded it as rejected');
        t.equal(wrote.kv, 409, "A's stale fenced KV write is rejected");
        t.equal(wrote.kvCode, 'stale_token', 'as stale_token');
      } else
        t.equal(wrote.fs, 200, 'A woke before B wrote: its write is accepted, and B builds on it');
      // A is never holder after B's grant: every renew A sent after learning of B's grant failed.
      await a.exited;
      const afterB = a.lines('renewed').filter((l) => l.msg.sentAfterB === true);
      t.equal(
        afterB.filter((l) => l.msg.status === 200).length,
        0,
        `no renew A sent after B's grant was acked (${afterB.length} sent)`,
      );
      if (bBeforeA) t.ok(afterB.length >= 1, 'A did try to renew after B was granted');
      checkFs(t, fs, resource);
      const kv = await c.request(leader, 'GET', `/v1/kv/${name}`);
      t.equal(kv.body.value, fs.store.read(resource).value, 'fenced KV agrees with FS');
    });
  }
  t.comment(
    `${staleRejected} of ${repetitions} repetitions had A write after B's fenced read (A's write rejected)`,
  );

  await t.test('variant: the server leader is paused instead of A', async (t) => {
    const leader = await c.waitForLeader();
    const others = c.nodes.map((n) => n.id).filter((id) => id !== leader);
    const name = 'bc02-leader';
    const resource = `lease:${name}`;
    const ttlMs = 800;
    // A talks only to the leader (its renewals die with it); B uses the other nodes.
    const a = await acquire(c, leader, name, { holder: 'A', ttlMs });
    t.equal(a.status, 200);
    const t1 = a.body.fencingToken as number;
    const v = fs.store.read(resource).value ?? 0;
    const holders: string[] = [];
    c.pause(leader);
    try {
      const newLeader = await c.waitForLeader(undefined, others);
      t.not(newLeader, leader, `new leader ${newLeader}`);
      const b = await bCriticalSection(c, newLeader, fs, name, resource, 3 * ttlMs + deltaMaxMs);
      if ('error' in b) {
        t.fail(b.error);
        return;
      }
      t.ok(b.token > t1, `t2 ${b.token} > t1 ${t1}`);
      t.equal(b.fsStatus, 200, "B's write accepted");
      // B released again; hold L for B so reads have something to show while the old leader wakes.
      const b2 = await acquire(c, newLeader, name, { holder: 'B', ttlMs: 10_000 });
      t.equal(b2.status, 200);
      for (const id of others) holders.push(String((await getLease(c, id, name)).body.holder));
    } finally {
      c.resume(leader);
    }
    const w = await fetch(`${fs.url}/write`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resource,
        fencingToken: t1,
        writer: 'A',
        payload: (typeof v === 'number' ? v : 0) + 1,
      }),
    });
    t.equal(w.status, 409, "A's stale write is rejected by FS");
    const renew = await c.request(
      leader,
      'POST',
      `/v1/leases/${name}/renew`,
      { holder: 'A', fencingToken: t1 },
      {},
      10_000,
    );
    t.not(
      renew.status,
      200,
      `A's renew through the woken old leader is not acked: ${renew.status} ${JSON.stringify(renew.body)}`,
    );
    for (let i = 0; i < 10; i++) {
      const g = await getLease(c, leader, name);
      if (g.status === 200) holders.push(String(g.body.holder));
      await sleep(50);
    }
    t.notOk(
      holders.includes('A'),
      `no node reported A as holder after B's grant (saw ${holders.join(',')})`,
    );
    checkFs(t, fs, resource);
  });
});

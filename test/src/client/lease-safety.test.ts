// Proves, against a real three-node cluster, that a client's lease `signal` aborts before the server can grant the lease to anyone else when its renewals stop, that a cut-off holder re-acquiring is refused while the new holder holds (BC-11), and that a replayed release (same Idempotency-Key) never touches a newer grant of the same holder (BC-12).
import t from 'tap';
import { TenureError, type Lease, type TenureClient } from '@tenure/client';
import { LocalCluster } from '../support/cluster.js';
import {
  clientFor,
  nextRenewal,
  pollUntil,
  seededRandom,
  serverLease,
  SwitchableFetch,
  testSeed,
} from './support.js';

const SEED = testSeed(0x5eed01);

/** Resolves once `elapsedMs` have passed since `start` on the monotonic clock (pacing, not synchronisation). */
function pollUntilElapsed(start: number, elapsedMs: number): Promise<true> {
  return pollUntil(
    `${elapsedMs} ms to pass`,
    () => performance.now() - start >= elapsedMs || undefined,
    elapsedMs + 5000,
  );
}

/** Round trips timed per sample by {@link measureRoundTripMs}: acquire, renew, release. */
const RTT_SAMPLES = 6;
/** The short ttl is this many times the slowest measured round trip: its first renewal (at ttl/3) then has ~10 round trips of slack. */
const TTL_PER_RTT = 30;
/** Floor of the short ttl (ms): the value the test used on an idle machine. */
const TTL_FLOOR_MS = 1000;
/** Ceiling of the short ttl (ms): B's wait for A's ttl (at most 1.6 × this) must fit the server's 60 s waitMs limit. */
const TTL_CEILING_MS = 20_000;

/**
 * The slowest of {@link RTT_SAMPLES} acquire/renew/release round trips (ms) through `client`, as the
 * machine is right now (a loaded 2-core machine answers 10–50× slower than an idle one).
 */
async function measureRoundTripMs(client: TenureClient): Promise<number> {
  let slowestMs = 0;
  for (let i = 0; i < RTT_SAMPLES; i++) {
    const start = performance.now();
    const lease = await client.acquire(`rtt-probe-${i}`, { ttlMs: 30_000, autoRenew: false });
    slowestMs = Math.max(slowestMs, performance.now() - start);
    const renewStart = performance.now();
    await lease.renew();
    slowestMs = Math.max(slowestMs, performance.now() - renewStart);
    const releaseStart = performance.now();
    await lease.release();
    slowestMs = Math.max(slowestMs, performance.now() - releaseStart);
  }
  return slowestMs;
}

t.test('lease client e2e', async (t) => {
  t.setTimeout(600_000); // a hang fails this file instead of stalling the suite
  t.comment(`seed ${SEED}`);
  const random = seededRandom(SEED);
  const cluster = await LocalCluster.start();
  t.teardown(() => cluster.teardown());
  // The short ttl the tests below observe expiry with, sized from this machine's measured latency so
  // renewals that should land do land on a loaded machine; the safety assertions do not depend on it.
  const rttMs = await measureRoundTripMs(clientFor(cluster, random));
  const shortTtlMs = Math.min(
    TTL_CEILING_MS,
    Math.max(TTL_FLOOR_MS, Math.ceil(rttMs * TTL_PER_RTT)),
  );
  t.comment(`slowest round trip ${rttMs.toFixed(1)} ms → short ttl ${shortTtlMs} ms`);

  t.test('signal aborts before the lease is granted to a waiter (renewals cut off)', async (t) => {
    const reps = 4;
    for (let i = 0; i < reps; i++) {
      const name = `signal-${i}`;
      const ttlMs = shortTtlMs + Math.floor(random() * 0.6 * shortTtlMs);
      const mode = random() < 0.5 ? 'refuse' : 'blackhole';
      const aNet = new SwitchableFetch();
      const bNet = new SwitchableFetch();
      const a = clientFor(cluster, random, { fetch: aNet.fetch });
      const b = clientFor(cluster, random, { fetch: bNet.fetch });
      // The instant B's process first sees the granting answer (response headers in), same monotonic clock as A's.
      let bGrantSeenAt: number | null = null;
      bNet.afterResponse = (url, _init, response) => {
        if (
          url.endsWith(`/v1/leases/${name}/acquire`) &&
          response.status === 200 &&
          bGrantSeenAt === null
        )
          bGrantSeenAt = performance.now();
      };

      const lease = await a.acquire(name, { ttlMs });
      let abortedAt: number | null = null;
      lease.signal.addEventListener('abort', () => (abortedAt = performance.now()), { once: true });
      // Seeded jitter: let 0–1 renewals land, then cut somewhere in the renew period.
      const renewalsBeforeCut = Math.floor(random() * 2);
      for (let k = 0; k < renewalsBeforeCut; k++) await nextRenewal(lease);
      await new Promise((r) => setTimeout(r, Math.floor(random() * (ttlMs / 3))));

      // B's wait and ttl are bounds of a broken run only: B waits out A's ttl, then holds across checks.
      const bAcquire = b.acquire(name, { ttlMs: 5 * ttlMs, waitMs: 60_000 });
      aNet.cut(mode);
      const bLease: Lease = await bAcquire;

      t.not(abortedAt, null, `rep ${i} (${mode}, ttl ${ttlMs}): A's signal aborted`);
      t.not(bGrantSeenAt, null, `rep ${i}: B's grant was seen`);
      t.ok(
        abortedAt! < bGrantSeenAt!,
        `rep ${i}: A aborted ${(bGrantSeenAt! - abortedAt!).toFixed(1)} ms before B's grant arrived`,
      );
      t.equal(lease.isHeld(), false, `rep ${i}: A no longer reports held`);
      t.equal(lease.endReason, 'expired', `rep ${i}: A ended by its safe deadline`);
      const reason: unknown = lease.signal.reason;
      t.ok(
        reason instanceof TenureError && reason.code === 'lease_lost',
        `rep ${i}: abort reason is lease_lost`,
      );
      t.ok(
        bLease.fencingToken > lease.fencingToken,
        `rep ${i}: B's token ${bLease.fencingToken} > A's ${lease.fencingToken}`,
      );
      t.ok(aNet.blocked > 0, `rep ${i}: A's renewals were really cut off`);
      lease.checkInvariants();
      aNet.heal();
      // BC-11: A reconnects and asks again, even under its old holder id: refused while B holds.
      const again = await a.acquire(name, { ttlMs, holder: lease.holder }).then(
        () => null,
        (e: unknown) => e,
      );
      t.ok(
        again instanceof TenureError &&
          again.code === 'held' &&
          again.details['holder'] === bLease.holder,
        `rep ${i}: A's re-acquire is refused (held by B)`,
      );
      t.equal(bLease.isHeld(), true, `rep ${i}: B still holds`);
      t.equal(await bLease.release(), true, `rep ${i}: B releases`);
      const later = await a.acquire(name, { ttlMs, autoRenew: false });
      t.ok(
        later.fencingToken > bLease.fencingToken,
        `rep ${i}: A's later grant has a token above B's`,
      );
      await later.release();
    }
  });

  t.test(
    'waited acquire: a grant that arrives after a wait longer than the ttl is returned as a held lease',
    async (t) => {
      const name = 'waited';
      const a = clientFor(cluster, random);
      const b = clientFor(cluster, random);
      const first = await a.acquire(name, { ttlMs: 60_000 });
      const ttlMs = shortTtlMs;
      const waiting = b.acquire(name, { ttlMs, waitMs: 60_000 }).then(
        (lease) => ({ lease, error: null }),
        (error: unknown) => ({ lease: null, error }),
      );
      // Release only after B has waited longer than its own ttl.
      const start = performance.now();
      await pollUntilElapsed(start, ttlMs * 2);
      t.equal(await first.release(), true, 'A releases after B waited 2×ttl');
      const outcome = await waiting;
      t.equal(outcome.error, null, `B's acquire resolves (got ${String(outcome.error)})`);
      if (outcome.lease) {
        t.ok(outcome.lease.isHeld(), 'B holds');
        t.ok(outcome.lease.fencingToken > first.fencingToken, 'with a higher token');
        await outcome.lease.release();
      }
    },
  );

  t.test("BC-12: a replayed release does not touch the same holder's newer grant", async (t) => {
    const name = 'bc12';
    const net = new SwitchableFetch();
    const a = clientFor(cluster, random, { fetch: net.fetch });
    const b = clientFor(cluster, random);
    const holder = a.newOwnerId();

    // A acquires (t1) and releases; the first release reply is lost after the server applied it.
    const first = await a.acquire(name, { ttlMs: 10_000, holder, autoRenew: false });
    const t1 = first.fencingToken;
    let releaseKey: string | null = null;
    let releaseBody: string | null = null;
    let dropped = 0;
    net.afterResponse = (url, init) => {
      if (!url.endsWith(`/v1/leases/${name}/release`)) return;
      const headers = new Headers(init?.headers);
      const key = headers.get('idempotency-key');
      if (releaseKey === null) {
        releaseKey = key;
        releaseBody = String(init?.body);
      } else
        t.equal(key, releaseKey, 'the client retried the release with the same Idempotency-Key');
      if (dropped++ === 0)
        throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });
    };
    t.equal(
      await first.release(),
      true,
      'release resolves true after its reply was lost once and retried',
    );
    t.equal(dropped, 2, 'the release was sent twice (lost reply, then retry)');
    net.afterResponse = null;
    t.equal(await serverLease(cluster, name), null, 'the lease is free after the release');

    // A acquires again with the same holder (t2).
    const second = await a.acquire(name, { ttlMs: 10_000, holder, autoRenew: false });
    const t2 = second.fencingToken;
    t.ok(t2 > t1, `new grant has a higher token (${t2} > ${t1})`);

    // The old release is replayed verbatim through every node (a proxy's duplicate / a client retry).
    for (const node of cluster.nodes) {
      const replay = await cluster.request(
        node.id,
        'POST',
        `/v1/leases/${name}/release`,
        JSON.parse(releaseBody!),
        {
          'idempotency-key': releaseKey!,
        },
      );
      t.equal(replay.status, 200, `replay via ${node.id} returns the first outcome`);
      t.same(replay.body, { name, released: true });
    }
    // Replayed through the client library with the same key too.
    t.same(await a.releaseLease(name, holder, t1, { idempotencyKey: releaseKey! }), {
      name,
      released: true,
    });
    // A fresh release of the old grant (new key) is refused: the grant is identified by its token.
    const fresh = await a.releaseLease(name, holder, t1).then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(
      fresh instanceof TenureError && ['not_holder', 'lease_expired'].includes(fresh.code),
      'a release of t1 with a new key is refused',
    );

    t.same(
      await serverLease(cluster, name),
      { holder, fencingToken: t2 },
      'L is still held by A with t2',
    );
    const bTry = await b.acquire(name, { ttlMs: 5000 }).then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(bTry instanceof TenureError && bTry.code === 'held', 'B is refused with held');
    t.equal((bTry as TenureError).details['holder'], holder, 'the refusal names A');
    t.equal(second.isHeld(), true, "A's handle still reports held");
    t.equal(await second.release(), true, 'A releases t2');
  });
});

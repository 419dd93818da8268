// Proves BC-03 on a real three-node cluster: stepping the wall clock of the leader, of a follower, or of all three node processes forward by one hour (libfaketime, while they run) expires nothing early — B is refused at T+2 s and T+5 s, A's renewals keep succeeding, and get(L) shows A with a remaining TTL the jump did not shrink.
//
// What is exercised: every node is restarted once under LD_PRELOAD=libfaketime with its own
// FAKETIME_TIMESTAMP_FILE (FAKETIME_CACHE_DURATION=1, DONT_FAKE_MONOTONIC=1), so rewriting that
// file to "+3600" steps the process's CLOCK_REALTIME (Date.now(), new Date()) by +1 h at run time
// while CLOCK_MONOTONIC (performance.now(), hrtime, timers) keeps running normally. The test checks
// that the step really reached each target process through its HTTP `Date` response header.
import t from 'tap';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalCluster } from '../support/cluster.js';
import { retrying } from '../support/http-client.js';
import {
  deltaMaxMs,
  electionTimeoutMs,
  followerOf,
  getLease,
  heartbeatMs,
  maxDriftRatio,
  nowMs,
  pollUntil,
  sleep,
} from './fixtures/helpers.js';

const ttlMs = 10_000;
const renewEveryMs = 3000;
const stepSeconds = 3600;

/** Debian's libfaketime preload library, or null when the package is missing. */
function findLibfaketime(): string | null {
  for (const dir of ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib']) {
    const path = join(dir, 'faketime', 'libfaketime.so.1');
    if (existsSync(path)) return path;
  }
  return null;
}

const libfaketime = findLibfaketime();

/** Seconds the node's wall clock is ahead of ours, from its HTTP `Date` header (1 s resolution). */
async function wallOffsetSeconds(c: LocalCluster, id: string): Promise<number> {
  const r = await c.request(id, 'GET', '/healthz', undefined, {}, 2000);
  const date = r.headers['date'];
  if (date === undefined) throw new Error('no Date header');
  return (Date.parse(date) - Date.now()) / 1000;
}

t.test(
  'BC-03: a forward wall-clock step expires nothing early',
  {
    skip:
      libfaketime === null ? 'libfaketime is not installed (apt-get install libfaketime)' : false,
  },
  async (t) => {
    const c = await LocalCluster.start({ heartbeatMs, electionTimeoutMs });
    t.teardown(() => c.teardown());
    const clockFile = (id: string): string => join(c.baseDir, `${id}.faketime`);
    const setOffset = (id: string, seconds: number): void =>
      writeFileSync(clockFile(id), `${seconds >= 0 ? '+' : ''}${seconds}\n`);

    // Restart every node under libfaketime, one at a time (a majority stays up throughout).
    for (const { id } of c.nodes) {
      setOffset(id, 0);
      await c.kill(id);
      const saved = { ...process.env };
      Object.assign(process.env, {
        LD_PRELOAD: libfaketime!,
        FAKETIME_TIMESTAMP_FILE: clockFile(id),
        FAKETIME_CACHE_DURATION: '1',
        DONT_FAKE_MONOTONIC: '1',
      });
      // restart() spawns synchronously before its first await, so the environment applies to this node only.
      const up = c.restart(id);
      for (const k of [
        'LD_PRELOAD',
        'FAKETIME_TIMESTAMP_FILE',
        'FAKETIME_CACHE_DURATION',
        'DONT_FAKE_MONOTONIC',
      ]) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
      await up;
      await c.waitForLeader();
    }

    for (const variant of ['leader', 'follower', 'all three nodes'] as const) {
      await t.test(
        `wall clock of ${variant === 'all three nodes' ? variant : `the ${variant}`} steps +1 h`,
        async (t) => {
          const leader = await c.waitForLeader();
          const targets =
            variant === 'leader'
              ? [leader]
              : variant === 'follower'
                ? [followerOf(c, leader)]
                : c.nodes.map((n) => n.id);
          const name = `bc03-${variant.replace(/ /g, '-')}`;
          const startMs = nowMs();
          const a = await retrying(c, 'POST', `/v1/leases/${name}/acquire`, { holder: 'A', ttlMs });
          t.equal(a.status, 200, 'A acquires with TTL 10 s');
          const t1 = a.body.fencingToken as number;
          let lastRenewSendMs = startMs;
          const renewStatuses: number[] = [];
          const renewer = (async () => {
            for (let atMs = renewEveryMs; atMs < 7000; atMs += renewEveryMs) {
              await sleep(atMs - (nowMs() - startMs)); // A's renew cadence (T+3 s, T+6 s) IS the scenario
              const sent = nowMs();
              const r = await retrying(c, 'POST', `/v1/leases/${name}/renew`, {
                holder: 'A',
                fencingToken: t1,
              });
              renewStatuses.push(r.status);
              if (r.status === 200) lastRenewSendMs = sent;
            }
          })();

          await sleep(1000 - (nowMs() - startMs)); // T+1 s: the step
          for (const id of targets) setOffset(id, stepSeconds);
          const stepped = (async () => {
            for (const id of targets) {
              const off = await pollUntil(
                async () => {
                  const s = await wallOffsetSeconds(c, id);
                  return s > stepSeconds - 60 ? s : undefined;
                },
                4000,
                100,
              );
              t.ok(off !== undefined, `${id}'s wall clock is ~1 h ahead (${off?.toFixed(0)} s)`);
            }
          })();

          for (const atMs of [2000, 5000]) {
            await sleep(atMs - (nowMs() - startMs)); // B's attempts at T+2 s and T+5 s
            const b = await retrying(c, 'POST', `/v1/leases/${name}/acquire`, {
              holder: 'B',
              ttlMs,
            });
            t.equal(b.status, 409, `T+${atMs / 1000} s: B is refused (${JSON.stringify(b.body)})`);
            const g = await getLease(c, leader, name).catch(() => null);
            const doneMs = nowMs();
            t.equal(g?.body.holder, 'A', `T+${atMs / 1000} s: get(L) shows A`);
            t.equal(g?.body.fencingToken, t1, 'with token t1');
            const remainingMs = Number(g?.body.remainingMs);
            const floorMs = ttlMs - (doneMs - lastRenewSendMs) - ttlMs * maxDriftRatio;
            t.ok(
              remainingMs <= ttlMs && remainingMs >= floorMs,
              `remainingMs ${remainingMs} not shrunk by the jump (≥ ${floorMs.toFixed(0)}, ≤ ${ttlMs})`,
            );
          }
          await stepped;
          await renewer;
          t.equal(renewStatuses.length, 2, 'A renewed at T+3 s and T+6 s');
          t.same(
            renewStatuses,
            renewStatuses.map(() => 200),
            "all of A's renewals succeeded",
          );

          for (const id of targets) setOffset(id, 0);
          const rel = await retrying(c, 'POST', `/v1/leases/${name}/release`, {
            holder: 'A',
            fencingToken: t1,
          });
          t.equal(rel.status, 200, 'A still held L at the end and releases it');
          for (const id of targets)
            t.ok(
              await pollUntil(
                async () => (Math.abs(await wallOffsetSeconds(c, id)) < 60 ? true : undefined),
                4000,
                100,
              ),
              `${id}'s wall clock is back`,
            );
        },
      );
    }

    await t.test(
      'a fresh lease under a +1 h clock on every node lives its TTL, not less',
      async (t) => {
        for (const { id } of c.nodes) setOffset(id, stepSeconds);
        t.teardown(() => {
          for (const { id } of c.nodes) setOffset(id, 0);
        });
        for (const { id } of c.nodes)
          t.ok(
            await pollUntil(
              async () => ((await wallOffsetSeconds(c, id)) > stepSeconds - 60 ? true : undefined),
              4000,
              100,
            ),
            `${id} is 1 h ahead`,
          );
        const leader = await c.waitForLeader();
        const sendMs = nowMs();
        const a = await c.request(leader, 'POST', '/v1/leases/bc03-fresh/acquire', {
          holder: 'A',
          ttlMs: 1000,
        });
        const ackMs = nowMs();
        t.equal(a.status, 200);
        let invokeMs = 0;
        const b = await pollUntil(
          async () => {
            invokeMs = nowMs();
            const r = await c.request(leader, 'POST', '/v1/leases/bc03-fresh/acquire', {
              holder: 'B',
              ttlMs: 1000,
            });
            return r.status === 200 ? nowMs() : undefined;
          },
          1000 + deltaMaxMs + 2000,
          20,
        );
        t.ok(b !== undefined, 'B gets it after the TTL');
        if (b !== undefined) {
          t.ok(
            b - sendMs >= 1000 * (1 - maxDriftRatio),
            `not before the TTL (${(b - sendMs).toFixed(0)} ms)`,
          );
          t.ok(
            invokeMs - ackMs <= 1000 + deltaMaxMs,
            `not later than TTL + Δmax (${(invokeMs - ackMs).toFixed(0)} ms)`,
          );
        }
      },
    );
  },
);

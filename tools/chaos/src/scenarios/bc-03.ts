/**
 * BC-03 — a forward wall-clock step expires locks early (Redis/Valkey, Redlock).
 * A holds L (TTL 10 s) and renews every 3 s; 1 s in, the wall clock of the leader (round 0), a
 * follower (round 1) or all three nodes (round 2) jumps forward 1 h (libfaketime; monotonic clocks
 * untouched). B tries to acquire L at +2 s and +5 s.
 * Expected: B is refused every time, A's renewals keep succeeding, `get(L)` keeps showing A with a
 * remaining TTL within (0, ttlMs] (docs/concepts.md: expiry uses only monotonic durations and cluster time).
 */
import type { Scenario } from './scenario.js';
import { VerdictBuilder } from './scenario.js';
import { LeaseClient, okBody, tokenOf } from '../runner/client-call.js';
import { every, stamp, waitForAnyLeader } from './helpers.js';
import { delay } from '../util/clock.js';

const ttlMs = 10_000;

export const bc03: Scenario = {
  name: 'BC-03',
  title: 'Forward clock step expires locks early',
  faults: 'clock (wall-clock step +1 h: leader, follower, all nodes)',
  wallClockFaults: true,
  async run(session, { repetitions, log }) {
    const v = new VerdictBuilder();
    const rounds = Math.max(3, repetitions);
    for (let rep = 0; rep < rounds; rep++) {
      const leader = await waitForAnyLeader(session);
      const variant = rep % 3;
      const targets =
        variant === 0
          ? [leader]
          : variant === 1
            ? [session.backend.nodeIds.find((id) => id !== leader)!]
            : [...session.backend.nodeIds];
      const name = `bc03-${rep}`;
      const a = new LeaseClient(session.history, session.cluster, 'A');
      const b = new LeaseClient(session.history, session.cluster, 'B');
      const token = tokenOf((await a.acquire(leader, name, `A-${rep}`, ttlMs)).outcome);
      if (!v.expect(token !== null, 'progress', `round ${rep}: A's acquire failed`)) continue;
      const stop = new AbortController();
      let renewFails = 0;
      const renewer = every(3_000, stop.signal, async () => {
        const r = await a.renew(
          session.cluster.currentLeader() ?? leader,
          name,
          `A-${rep}`,
          token!,
          2_500,
        );
        if (
          r.outcome.status === 'fail' &&
          (r.outcome.code === 'not_holder' || r.outcome.code === 'lease_expired')
        )
          renewFails++;
      });
      const faultId = session.faults.nextFaultId();
      let bGranted = 0;
      const badReads: string[] = [];
      try {
        await delay(1_000);
        for (const id of targets) await session.backend.setWallClockOffset(id, 3600);
        session.faults.record({
          kind: 'clock',
          action: 'inject',
          targets,
          detail: `BC-03 wall clock +1h on ${targets.join(',')}`,
          faultId,
        });
        for (const atMs of [1_000, 3_000]) {
          await delay(atMs);
          const node = session.cluster.currentLeader() ?? leader;
          if (tokenOf((await b.acquire(node, name, `B-${rep}`, ttlMs, 2_500)).outcome) !== null)
            bGranted++;
          const read = okBody((await a.get(node, name, 2_500)).outcome);
          const remainingMs = read?.['remainingMs'];
          if (
            read !== null &&
            (read['holder'] !== `A-${rep}` ||
              typeof remainingMs !== 'number' ||
              remainingMs <= 0 ||
              remainingMs > ttlMs)
          )
            badReads.push(JSON.stringify(read));
        }
      } finally {
        stop.abort();
        await renewer;
        for (const id of targets) await session.backend.setWallClockOffset(id, 0);
        session.faults.record({
          kind: 'clock',
          action: 'heal',
          targets,
          detail: `BC-03 wall clock back on ${targets.join(',')}`,
          faultId,
        });
      }
      log(
        `${stamp(session, 'BC-03')} round ${rep} (${targets.join(',')} +1h): B granted ${bGranted}, renew lost ${renewFails}, bad reads ${badReads.length}`,
      );
      v.count('earlyGrants', bGranted);
      v.expect(
        bGranted === 0,
        'no-early-expiry',
        `round ${rep}: B was granted L while A kept renewing (wall step on ${targets.join(',')})`,
      );
      v.expect(
        renewFails === 0,
        'lease-kept',
        `round ${rep}: ${renewFails} of A's renewals said the lease was lost`,
      );
      v.expect(badReads.length === 0, 'remaining-ttl', `round ${rep}: reads ${badReads.join(' ')}`);
      await a.release(session.cluster.currentLeader() ?? leader, name, `A-${rep}`, token!);
    }
    return v.build();
  },
};

/**
 * BC-05 — repeated leader elections keep renewing an abandoned lease (etcd #9888).
 * A acquires L (TTL 10 s) and never renews; the leader is SIGKILLed every 4 s and restarted 1 s
 * later; B tries to acquire L every 250 ms.
 * Expected: B's first grant is never early — it completes no sooner than A's send time +
 * TTL × (1 − maxDriftRatio) (docs/concepts.md) — and not late: it is invoked no later than A's ack +
 * TTL + Δmax per leaderless stretch (leases freeze while leaderless, docs/concepts.md, so each
 * election may add up to Δmax).
 */
import type { Scenario } from './scenario.js';
import { VerdictBuilder } from './scenario.js';
import { LeaseClient, tokenOf } from '../runner/client-call.js';
import { every, stamp, waitForAnyLeader } from './helpers.js';
import { delay } from '../util/clock.js';

/** The abandoned lease's TTL (the case uses 20 s; scaled to keep the slice short). */
const ttlMs = 10_000;

export const bc05: Scenario = {
  name: 'BC-05',
  title: 'Repeated leader elections keep renewing an abandoned lease',
  faults: 'kill (leader, every 4 s, restart after 1 s)',
  async run(session, { repetitions, log }) {
    const v = new VerdictBuilder();
    for (let rep = 0; rep < Math.max(1, Math.ceil(repetitions / 3)); rep++) {
      const name = `bc05-${rep}`;
      const leader = await waitForAnyLeader(session);
      const a = new LeaseClient(session.history, session.cluster, 'A');
      const b = new LeaseClient(session.history, session.cluster, 'B');
      const sendMs = session.clock.now();
      const got = await a.acquire(leader, name, `A-${rep}`, ttlMs);
      const ackMs = session.clock.now();
      if (
        !v.expect(
          tokenOf(got.outcome) !== null,
          'progress',
          `round ${rep}: A's acquire failed: ${JSON.stringify(got.outcome)}`,
        )
      )
        continue;
      const stop = new AbortController();
      let bInvokeMs: number | null = null;
      let bDoneMs: number | null = null;
      let kills = 0;
      const contender = every(250, stop.signal, async () => {
        if (bDoneMs !== null) return;
        const node =
          session.cluster.currentLeader() ?? session.random.pick(session.backend.nodeIds);
        const invokeMs = session.clock.now();
        const r = await b.acquire(node, name, `B-${rep}`, 3_000, 2_000);
        if (tokenOf(r.outcome) !== null) {
          bInvokeMs = invokeMs;
          bDoneMs = session.clock.now();
        }
      });
      const killer = every(4_000, stop.signal, async () => {
        await delay(3_000);
        if (stop.signal.aborted || bDoneMs !== null) return;
        const target = session.cluster.currentLeader();
        if (target === null) return;
        const faultId = session.faults.nextFaultId();
        await session.backend.killNode(target);
        kills++;
        session.faults.record({
          kind: 'crash',
          action: 'inject',
          targets: [target],
          detail: `BC-05 SIGKILL leader ${target}`,
          faultId,
        });
        await delay(1_000);
        await session.backend.startNode(target);
        session.faults.record({
          kind: 'crash',
          action: 'heal',
          targets: [target],
          detail: `BC-05 restart ${target}`,
          faultId,
        });
      });
      const deltaMaxMs = session.timing.expiryLatenessMaxMs;
      const lateBoundMs = () => ackMs + ttlMs + deltaMaxMs * (kills + 1);
      try {
        while (bDoneMs === null && session.clock.now() < lateBoundMs() + 5_000) await delay(250);
      } finally {
        stop.abort();
        await Promise.all([contender, killer]);
      }
      const earliestMs = sendMs + ttlMs * (1 - session.timing.maxDriftRatio);
      log(
        `${stamp(session, 'BC-05')} round ${rep}: ${kills} leader kills; B granted ${bDoneMs === null ? 'never' : `${((bDoneMs - ackMs) / 1000).toFixed(1)} s after A's ack`}`,
      );
      v.count('leaderKills', kills);
      v.expect(
        bDoneMs !== null,
        'expiry',
        `round ${rep}: the abandoned lease never expired (bound ${(lateBoundMs() - ackMs) / 1000} s after A's ack)`,
      );
      if (bDoneMs !== null) {
        v.stats[`r${rep}FreeAfterMs`] = Math.round(bDoneMs - ackMs);
        v.expect(
          bDoneMs >= earliestMs,
          'no-early-expiry',
          `round ${rep}: B granted ${Math.round(bDoneMs - sendMs)} ms after A's send (TTL ${ttlMs})`,
        );
        v.expect(
          bInvokeMs! <= lateBoundMs(),
          'late-expiry',
          `round ${rep}: B still refused ${Math.round(bInvokeMs! - ackMs)} ms after A's ack (bound ${Math.round(lateBoundMs() - ackMs)} ms with ${kills} kills)`,
        );
      }
    }
    return v.build();
  },
};

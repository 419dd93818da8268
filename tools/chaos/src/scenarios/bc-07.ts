/**
 * BC-07 — a stalled old leader still revokes leases and accepts keepalives (etcd lessor).
 * C1 renews its lock through follower N2, C2 through leader N1 (TTL 3 s, every 1 s); a contender
 * C3 tries to take C2's lock through N2 every 500 ms. N1 is SIGSTOPped for 10 s, then resumed;
 * watching continues.
 * Expected: C1 keeps its lock (no renew answered not_holder / lease_expired); no C2 renew is
 * acknowledged after C3's grant of that lock completed; tokens strictly increase.
 * Timing: "C1 keeps its lock" holds only if C1's renewals can land in time after the election;
 * cadence and per-attempt deadline come from `renewPlan` (helpers.ts: interval TTL/3, deadline
 * interval + 1 s, margin TTL − 2 × interval ≥ the documented scheduling slack), so an attempt
 * stuck forwarding to the paused leader gives up by the next tick instead of using up the TTL.
 */
import type { Scenario } from './scenario.js';
import { VerdictBuilder } from './scenario.js';
import { LeaseClient, tokenOf } from '../runner/client-call.js';
import { every, renewPlan, stamp, waitForAnyLeader } from './helpers.js';
import { delay } from '../util/clock.js';

export const bc07: Scenario = {
  name: 'BC-07',
  title: 'A stalled old leader still revokes leases and accepts keepalives',
  faults: 'pause (leader, 10 s)',
  async run(session, { repetitions, log }) {
    const v = new VerdictBuilder();
    const ttlMs = 3_000;
    const plan = renewPlan(ttlMs);
    for (let rep = 0; rep < Math.max(1, Math.ceil(repetitions / 3)); rep++) {
      const n1 = await waitForAnyLeader(session);
      const n2 = session.backend.nodeIds.find((id) => id !== n1)!;
      const l1 = `bc07-${rep}-c1`;
      const l2 = `bc07-${rep}-c2`;
      const c1 = new LeaseClient(session.history, session.cluster, 'C1');
      const c2 = new LeaseClient(session.history, session.cluster, 'C2');
      const c3 = new LeaseClient(session.history, session.cluster, 'C3');
      const t1 = tokenOf((await c1.acquire(n2, l1, `C1-${rep}`, ttlMs)).outcome);
      const t2 = tokenOf((await c2.acquire(n1, l2, `C2-${rep}`, ttlMs)).outcome);
      if (
        !v.expect(t1 !== null && t2 !== null, 'progress', `round ${rep}: initial acquires failed`)
      )
        continue;
      const stop = new AbortController();
      let c1Lost = 0;
      const c2Acks: number[] = [];
      let c3GrantDoneMs: number | null = null;
      let c3Token: number | null = null;
      const loops = [
        every(plan.intervalMs, stop.signal, async () => {
          const r = await c1.renew(n2, l1, `C1-${rep}`, t1!, plan.timeoutMs);
          if (
            r.outcome.status === 'fail' &&
            (r.outcome.code === 'not_holder' || r.outcome.code === 'lease_expired')
          )
            c1Lost++;
        }),
        every(plan.intervalMs, stop.signal, async () => {
          const r = await c2.renew(n1, l2, `C2-${rep}`, t2!, plan.timeoutMs);
          if (r.outcome.status === 'ok') c2Acks.push(session.clock.now());
        }),
        every(500, stop.signal, async () => {
          if (c3GrantDoneMs !== null) return;
          const r = await c3.acquire(n2, l2, `C3-${rep}`, ttlMs, 2_500);
          const t = tokenOf(r.outcome);
          if (t !== null) {
            c3Token = t;
            c3GrantDoneMs = session.clock.now();
          }
        }),
      ];
      const faultId = session.faults.nextFaultId();
      try {
        await delay(2_000);
        await session.backend.pauseNode(n1);
        session.faults.record({
          kind: 'pause',
          action: 'inject',
          targets: [n1],
          detail: `BC-07 SIGSTOP leader ${n1} for 10 s`,
          faultId,
        });
        await delay(10_000);
        await session.backend.resumeNode(n1);
        session.faults.record({
          kind: 'pause',
          action: 'heal',
          targets: [n1],
          detail: `BC-07 SIGCONT ${n1}`,
          faultId,
        });
        await delay(8_000);
      } finally {
        stop.abort();
        await Promise.all(loops);
        await session.backend.resumeNode(n1);
      }
      const lateAcks = c3GrantDoneMs === null ? [] : c2Acks.filter((t) => t > c3GrantDoneMs!);
      log(
        `${stamp(session, 'BC-07')} round ${rep}: C1 lost ${c1Lost}; C3 ${c3Token === null ? 'never got' : `got t=${c3Token} of`} C2's lock; C2 acks after that: ${lateAcks.length}`,
      );
      v.count('c1LostRenewals', c1Lost);
      v.count('c2AcksAfterC3Grant', lateAcks.length);
      v.expect(
        c1Lost === 0,
        'lease-kept',
        `round ${rep}: C1 (renewing via follower ${n2}) was told ${c1Lost} times it lost its lock`,
      );
      v.expect(
        lateAcks.length === 0,
        'renew-after-other-grant',
        `round ${rep}: ${lateAcks.length} C2 renewals acknowledged after C3's grant of the same lock`,
      );
      if (c3Token !== null)
        v.expect(
          c3Token > t2!,
          'fencing-monotonic',
          `round ${rep}: C3 token ${c3Token} not > C2 token ${t2}`,
        );
    }
    return v.build();
  },
};

/**
 * BC-20 — a rejoining node with an inflated term knocks out a healthy leader (etcd #12959).
 * A follower N3 is fully isolated for 10 × the election timeout while a client holds a lease on
 * the majority and renews it every second; then the link heals.
 * Expected (pre-vote / check-quorum): the heal causes at most one election; the lease never
 * expires (no renew answered not_holder / lease_expired); N3's term does not run away (≤ the
 * majority's term + 1 when it rejoins). "No operation stalls > 1 s" is a speed goal: the stall is
 * recorded as a stat (renewStallMaxMs = longest time from the start of a failing run of renew
 * attempts, or of a slow one, to the next acknowledged renew) and judged against a bound derived
 * from the configured timing (`renewStallBoundMs`: one election + one renew interval + the
 * documented scheduling slack). Renew cadence and deadline come from `renewPlan` (helpers.ts).
 */
import type { Scenario } from './scenario.js';
import { VerdictBuilder } from './scenario.js';
import { LeaseClient, tokenOf } from '../runner/client-call.js';
import { isolate } from '../faults/partition-plan.js';
import { every, renewPlan, renewStallBoundMs, stamp, waitForAnyLeader } from './helpers.js';
import { delay } from '../util/clock.js';

export const bc20: Scenario = {
  name: 'BC-20',
  title: 'A rejoining node with an inflated term knocks out a healthy leader',
  faults: 'partition (full isolation of a follower for 10 x election timeout)',
  async run(session, { repetitions, log }) {
    const v = new VerdictBuilder();
    const nodeIds = session.backend.nodeIds;
    const isolateMs = session.timing.electionTimeoutMinMs * 10;
    const ttlMs = 3_000;
    const plan = renewPlan(ttlMs);
    const stallBoundMs = renewStallBoundMs(session.timing, plan);
    for (let rep = 0; rep < Math.max(1, Math.ceil(repetitions / 3)); rep++) {
      const leader = await waitForAnyLeader(session);
      const n3 = nodeIds.find((id) => id !== leader)!;
      const majority = nodeIds.filter((id) => id !== n3);
      const name = `bc20-${rep}`;
      const c = new LeaseClient(session.history, session.cluster, 'C');
      const got = await c.acquire(leader, name, `C-${rep}`, ttlMs);
      const token = tokenOf(got.outcome);
      if (
        !v.expect(
          token !== null,
          'progress',
          `round ${rep}: initial acquire failed: ${JSON.stringify(got.outcome)}`,
        )
      )
        continue;
      const renewing = new AbortController();
      let lost = 0;
      let stallMaxMs = 0;
      let stallStartMs: number | null = null; // start of the current run of unacknowledged attempts
      let k = 0;
      const renewer = every(plan.intervalMs, renewing.signal, async () => {
        const node = majority[k++ % majority.length]!;
        const startMs = session.clock.now();
        stallStartMs ??= startMs;
        const r = await c.renew(node, name, `C-${rep}`, token!, plan.timeoutMs);
        const endMs = session.clock.now();
        stallMaxMs = Math.max(stallMaxMs, endMs - stallStartMs);
        if (r.outcome.status === 'ok') stallStartMs = null;
        if (
          r.outcome.status === 'fail' &&
          (r.outcome.code === 'not_holder' || r.outcome.code === 'lease_expired')
        )
          lost++;
      });
      const faultId = session.faults.nextFaultId();
      let healMs = 0;
      let termAtHeal = 0;
      try {
        await session.faults.network.add(
          faultId,
          isolate(
            n3,
            nodeIds,
            session.backend.clientAddresses.map((x) => x.id),
            false,
          ),
        );
        session.faults.record({
          kind: 'partition',
          action: 'inject',
          targets: [n3],
          detail: `BC-20 isolate ${n3} fully for ${isolateMs} ms`,
          faultId,
        });
        await delay(isolateMs);
        termAtHeal = Math.max(
          0,
          ...session.cluster
            .leaderSamples()
            .filter((s) => majority.includes(s.node) && s.term !== null)
            .map((s) => s.term!),
        );
        healMs = session.clock.now();
        await session.faults.network.remove(faultId);
        session.faults.record({
          kind: 'partition',
          action: 'heal',
          targets: [n3],
          detail: `BC-20 heal ${n3}`,
          faultId,
        });
        await delay(5_000);
      } finally {
        renewing.abort();
        await renewer;
        await session.faults.network.remove(faultId);
      }
      const after = session.cluster
        .leaderSamples()
        .filter((s) => s.timeMs >= healMs && s.reachable && s.term !== null);
      const leaderTermsAfter = new Set(
        after.filter((s) => s.leader === s.node && s.term! > termAtHeal).map((s) => s.term),
      );
      const n3Terms = after.filter((s) => s.node === n3).map((s) => s.term!);
      const n3FirstTerm = n3Terms[0] ?? 0;
      log(
        `${stamp(session, 'BC-20')} round ${rep}: term at heal ${termAtHeal}, new leader terms after heal ${leaderTermsAfter.size}, ${n3} rejoined at term ${n3FirstTerm}, renew stall max ${Math.round(stallMaxMs)} ms`,
      );
      v.count('electionsAfterHeal', leaderTermsAfter.size);
      v.stats['renewStallMaxMs'] = Math.max(
        Number(v.stats['renewStallMaxMs'] ?? 0),
        Math.round(stallMaxMs),
      );
      v.stats['renewStallBoundMs'] = stallBoundMs;
      v.expect(
        leaderTermsAfter.size <= 1,
        'heal-elections',
        `round ${rep}: ${leaderTermsAfter.size} elections after heal (allowed ≤ 1)`,
      );
      v.expect(
        n3FirstTerm <= termAtHeal + 1,
        'term-inflation',
        `round ${rep}: ${n3} came back with term ${n3FirstTerm} vs majority ${termAtHeal}`,
      );
      v.expect(lost === 0, 'lease-kept', `round ${rep}: ${lost} renewals said the lease was lost`);
      v.expect(
        stallMaxMs <= stallBoundMs,
        'stall',
        `round ${rep}: the holder went ${Math.round(stallMaxMs)} ms without an acknowledged renew (bound ${stallBoundMs} ms = electionTimeoutMax ${session.timing.electionTimeoutMaxMs} + 2 x heartbeat ${session.timing.heartbeatMs} + renew interval ${plan.intervalMs} + slack)`,
      );
    }
    return v.build();
  },
};

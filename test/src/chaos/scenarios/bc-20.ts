/**
 * BC-20 — a rejoining node with an inflated term knocks out a healthy leader (etcd #12959).
 * A follower N3 is fully isolated for 10 × the election timeout while a client holds a lease on
 * the majority and renews it every second; then the link heals.
 * Expected (pre-vote / check-quorum): the heal causes at most one election; the lease never
 * expires (no renew answered not_holder / lease_expired); N3's term does not run away (≤ the
 * majority's term + 1 when it rejoins). "No operation stalls > 1 s" is recorded as a stat
 * (renewStallMaxMs) and only judged against a loose bound (election timeout max + 1 s) because the
 * test machine is shared.
 */
import type { Scenario } from './scenario.js';
import { VerdictBuilder } from './scenario.js';
import { LeaseClient, tokenOf } from '../runner/client-call.js';
import { isolate } from '../faults/partition-plan.js';
import { every, stamp, waitForAnyLeader } from './helpers.js';
import { delay } from '../util/clock.js';

export const bc20: Scenario = {
  name: 'BC-20',
  title: 'A rejoining node with an inflated term knocks out a healthy leader',
  faults: 'partition (full isolation of a follower for 10 x election timeout)',
  async run(session, { repetitions, log }) {
    const v = new VerdictBuilder();
    const nodeIds = session.backend.nodeIds;
    const isolateMs = session.timing.electionTimeoutMinMs * 10;
    for (let rep = 0; rep < Math.max(1, Math.ceil(repetitions / 3)); rep++) {
      const leader = await waitForAnyLeader(session);
      const n3 = nodeIds.find((id) => id !== leader)!;
      const majority = nodeIds.filter((id) => id !== n3);
      const name = `bc20-${rep}`;
      const c = new LeaseClient(session.history, session.cluster, 'C');
      const got = await c.acquire(leader, name, `C-${rep}`, 3_000);
      const token = tokenOf(got.outcome);
      if (!v.expect(token !== null, 'progress', `round ${rep}: initial acquire failed: ${JSON.stringify(got.outcome)}`)) continue;
      const renewing = new AbortController();
      let lost = 0;
      let stallMaxMs = 0;
      let k = 0;
      const renewer = every(1_000, renewing.signal, async () => {
        const node = majority[k++ % majority.length]!;
        const startMs = session.clock.now();
        const r = await c.renew(node, name, `C-${rep}`, token!, 2_500);
        stallMaxMs = Math.max(stallMaxMs, session.clock.now() - startMs);
        if (r.outcome.status === 'fail' && (r.outcome.code === 'not_holder' || r.outcome.code === 'lease_expired')) lost++;
      });
      const faultId = session.faults.nextFaultId();
      let healMs = 0;
      let termAtHeal = 0;
      try {
        await session.faults.network.add(faultId, isolate(n3, nodeIds, session.backend.clientAddresses.map((x) => x.id), false));
        session.faults.record({ kind: 'partition', action: 'inject', targets: [n3], detail: `BC-20 isolate ${n3} fully for ${isolateMs} ms`, faultId });
        await delay(isolateMs);
        termAtHeal = Math.max(0, ...session.cluster.leaderSamples().filter((s) => majority.includes(s.node) && s.term !== null).map((s) => s.term!));
        healMs = session.clock.now();
        await session.faults.network.remove(faultId);
        session.faults.record({ kind: 'partition', action: 'heal', targets: [n3], detail: `BC-20 heal ${n3}`, faultId });
        await delay(5_000);
      } finally {
        renewing.abort();
        await renewer;
        await session.faults.network.remove(faultId);
      }
      const after = session.cluster.leaderSamples().filter((s) => s.timeMs >= healMs && s.reachable && s.term !== null);
      const leaderTermsAfter = new Set(after.filter((s) => s.leader === s.node && s.term! > termAtHeal).map((s) => s.term));
      const n3Terms = after.filter((s) => s.node === n3).map((s) => s.term!);
      const n3FirstTerm = n3Terms[0] ?? 0;
      log(`${stamp(session, 'BC-20')} round ${rep}: term at heal ${termAtHeal}, new leader terms after heal ${leaderTermsAfter.size}, ${n3} rejoined at term ${n3FirstTerm}, renew stall max ${Math.round(stallMaxMs)} ms`);
      v.count('electionsAfterHeal', leaderTermsAfter.size);
      v.stats['renewStallMaxMs'] = Math.max(Number(v.stats['renewStallMaxMs'] ?? 0), Math.round(stallMaxMs));
      v.expect(leaderTermsAfter.size <= 1, 'heal-elections', `round ${rep}: ${leaderTermsAfter.size} elections after heal (allowed ≤ 1)`);
      v.expect(n3FirstTerm <= termAtHeal + 1, 'term-inflation', `round ${rep}: ${n3} came back with term ${n3FirstTerm} vs majority ${termAtHeal}`);
      v.expect(lost === 0, 'lease-kept', `round ${rep}: ${lost} renewals said the lease was lost`);
      v.expect(stallMaxMs <= session.timing.electionTimeoutMaxMs + 1_000, 'stall', `round ${rep}: a renew took ${Math.round(stallMaxMs)} ms`);
    }
    return v.build();
  },
};

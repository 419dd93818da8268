/**
 * BC-08 — a deposed leader serves stale reads (Consul leader-lease reads; canonical/raft).
 * A holds L through leader N1; N1 is cut off from its peers only (clients still reach it); on the
 * majority side A releases and B acquires (t2). Q keeps reading L on N1 throughout.
 * Expected: once B's grant has completed, no read answered by N1 shows A/t1 (docs/concepts.md default reads
 * are linearizable): N1 may answer an error, a redirect, a timeout, or B/t2.
 */
import type { Scenario } from './scenario.js';
import { VerdictBuilder } from './scenario.js';
import { LeaseClient, holderOf, tokenOf } from '../runner/client-call.js';
import { isolate } from '../faults/partition-plan.js';
import { every, stamp, waitForAnyLeader, waitForLeaderOtherThan } from './helpers.js';
import { delay } from '../util/clock.js';

export const bc08: Scenario = {
  name: 'BC-08',
  title: 'A deposed leader serves stale reads',
  faults: 'partition (peer-only, client path to the old leader stays up)',
  async run(session, { repetitions, log }) {
    const v = new VerdictBuilder();
    const nodeIds = session.backend.nodeIds;
    for (let rep = 0; rep < repetitions; rep++) {
      const name = `bc08-${rep}`;
      const n1 = await waitForAnyLeader(session);
      const a = new LeaseClient(session.history, session.cluster, 'A');
      const b = new LeaseClient(session.history, session.cluster, 'B');
      const q = new LeaseClient(session.history, session.cluster, 'Q');
      const granted = await a.acquire(n1, name, `A-${rep}`, 3_000);
      const t1 = tokenOf(granted.outcome);
      if (t1 === null) {
        v.count('skippedRounds');
        log(
          `${stamp(session, 'BC-08')} round ${rep}: A's acquire on ${n1} did not succeed (${JSON.stringify(granted.outcome)}); skipping round`,
        );
        continue;
      }
      const faultId = session.faults.nextFaultId();
      await session.faults.network.add(faultId, isolate(n1, nodeIds, [], true));
      session.faults.record({
        kind: 'partition',
        action: 'inject',
        targets: [n1],
        detail: `BC-08 peer-only isolate old leader ${n1}`,
        faultId,
      });
      // Q reads on N1 the whole time.
      const reading = new AbortController();
      const reads: {
        invokeMs: number;
        holder: string | null;
        token: number | null;
        ok: boolean;
      }[] = [];
      const reader = every(100, reading.signal, async () => {
        const invokeMs = session.clock.now();
        const r = await q.get(n1, name, 1_500);
        reads.push({
          invokeMs,
          holder: holderOf(r.outcome),
          token: tokenOf(r.outcome),
          ok: r.outcome.status === 'ok',
        });
      });
      let bGrantDoneMs: number | null = null;
      let t2: number | null = null;
      try {
        const n2 = await waitForLeaderOtherThan(session, n1, 20_000);
        log(
          `${stamp(session, 'BC-08')} round ${rep}: majority leader ${n2}; A releases and B acquires there`,
        );
        await a.release(n2, name, `A-${rep}`, t1);
        for (let attempt = 0; attempt < 20 && t2 === null; attempt++) {
          const got = await b.acquire(n2, name, `B-${rep}`, 10_000);
          t2 = tokenOf(got.outcome);
          if (t2 === null) await delay(250);
        }
        bGrantDoneMs = session.clock.now();
        v.expect(t2 !== null, 'progress', `round ${rep}: B never got ${name} on the majority side`);
        if (t2 !== null)
          v.expect(t2 > t1, 'fencing-monotonic', `round ${rep}: t2=${t2} not > t1=${t1}`);
        await delay(3_000); // keep reading on the deposed leader after B's grant
      } finally {
        reading.abort();
        await reader;
        await session.faults.network.remove(faultId);
        session.faults.record({
          kind: 'partition',
          action: 'heal',
          targets: [n1],
          detail: `BC-08 heal ${n1}`,
          faultId,
        });
      }
      const after = bGrantDoneMs === null ? [] : reads.filter((r) => r.invokeMs > bGrantDoneMs!);
      const stale = after.filter((r) => r.ok && (r.holder === `A-${rep}` || r.token === t1));
      v.count('readsAfterGrant', after.length);
      v.count('okReadsAfterGrant', after.filter((r) => r.ok).length);
      v.count('staleReads', stale.length);
      v.expect(
        stale.length === 0,
        'stale-read',
        `round ${rep}: ${stale.length} reads on deposed ${n1} returned A/t1 after B's grant`,
      );
      await waitForAnyLeader(session, 20_000);
    }
    return v.build();
  },
};

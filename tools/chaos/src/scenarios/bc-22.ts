/**
 * BC-22 — failover without fencing the old primary leads to split-brain writes (GitHub 2018).
 * P (client address c1) and Q campaign on `db-primary` (TTL 5 s); P wins (e1) and writes a test-owned
 * fenced store FS (accepts a token ≥ the highest seen). P is cut off from the cluster — not from FS —
 * for 12 s while it keeps writing with e1; Q campaigns until elected (e2) and writes with e2. Heal;
 * P renews and reads the election.
 * Expected: e2 > e1; after Q's first write FS rejects every P write (accepted-stale = 0); P's renew
 * after the heal is refused (not_holder); the election shows Q as leader.
 */
import type { Scenario } from './scenario.js';
import { VerdictBuilder } from './scenario.js';
import { LeaseClient, okBody } from '../runner/client-call.js';
import { clientCut } from '../faults/partition-plan.js';
import { every, stamp, waitForAnyLeader } from './helpers.js';
import { delay } from '../util/clock.js';
import { FencedStore } from '@tenure/testkit';

const epochOf = (body: Record<string, unknown> | null): number | null =>
  body !== null && body['elected'] === true && typeof body['fencingToken'] === 'number'
    ? body['fencingToken']
    : null;

export const bc22: Scenario = {
  name: 'BC-22',
  title: 'Failover without fencing the old primary leads to split-brain writes',
  faults: 'partition (client side, 12 s)',
  async run(session, { repetitions, log }) {
    const v = new VerdictBuilder();
    const c1 = session.backend.clientAddresses.find((c) => c.id === 'c1');
    if (c1 === undefined) throw new Error('BC-22 needs client address c1');
    for (let rep = 0; rep < Math.max(1, Math.ceil(repetitions / 3)); rep++) {
      const leader = await waitForAnyLeader(session);
      const group = `bc22-db-primary-${rep}`;
      const p = new LeaseClient(session.history, session.cluster, 'P', c1.localAddress);
      const q = new LeaseClient(session.history, session.cluster, 'Q');
      const fs = new FencedStore(() => session.clock.now());
      const write = (fencingToken: number, writer: string, payload: number): boolean =>
        fs.write({ resource: group, fencingToken, writer, payload }).accepted;
      const e1 = epochOf(okBody((await p.campaign(leader, group, `P-${rep}`, 5_000)).outcome));
      if (!v.expect(e1 !== null, 'progress', `round ${rep}: P was not elected`)) continue;
      write(e1!, 'P', 1);
      const stop = new AbortController();
      let e2: number | null = null;
      let qFirstWriteDone = false;
      let staleAccepted = 0;
      const loops = [
        every(500, stop.signal, async () => {
          // P believes it is primary and keeps writing with e1 (it also tries to renew).
          const accepted = write(e1!, 'P', 1);
          if (accepted && qFirstWriteDone) staleAccepted++;
          await p.electionRenew(
            session.cluster.currentLeader() ?? leader,
            group,
            `P-${rep}`,
            1_000,
          );
        }),
        every(500, stop.signal, async () => {
          const node = session.cluster.currentLeader() ?? leader;
          if (e2 === null) {
            e2 = epochOf(okBody((await q.campaign(node, group, `Q-${rep}`, 5_000)).outcome));
            if (e2 === null) return;
          }
          if (write(e2, 'Q', 2)) qFirstWriteDone = true;
          await q.electionRenew(node, group, `Q-${rep}`, 1_500);
        }),
      ];
      const faultId = session.faults.nextFaultId();
      try {
        await delay(1_000);
        await session.faults.network.add(faultId, clientCut(['c1'], session.backend.nodeIds));
        session.faults.record({
          kind: 'partition',
          action: 'inject',
          targets: ['c1'],
          detail: 'BC-22 cut P (c1) from the cluster for 12 s',
          faultId,
        });
        await delay(12_000);
      } finally {
        await session.faults.network.remove(faultId);
        session.faults.record({
          kind: 'partition',
          action: 'heal',
          targets: ['c1'],
          detail: 'BC-22 heal P (c1)',
          faultId,
        });
        await delay(1_500);
        stop.abort();
        await Promise.all(loops);
      }
      const node = session.cluster.currentLeader() ?? leader;
      const pRenew = (await p.electionRenew(node, group, `P-${rep}`)).outcome;
      const view = okBody((await p.electionGet(node, group)).outcome);
      const viewLeader = view?.['leader'] as { candidate?: string } | null | undefined;
      log(
        `${stamp(session, 'BC-22')} round ${rep}: e1=${e1} e2=${e2}; FS accepted ${fs.totals().accepted}, rejected ${fs.totals().rejected}, stale accepted ${staleAccepted}; P renew after heal ${pRenew.status}; leader ${viewLeader?.candidate ?? 'none'}`,
      );
      v.count('fsRejected', fs.totals().rejected);
      v.count('staleAccepted', staleAccepted);
      v.expect(e2 !== null, 'progress', `round ${rep}: Q was never elected after P was cut off`);
      if (e2 === null) continue;
      v.expect(e2 > e1!, 'fencing-monotonic', `round ${rep}: e2=${e2} not > e1=${e1}`);
      v.expect(
        staleAccepted === 0,
        'split-brain',
        `round ${rep}: FS accepted ${staleAccepted} writes with e1 after Q's first write`,
      );
      v.expect(
        pRenew.status === 'fail' && pRenew.code === 'not_holder',
        'leadership-lost',
        `round ${rep}: P's renew after the heal answered ${JSON.stringify(pRenew)}`,
      );
      v.expect(
        viewLeader?.candidate === `Q-${rep}`,
        'observe',
        `round ${rep}: election shows ${JSON.stringify(view)}`,
      );
    }
    return v.build();
  },
};

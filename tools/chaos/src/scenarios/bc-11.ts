/**
 * BC-11 — double lock after a session expires, because of a leftover lock entry (Curator).
 * A (client address c1) acquires L (TTL 3 s); c1 is cut off from every node for 6 s; B (c2, TTL 30 s), waiting
 * on L, is granted when A's lease expires (t2). After the heal A renews with its old grant and
 * acquires again under a new identity.
 * Expected: exactly one holder (B): A's renew answers not_holder/lease_expired, A's new acquire is
 * refused (or, if ever granted, carries a token > t2), and get(L) shows B.
 */
import type { Scenario } from './scenario.js';
import { VerdictBuilder } from './scenario.js';
import { LeaseClient, okBody, tokenOf } from '../runner/client-call.js';
import { clientCut } from '../faults/partition-plan.js';
import { stamp, waitForAnyLeader } from './helpers.js';
import { delay } from '../util/clock.js';

export const bc11: Scenario = {
  name: 'BC-11',
  title: 'Double lock after a session expires, because of a leftover lock entry',
  faults: 'partition (client <-> cluster)',
  async run(session, { repetitions, log }) {
    const v = new VerdictBuilder();
    const c1 = session.backend.clientAddresses.find((c) => c.id === 'c1');
    const c2 = session.backend.clientAddresses.find((c) => c.id === 'c2');
    if (c1 === undefined || c2 === undefined)
      throw new Error('BC-11 needs client addresses c1 and c2');
    for (let rep = 0; rep < repetitions; rep++) {
      const leader = await waitForAnyLeader(session);
      const name = `bc11-${rep}`;
      const a = new LeaseClient(session.history, session.cluster, 'A', c1.localAddress);
      const b = new LeaseClient(session.history, session.cluster, 'B', c2.localAddress);
      const t1 = tokenOf((await a.acquire(leader, name, `A-${rep}`, 3_000)).outcome);
      if (!v.expect(t1 !== null, 'progress', `round ${rep}: A's acquire failed`)) continue;
      const bWait = b.acquire(leader, name, `B-${rep}`, 30_000, undefined, 15_000); // B holds long enough to be the holder A meets
      const faultId = session.faults.nextFaultId();
      await session.faults.network.add(faultId, clientCut(['c1'], session.backend.nodeIds));
      session.faults.record({
        kind: 'partition',
        action: 'inject',
        targets: ['c1'],
        detail: 'BC-11 cut client A (c1) off for 6 s',
        faultId,
      });
      let aRenewDuringCut = 'none';
      try {
        aRenewDuringCut = (await a.renew(leader, name, `A-${rep}`, t1!, 1_500)).outcome.status;
        await delay(4_500);
      } finally {
        await session.faults.network.remove(faultId);
        session.faults.record({
          kind: 'partition',
          action: 'heal',
          targets: ['c1'],
          detail: 'BC-11 heal client A (c1)',
          faultId,
        });
      }
      const t2 = tokenOf((await bWait).outcome);
      const node = session.cluster.currentLeader() ?? leader;
      const aRenew = (await a.renew(node, name, `A-${rep}`, t1!)).outcome;
      const aAgain = (await a.acquire(node, name, `A2-${rep}`, 3_000)).outcome;
      const read = okBody((await a.get(node, name)).outcome);
      log(
        `${stamp(session, 'BC-11')} round ${rep}: B ${t2 === null ? 'not granted' : `granted t=${t2}`}; A renew during cut ${aRenewDuringCut}, after ${aRenew.status}${aRenew.status === 'fail' ? ` ${aRenew.code}` : ''}; A re-acquire ${aAgain.status}`,
      );
      v.expect(
        t2 !== null,
        'progress',
        `round ${rep}: B's waiting acquire was not granted after A's lease expired`,
      );
      if (t2 === null) continue;
      v.expect(t2 > t1!, 'fencing-monotonic', `round ${rep}: t2=${t2} not > t1=${t1}`);
      v.expect(
        aRenew.status === 'fail' &&
          (aRenew.code === 'not_holder' || aRenew.code === 'lease_expired'),
        'one-holder',
        `round ${rep}: A's renew after the cut answered ${JSON.stringify(aRenew)}`,
      );
      const again = tokenOf(aAgain);
      v.expect(
        again === null || again > t2,
        'one-holder',
        `round ${rep}: A's new acquire was granted with token ${again} while B holds ${t2}`,
      );
      if (again === null)
        v.expect(
          read?.['holder'] === `B-${rep}`,
          'one-holder',
          `round ${rep}: get(L) shows ${JSON.stringify(read)}, expected B`,
        );
      await b.release(node, name, `B-${rep}`, t2);
    }
    return v.build();
  },
};

/**
 * BC-02 — a paused holder keeps writing after its lease expired: fencing is the only fix.
 * A acquires L (t1) and reads FS counter v; A then stalls for 0.5–3 × TTL (in odd rounds the
 * server leader is SIGSTOPped for that long instead); B acquires L (waiting up to 4 × TTL), gets
 * t2 and writes v+1 with t2; A wakes and writes v+1 with t1.
 * Expected, every round: t2 > t1; FS rejects A's stale write whenever B wrote first (accepted-stale
 * = 0, no increment lost); after B's grant the server never reports A as holder.
 */
import type { Scenario } from './scenario.js';
import { VerdictBuilder } from './scenario.js';
import { LeaseClient, holderOf, tokenOf } from '../runner/client-call.js';
import { stamp, waitForAnyLeader } from './helpers.js';
import { FencedStore } from '@tenure/testkit';
import { delay } from '../util/clock.js';

const ttlMs = 1_000;

export const bc02: Scenario = {
  name: 'BC-02',
  title: 'Paused holder keeps writing after its lease expired: fencing is the only fix',
  faults: 'pause (client stall; server leader SIGSTOP in odd rounds)',
  async run(session, { repetitions, log }) {
    const v = new VerdictBuilder();
    const fs = new FencedStore(() => session.clock.now());
    const rounds = repetitions * 4;
    let staleAccepted = 0;
    for (let rep = 0; rep < rounds; rep++) {
      const leader = await waitForAnyLeader(session, 20_000);
      const name = `bc02-${rep}`;
      const a = new LeaseClient(session.history, session.cluster, 'A');
      const b = new LeaseClient(session.history, session.cluster, 'B');
      const t1 = tokenOf((await a.acquire(leader, name, `A-${rep}`, ttlMs)).outcome);
      if (t1 === null) {
        v.count('skippedRounds');
        continue;
      }
      const base = Number(fs.read(name).value ?? 0);
      const pauseMs = Math.round(ttlMs * (0.5 + 2.5 * session.random.next()));
      const pauseServer = rep % 2 === 1;
      const faultId = session.faults.nextFaultId();
      if (pauseServer) {
        await session.backend.pauseNode(leader);
        session.faults.record({
          kind: 'pause',
          action: 'inject',
          targets: [leader],
          detail: `BC-02 SIGSTOP leader ${leader} for ${pauseMs} ms`,
          faultId,
        });
      }
      // B contends while A is stalled (A does nothing during the pause).
      const others = session.backend.nodeIds.filter((id) => id !== leader);
      const bResult = (async () => {
        const deadline = session.clock.now() + pauseMs + 4 * ttlMs;
        while (session.clock.now() < deadline) {
          const node = session.cluster.currentLeader() ?? session.random.pick(others);
          const t2 = tokenOf((await b.acquire(node, name, `B-${rep}`, 10_000, 1_500)).outcome);
          if (t2 !== null) return { t2, node, doneMs: session.clock.now() };
          await delay(100);
        }
        return null;
      })();
      await delay(pauseMs);
      if (pauseServer) {
        await session.backend.resumeNode(leader);
        session.faults.record({
          kind: 'pause',
          action: 'heal',
          targets: [leader],
          detail: `BC-02 SIGCONT ${leader}`,
          faultId,
        });
      }
      const bGot = pauseMs > ttlMs * 1.2 ? await bResult : null;
      if (bGot !== null) {
        v.expect(bGot.t2 > t1, 'fencing-monotonic', `round ${rep}: t2=${bGot.t2} not > t1=${t1}`);
        v.expect(
          fs.write({ resource: name, fencingToken: bGot.t2, writer: 'B', payload: base + 1 })
            .accepted,
          'fs',
          `round ${rep}: FS rejected B's write with the newest token ${bGot.t2}`,
        );
      }
      // A wakes up and writes with its old token.
      const aAccepted = fs.write({
        resource: name,
        fencingToken: t1,
        writer: 'A',
        payload: base + 1,
      }).accepted;
      if (bGot !== null && aAccepted) staleAccepted++;
      if (bGot !== null) {
        const read = await a.get(bGot.node, name, 2_000);
        const holder = holderOf(read.outcome);
        v.expect(
          holder === null || holder === `B-${rep}`,
          'holder-after-grant',
          `round ${rep}: get(L) after B's grant shows ${holder}`,
        );
      } else {
        await bResult; // let B's attempts finish before the next round
      }
      v.count(bGot !== null ? 'roundsTakenOver' : 'roundsNotTakenOver');
      log(
        `${stamp(session, 'BC-02')} round ${rep}: pause ${pauseMs} ms (${pauseServer ? 'server leader' : 'client'}); B ${bGot === null ? 'did not take over' : `took over t2=${bGot.t2}`}; A's stale write ${aAccepted ? 'accepted' : 'rejected'}`,
      );
    }
    v.stats['staleAccepted'] = staleAccepted;
    v.stats['fsRejected'] = fs.totals().rejected;
    v.expect(
      staleAccepted === 0,
      'accepted-stale',
      `${staleAccepted} stale writes accepted after a newer grant`,
    );
    return v.build();
  },
};

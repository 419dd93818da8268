/**
 * BC-10 — a restarted node serves stale cached state (Kubernetes watch cache).
 * N3 (a follower) is cut off from its peers; 50 acquire/release cycles run on the majority, the
 * last holder B keeps token t50; N3 is SIGKILLed and restarted while still cut off, then healed.
 * Q reads and watches L on N3 throughout. Expected: no ok read on N3 shows a holder/token older
 * than B/t50 (it blocks or errors until caught up); a watch never presents an older grant as new.
 */
import type { Scenario } from './scenario.js';
import { VerdictBuilder } from './scenario.js';
import { LeaseClient, okBody, tokenOf } from '../runner/client-call.js';
import { isolate } from '../faults/partition-plan.js';
import { every, stamp, waitForAnyLeader } from './helpers.js';
import { delay } from '../util/clock.js';

/** Acquire/release cycles on the majority (the case asks for 50). */
const cycles = 50;
/** How long the restarted node may take to answer a read after the heal (a broken cluster only). */
const CATCH_UP_MS = 15_000;

export const bc10: Scenario = {
  name: 'BC-10',
  title: 'A restarted node serves stale cached state',
  faults: 'partition (peer-only) + kill -9 + restart',
  async run(session, { repetitions, log }) {
    const v = new VerdictBuilder();
    const nodeIds = session.backend.nodeIds;
    for (let rep = 0; rep < Math.max(1, Math.ceil(repetitions / 3)); rep++) {
      const name = `bc10-${rep}`;
      const leader = await waitForAnyLeader(session);
      const n3 = nodeIds.find((id) => id !== leader)!;
      const client = new LeaseClient(session.history, session.cluster, 'W');
      const q = new LeaseClient(session.history, session.cluster, 'Q');
      const faultId = session.faults.nextFaultId();
      await session.faults.network.add(faultId, isolate(n3, nodeIds, [], true));
      session.faults.record({
        kind: 'partition',
        action: 'inject',
        targets: [n3],
        detail: `BC-10 peer-only isolate ${n3}`,
        faultId,
      });
      let lastToken: number | null = null;
      let lastHolder = '';
      for (let i = 0; i < cycles; i++) {
        const holder = `H${rep}-${i}`;
        const got = await client.acquire(leader, name, holder, 60_000);
        const token = tokenOf(got.outcome);
        if (token === null) continue;
        lastToken = token;
        lastHolder = holder;
        if (i < cycles - 1) await client.release(leader, name, holder, token);
      }
      v.expect(
        lastToken !== null,
        'progress',
        `round ${rep}: no acquire succeeded on the majority`,
      );
      if (lastToken === null) continue;
      const bToken = lastToken;
      log(
        `${stamp(session, 'BC-10')} round ${rep}: ${cycles} cycles done, last holder ${lastHolder} t=${bToken}; kill -9 ${n3}`,
      );
      const reading = new AbortController();
      const bad: string[] = [];
      let okReads = 0;
      const reader = every(100, reading.signal, async () => {
        const r = await q.get(n3, name, 1_500);
        const body = okBody(r.outcome);
        if (body === null) return;
        okReads++;
        if (body['holder'] !== lastHolder || body['fencingToken'] !== bToken)
          bad.push(`read on ${n3}: ${JSON.stringify(body)}`);
      });
      const watcher = (async () => {
        // A watch resumed after an older token must answer B/t50 (never an older grant as new).
        while (!reading.signal.aborted) {
          const r = await q.watch(n3, name, Math.max(0, bToken - 1), 1_000);
          const body = okBody(r.outcome);
          if (
            body !== null &&
            body['changed'] === true &&
            typeof body['fencingToken'] === 'number' &&
            body['fencingToken'] < bToken
          )
            bad.push(`watch on ${n3}: ${JSON.stringify(body)}`);
          if (body === null) await delay(100);
        }
      })();
      try {
        await session.backend.killNode(n3);
        session.faults.record({
          kind: 'crash',
          action: 'inject',
          targets: [n3],
          detail: `BC-10 SIGKILL ${n3} (partitioned)`,
          faultId: faultId + 100_000,
        });
        await session.backend.startNode(n3);
        session.faults.record({
          kind: 'crash',
          action: 'heal',
          targets: [n3],
          detail: `BC-10 restart ${n3} (still partitioned)`,
          faultId: faultId + 100_000,
        });
        await delay(5_000);
        await session.faults.network.remove(faultId);
        session.faults.record({
          kind: 'partition',
          action: 'heal',
          targets: [n3],
          detail: `BC-10 heal ${n3}`,
          faultId,
        });
        // Reads go on until one is answered: a leader's old socket to the killed node can sit in TCP
        // retransmission backoff for seconds after the heal before the new process resets it.
        const healedAt = performance.now();
        while (okReads === 0 && performance.now() - healedAt < CATCH_UP_MS) await delay(100);
        await delay(1_000);
      } finally {
        reading.abort();
        await reader;
        await watcher;
        await session.faults.network.remove(faultId);
      }
      v.count('okReadsOnRestarted', okReads);
      v.count('staleAnswers', bad.length);
      v.expect(
        bad.length === 0,
        'stale-read',
        `round ${rep}: ${bad.length} stale answers on restarted ${n3}; first: ${bad[0] ?? ''}`,
      );
      v.expect(
        okReads > 0,
        'catch-up',
        `round ${rep}: ${n3} never answered a read after rejoining (${CATCH_UP_MS / 1000} s after heal)`,
      );
    }
    return v.build();
  },
};

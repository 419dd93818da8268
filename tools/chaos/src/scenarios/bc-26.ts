/**
 * BC-26 — an acknowledged write is lost after a crash (etcd #14370, Jepsen lazyfs).
 * Five clients loop: acquire their own lease, write their counter key (fenced by nothing, value n
 * only after n−1 was acknowledged), release. Every 6–10 s all three nodes are SIGKILLed at once
 * and restarted 1 s later (`repetitions` cycles).
 * Expected: after recovery every counter reads ≥ its last acknowledged value (no acknowledged
 * write lost, docs/concepts.md), and each lease's acknowledged grants carry strictly increasing tokens
 * (no token issued twice, docs/concepts.md). The un-fsynced-storage variant is not done here.
 */
import type { Scenario } from './scenario.js';
import { VerdictBuilder } from './scenario.js';
import { LeaseClient, okBody, tokenOf } from '../runner/client-call.js';
import { stamp, waitForAnyLeader } from './helpers.js';
import { delay } from '../util/clock.js';

const clientCount = 5;

export const bc26: Scenario = {
  name: 'BC-26',
  title: 'An acknowledged write is lost after a crash',
  faults: 'kill (all nodes at once) + restart',
  async run(session, { repetitions, log }) {
    const v = new VerdictBuilder();
    const stop = new AbortController();
    const acked = new Map<number, number>();
    const tokens = new Map<number, number[]>();
    const loops = Array.from({ length: clientCount }, async (_, i) => {
      const client = new LeaseClient(session.history, session.cluster, `P${i}`);
      const r = session.random.fork(`bc26-${i}`);
      let n = 1;
      let incarnation = 0;
      while (!stop.signal.aborted) {
        const node = session.cluster.currentLeader() ?? r.pick(session.backend.nodeIds);
        const holder = `P${i}-${incarnation++}`;
        const got = await client.acquire(node, `bc26-l${i}`, holder, 3_000, 2_000);
        const token = tokenOf(got.outcome);
        if (token !== null) tokens.set(i, [...(tokens.get(i) ?? []), token]);
        const put = await client.kvPut(node, `bc26-k${i}`, n, 2_000);
        if (put.outcome.status === 'ok') acked.set(i, n++);
        if (token !== null) await client.release(node, `bc26-l${i}`, holder, token, 2_000);
        if (got.outcome.status !== 'ok' || put.outcome.status !== 'ok') await delay(r.int(50, 250));
      }
    });
    try {
      for (let cycle = 0; cycle < repetitions; cycle++) {
        await delay(session.random.int(6_000, 10_000));
        const faultId = session.faults.nextFaultId();
        await Promise.all(session.backend.nodeIds.map((id) => session.backend.killNode(id)));
        session.faults.record({
          kind: 'restart-all',
          action: 'inject',
          targets: session.backend.nodeIds,
          detail: `BC-26 SIGKILL all nodes (cycle ${cycle})`,
          faultId,
        });
        await delay(1_000);
        for (const id of session.backend.nodeIds) await session.backend.startNode(id);
        session.faults.record({
          kind: 'restart-all',
          action: 'heal',
          targets: session.backend.nodeIds,
          detail: `BC-26 restart all`,
          faultId,
        });
        log(
          `${stamp(session, 'BC-26')} cycle ${cycle}: all nodes killed and restarted; acked so far ${[...acked.values()].reduce((x, y) => x + y, 0)}`,
        );
      }
      await waitForAnyLeader(session, 20_000);
      await delay(2_000);
    } finally {
      stop.abort();
      await Promise.all(loops);
    }
    const leader = await waitForAnyLeader(session, 20_000);
    const reader = new LeaseClient(session.history, session.cluster, 'R');
    for (let i = 0; i < clientCount; i++) {
      const last = acked.get(i) ?? 0;
      const r = await reader.kvGet(leader, `bc26-k${i}`, 5_000);
      const value = okBody(r.outcome)?.['value'];
      v.count('ackedWrites', last);
      if (last > 0)
        v.expect(
          typeof value === 'number' && value >= last,
          'durability',
          `counter ${i}: read ${JSON.stringify(value ?? r.outcome)} < last acknowledged ${last}`,
        );
      const ts = tokens.get(i) ?? [];
      v.count('grants', ts.length);
      v.expect(
        ts.every((t, k) => k === 0 || t > ts[k - 1]!),
        'fencing-monotonic',
        `lease ${i}: tokens not strictly increasing: ${ts.join(',')}`,
      );
    }
    return v.build();
  },
};

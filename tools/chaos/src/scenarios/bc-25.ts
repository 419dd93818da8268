/**
 * BC-25 — a crash during snapshot install leaves a follower broken (etcd raftexample, Dgraph).
 * Nodes snapshot and compact every 100 entries (keeping 20). Each cycle cuts a follower N3 off
 * from its peers (peer-only) while 40 concurrent loops run lock operations (acquire/release)
 * through the majority — ~1,000 in the first cycle, 250 in later ones, always more than
 * snapshotEntries + keep, so the leader's log is compacted past N3's and N3 needs InstallSnapshot
 * — then heals and SIGKILLs N3 at a seeded moment 0–300 ms after the heal (during its catch-up)
 * and restarts it; `killsPerRound` cycles per round (each next cycle starts once the restarted N3
 * answers HTTP, possibly still installing). Expected: N3 restarts
 * without manual repair, catches up within 10 s of its last restart (appliedIndex ≥ the leader's
 * commitIndex at heal time), its state hash (`GET /v1/cluster/state`) equals the leader's at a
 * common appliedIndex, and the holders/tokens it serves on stale reads equal the leader's.
 * Scaled: docs/failure-scenarios.md asks for 20 kills; one round = `killsPerRound` kills, and
 * `--repetitions N` runs N rounds (4 rounds = 20 kills). The un-fsynced-loss variant is not run.
 */
import type { NodeId } from '../types.js';
import type { Session } from '../runner/session.js';
import type { Scenario } from './scenario.js';
import { VerdictBuilder } from './scenario.js';
import { LeaseClient, tokenOf } from '../runner/client-call.js';
import { isolate } from '../faults/partition-plan.js';
import { stamp, waitFor, waitForAnyLeader } from './helpers.js';
import { delay } from '../util/clock.js';
import { httpJson } from '../util/http.js';

/** Server flags: snapshot every 100 applied entries, keep 20 behind it (docs/failure-scenarios.md BC-25). */
export const bc25ServerArgs: readonly string[] = [
  '--snapshot-entries',
  '100',
  '--snapshot-keep-entries',
  '20',
];
/** Lock operations (acquire + release attempts) run on the majority while N3 is first cut off. */
const lockOps = 1_000;
/** Lock operations in each later cut-off: > snapshotEntries + keep, so N3 needs a snapshot again. */
const lockOpsPerKill = 250;
/** Concurrent client loops, one lease each. */
const loops = 40;
/** SIGKILL/restart cycles of N3 per round (the case asks for 20 in all: `--repetitions 4`). */
const killsPerRound = 5;
/** Latest kill moment after the heal / the previous restart, ms. */
const killWindowMs = 300;
/** N3 must reach the leader's commitIndex at heal time within this long after its last restart. */
const catchUpMs = 10_000;
/** How long hash and holder comparisons may poll for a common index / agreeing answers, ms. */
const compareMs = 10_000;

/** `/v1/cluster/state` of one node, or null when it does not answer. */
interface ReplicaState {
  readonly appliedIndex: number;
  readonly stateHash: string;
}

async function replicaState(session: Session, node: NodeId): Promise<ReplicaState | null> {
  try {
    const r = await httpJson(
      'GET',
      `${session.cluster.endpoint(node).httpUrl}/v1/cluster/state`,
      undefined,
      { timeoutMs: 1_000 },
    );
    const body = r.json as { appliedIndex?: unknown; stateHash?: unknown } | undefined;
    if (
      r.status !== 200 ||
      typeof body?.appliedIndex !== 'number' ||
      typeof body.stateHash !== 'string'
    )
      return null;
    return { appliedIndex: body.appliedIndex, stateHash: body.stateHash };
  } catch {
    return null;
  }
}

async function commitIndexOf(session: Session, node: NodeId): Promise<number | null> {
  try {
    const r = await httpJson(
      'GET',
      `${session.cluster.endpoint(node).httpUrl}/v1/cluster`,
      undefined,
      { timeoutMs: 1_000 },
    );
    const c = (r.json as { commitIndex?: unknown } | undefined)?.commitIndex;
    return r.status === 200 && typeof c === 'number' ? c : null;
  } catch {
    return null;
  }
}

/** `holder/token` of lease `name` on `node` (`stale`: the local replica), `-` when free, null on error. */
async function leaseView(
  session: Session,
  node: NodeId,
  name: string,
  stale: boolean,
): Promise<string | null> {
  try {
    const r = await httpJson(
      'GET',
      `${session.cluster.endpoint(node).httpUrl}/v1/leases/${name}${stale ? '?consistency=stale' : ''}`,
      undefined,
      { timeoutMs: 2_000 },
    );
    if (r.status === 404) return '-';
    const b = r.json as { holder?: unknown; fencingToken?: unknown } | undefined;
    return r.status === 200 && typeof b?.holder === 'string' && typeof b.fencingToken === 'number'
      ? `${b.holder}/${b.fencingToken}`
      : null;
  } catch {
    return null;
  }
}

export const bc25: Scenario = {
  name: 'BC-25',
  title: 'A crash during snapshot install leaves a follower broken',
  faults: 'partition (peer-only) + kill -9 during snapshot catch-up + restart',
  serverArgs: bc25ServerArgs,
  async run(session, { repetitions, log }) {
    const v = new VerdictBuilder();
    const nodeIds = session.backend.nodeIds;
    const random = session.random.fork('bc25');
    for (let rep = 0; rep < Math.max(1, repetitions); rep++) {
      const leader = await waitForAnyLeader(session);
      const n3 = [...nodeIds].reverse().find((id) => id !== leader)!;
      const names = Array.from({ length: loops }, (_, i) => `bc25-${rep}-L${i}`);
      const clients = names.map(
        (_, i) => new LeaseClient(session.history, session.cluster, `W${rep}-${i}`),
      );
      const serial = new Map<string, number>();
      /** Grants a loop still holds (released first in the next cycle). */
      const held = new Map<string, { holder: string; token: number }>();
      let commitAtHeal = 0;
      let restartedAtMs = performance.now();
      for (let k = 0; k < killsPerRound; k++) {
        // N3 must be running (restarted by the previous cycle) before it is cut off again.
        await waitFor(() => replicaState(session, n3), 15_000, `${n3} answering after restart`);
        const faultId = session.faults.nextFaultId();
        await session.faults.network.add(faultId, isolate(n3, nodeIds, [], true));
        session.faults.record({
          kind: 'partition',
          action: 'inject',
          targets: [n3],
          detail: `BC-25 peer-only isolate ${n3}`,
          faultId,
        });
        const budget = k === 0 ? lockOps : lockOpsPerKill;
        let done = 0;
        let okOps = 0;
        try {
          // Each loop alternates acquire / release on its own lease until the shared budget is
          // spent; a grant held when the budget ends stays held (live grants to compare).
          await Promise.all(
            names.map(async (name, i) => {
              const client = clients[i]!;
              while (done < budget) {
                done++;
                const mine = held.get(name);
                if (mine !== undefined) {
                  const rel = await client.release(leader, name, mine.holder, mine.token);
                  if (rel.outcome.status === 'ok') okOps++;
                  held.delete(name);
                  continue;
                }
                const n = (serial.get(name) ?? 0) + 1;
                serial.set(name, n);
                const holder = `H${rep}-${i}-${n}`;
                const token = tokenOf((await client.acquire(leader, name, holder, 60_000)).outcome);
                if (token === null) continue;
                okOps++;
                held.set(name, { holder, token });
              }
            }),
          );
          commitAtHeal = await waitFor(
            () => commitIndexOf(session, leader),
            5_000,
            `commitIndex of ${leader}`,
          );
        } finally {
          await session.faults.network.remove(faultId);
        }
        session.faults.record({
          kind: 'partition',
          action: 'heal',
          targets: [n3],
          detail: `BC-25 heal ${n3}`,
          faultId,
        });
        v.count('lockOpsOk', okOps);
        v.count('lockOps', done);
        v.expect(
          okOps >= budget / 2,
          'progress',
          `round ${rep} cycle ${k}: only ${okOps} of ${budget} lock operations succeeded on the majority`,
        );
        const atMs = random.int(0, killWindowMs);
        await delay(atMs);
        const before = await replicaState(session, n3);
        if (before !== null && before.appliedIndex < commitAtHeal) v.count('killsWhileBehind');
        await session.backend.killNode(n3);
        const crashId = session.faults.nextFaultId();
        session.faults.record({
          kind: 'crash',
          action: 'inject',
          targets: [n3],
          detail: `BC-25 SIGKILL ${n3} ${atMs} ms after heal (${okOps}/${done} ops ok; leader commit ${commitAtHeal}, ${n3} applied ${before?.appliedIndex ?? '?'}; kill ${k + 1}/${killsPerRound})`,
          faultId: crashId,
        });
        await session.backend.startNode(n3);
        restartedAtMs = performance.now();
        session.faults.record({
          kind: 'crash',
          action: 'heal',
          targets: [n3],
          detail: `BC-25 restart ${n3}`,
          faultId: crashId,
        });
        v.count('kills');
      }
      // Catch-up: bounded polling of N3's applied index.
      const caught = await waitFor(
        async () => {
          const s = await replicaState(session, n3);
          return s !== null && s.appliedIndex >= commitAtHeal ? s : null;
        },
        catchUpMs,
        `${n3} to apply ${commitAtHeal}`,
      ).catch(() => null);
      const catchUpTookMs = Math.round(performance.now() - restartedAtMs);
      v.expect(
        caught !== null,
        'catch-up',
        `round ${rep}: ${n3} did not reach applied index ${commitAtHeal} within ${catchUpMs} ms of its last restart`,
      );
      if (caught === null) continue;
      v.stats[`catchUpMs.r${rep}`] = catchUpTookMs;
      log(
        `${stamp(session, 'BC-25')} round ${rep}: ${n3} applied ${caught.appliedIndex} ≥ ${commitAtHeal} ${catchUpTookMs} ms after its last restart`,
      );

      // State hash at a common applied index: poll both, compare the first index both reported.
      const seen = new Map<NodeId, Map<number, string>>([
        [leader, new Map()],
        [n3, new Map()],
      ]);
      const common = await waitFor(
        async () => {
          const [a, b] = await Promise.all([
            replicaState(session, leader),
            replicaState(session, n3),
          ]);
          if (a !== null) seen.get(leader)!.set(a.appliedIndex, a.stateHash);
          if (b !== null) seen.get(n3)!.set(b.appliedIndex, b.stateHash);
          for (const [index, hash] of seen.get(n3)!) {
            const other = seen.get(leader)!.get(index);
            if (other !== undefined) return { index, leaderHash: other, n3Hash: hash };
          }
          return null;
        },
        compareMs,
        `${leader} and ${n3} reporting the same appliedIndex`,
        20,
      ).catch(() => null);
      v.expect(
        common !== null,
        'state-hash',
        `round ${rep}: ${leader} and ${n3} never reported the same appliedIndex within ${compareMs} ms`,
      );
      if (common !== null) {
        v.stats[`hashIndex.r${rep}`] = common.index;
        v.expect(
          common.leaderHash === common.n3Hash,
          'state-hash',
          `round ${rep}: at appliedIndex ${common.index} ${leader} has ${common.leaderHash.slice(0, 16)}… but ${n3} has ${common.n3Hash.slice(0, 16)}…`,
        );
      }

      // Holders/tokens N3 serves from its own replica equal the leader's (no ops run now).
      let mismatches: string[] = [];
      const agreed = await waitFor(
        async () => {
          mismatches = [];
          for (const name of names) {
            const [a, b] = await Promise.all([
              leaseView(session, leader, name, false),
              leaseView(session, n3, name, true),
            ]);
            if (a === null || b === null || a !== b)
              mismatches.push(`${name}: leader ${a ?? 'error'}, ${n3} ${b ?? 'error'}`);
          }
          return mismatches.length === 0 ? true : null;
        },
        compareMs,
        `${n3}'s stale reads to match ${leader}`,
        200,
      ).catch(() => null);
      v.expect(
        agreed !== null,
        'holders',
        `round ${rep}: ${mismatches.length} leases differ on ${n3}; first: ${mismatches[0] ?? ''}`,
      );
    }
    return v.build();
  },
};

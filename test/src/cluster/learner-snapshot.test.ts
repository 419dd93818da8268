// Proves a learner catches up from a snapshot larger than any frame (docs/architecture.md "How
// snapshots travel", docs/operations.md): real processes write TENURE_SNAPSHOT_MB MiB of KV values
// (4 in the suite; `npm run test:big-snapshot` uses 200, over the 64 MiB frame bound), the leader
// compacts its log, a new node `--join`s as a learner, receives the state as chunked InstallSnapshot,
// and ends with the leader's exact replica (same applied index, same state hash). Prints the catch-up
// time and the leader's RSS and CPU while it sends.
import t from 'tap';
import { pollUntil } from '@tenure/testkit';
import { readFileSync } from 'node:fs';
import { LocalCluster } from '../support/cluster.js';
import { retrying } from '../support/http-client.js';
import { usage } from '../support/proc-usage.js';

/** Bounds a broken cluster only (a loaded 2-core machine is slow, never this slow). */
const UNTIL_MS = 600_000;
const STATE_MIB = Number(process.env.TENURE_SNAPSHOT_MB ?? '4');
const VALUE_BYTES = 1024 * 1024 - 1024;

/** Polls `check` until it returns a value (not undefined/false); fails after UNTIL_MS. */
const until = <T>(what: string, check: () => Promise<T>) =>
  pollUntil(what, check, { timeoutMs: UNTIL_MS, intervalMs: 100 });

interface ReplicaState {
  appliedIndex: number;
  stateHash: string;
}

async function replica(c: LocalCluster, id: string): Promise<ReplicaState> {
  const a = await c.request(id, 'GET', '/v1/cluster/state', undefined, {}, 60_000);
  if (a.status !== 200) throw new Error(`${id} state: ${a.status}`);
  return a.body as ReplicaState;
}

t.test(`a learner catches up from a ${STATE_MIB} MiB snapshot`, async (t) => {
  const c = await LocalCluster.start({
    logLevel: 'info',
    // Taking a snapshot of hundreds of MB stalls a node for seconds on a loaded machine: no elections
    // for that.
    ...(STATE_MIB > 50 ? { heartbeatMs: 500, electionTimeoutMs: 10_000 } : {}),
    extraArgs: [
      '--value-bytes-max',
      String(2 * 1024 * 1024),
      // One snapshot, at the end of the writes: it holds (almost) the whole state.
      '--snapshot-entries',
      String(Math.max(4, STATE_MIB)),
      '--snapshot-keep-entries',
      '0',
      '--state-hash-route',
      'on',
    ],
  });
  t.teardown(() => c.teardown());
  await c.waitForLeader();
  const filler = 'x'.repeat(VALUE_BYTES);
  for (let i = 0; i < STATE_MIB; i++) {
    const a = await retrying(
      c,
      'PUT',
      `/v1/kv/big-${i}`,
      { value: `${i}:${filler}` },
      {
        totalMs: UNTIL_MS,
      },
    );
    if (a.status !== 200) throw new Error(`PUT big-${i}: ${a.status} ${JSON.stringify(a.body)}`);
  }
  const leaderId = await c.waitForLeader();
  const leaderPid = c.pid(leaderId)!;
  // The leader compacted past the start of its log: a new node can only start from a snapshot.
  await until('the leader took a snapshot', async () =>
    /took snapshot/.test(readFileSync(c.node(leaderId).logFile, 'utf8')),
  );

  const n4 = await c.addNode('n4');
  const before = usage(leaderPid);
  let rssPeakBytes = before.rssBytes;
  const sampler = setInterval(() => {
    try {
      rssPeakBytes = Math.max(rssPeakBytes, usage(leaderPid).rssBytes);
    } catch {
      // the leader exited: the assertions below fail
    }
  }, 100);
  t.teardown(() => clearInterval(sampler));
  const startedMs = Date.now();
  await c.restart('n4', UNTIL_MS, { join: c.node(leaderId).url });
  await until(
    'n4 ready',
    async () => (await c.request('n4', 'GET', '/readyz', undefined, {}, 5000)).status === 200,
  );
  const catchUpMs = Date.now() - startedMs;
  clearInterval(sampler);
  const after = usage(leaderPid);

  const log = readFileSync(n4.logFile, 'utf8');
  const installed = /"sizeBytes":(\d+)[^\n]*installed snapshot/.exec(log);
  t.ok(installed !== null, 'n4 installed a snapshot');
  t.ok(
    Number(installed?.[1]) >= (STATE_MIB / 2) * VALUE_BYTES,
    `the snapshot holds the state (${installed?.[1]} bytes)`,
  );
  const [leader, learner] = await until('the same replica on leader and learner', async () => {
    const pair = [await replica(c, leaderId), await replica(c, 'n4')] as const;
    return pair[0].appliedIndex === pair[1].appliedIndex ? pair : undefined;
  });
  t.equal(learner.stateHash, leader.stateHash, 'the learner holds the leader’s exact state');
  t.comment(
    JSON.stringify({
      stateMiB: STATE_MIB,
      snapshotBytes: Number(installed?.[1]),
      catchUpMs,
      leaderRssBeforeMiB: Math.round(before.rssBytes / 2 ** 20),
      leaderRssPeakMiB: Math.round(rssPeakBytes / 2 ** 20),
      leaderCpuMsWhileSending: Math.round(after.cpuMs - before.cpuMs),
    }),
  );
});

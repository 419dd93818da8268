// Proves a backup (GET /v1/cluster/snapshot) and the state hash (GET /v1/cluster/state) of a large state are encoded in many slices with turns of the event loop between them — a health check and a read of applied state are answered before the encoding ends, a write waits for it — and that the bytes are the one-step encoding's, at the applied index from before the write.
import { createHash } from 'node:crypto';
import t from 'tap';
import { encodeEnvelope, readSnapshotFile } from '@tenure/coord-state';
import { harness, send, type Harness } from './fixtures/harness.js';

/** Leases in the state: enough for dozens of slices, built in about a second. */
const LEASES = 12_000;

async function largeState(): Promise<Harness> {
  const h = await harness(['--state-hash-route', 'on']);
  for (let i = 0; i < LEASES; i++) {
    const name = `lease-${(i * 7919) % LEASES}`;
    await h.raft.propose(
      encodeEnvelope({
        v: 1,
        command: {
          type: 'lease.acquire',
          name,
          holder: 'A',
          ttlMs: 600_000,
          waitMs: 0,
          lockDelayMs: 0,
          maxHoldMs: null,
        },
        idempotency: null,
      }),
    );
  }
  return h;
}

/**
 * Counts the steps of the next encodings and the event-loop turns (a self-renewing immediate)
 * seen at each step; `stop` ends the counting.
 */
function watchSteps(h: Harness): { turnsAtStep: number[]; stop(): void } {
  let turns = 0;
  let running = true;
  const turn = (): void => {
    turns++;
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  const turnsAtStep: number[] = [];
  const original = h.coord.snapshotSlices.bind(h.coord);
  h.coord.snapshotSlices = (sliceEntries?: number) => {
    const slices = original(sliceEntries);
    return {
      next: () => {
        turnsAtStep.push(turns);
        return slices.next();
      },
    };
  };
  return {
    turnsAtStep,
    stop: () => {
      running = false;
      h.coord.snapshotSlices = original;
    },
  };
}

function assertTurnsBetweenSteps(t: Tap.Test, turnsAtStep: readonly number[]): void {
  t.ok(turnsAtStep.length > 10, `${turnsAtStep.length} slices`);
  let turned = true;
  for (let i = 1; i < turnsAtStep.length; i++) turned &&= turnsAtStep[i]! > turnsAtStep[i - 1]!;
  t.ok(turned, 'the event loop turned between every two slices');
}

// One large state for both tests (building it is most of their time).
const h = await largeState();
t.teardown(h.close);

t.test('a backup of a large state: slices, a responsive node, the same bytes', async (t) => {
  const watch = watchSteps(h);
  // The test's own hold keeps the state still (the node's time advancer proposes too) until the
  // backup holds it.
  const testHold = h.raft.holdApplies();
  const indexBefore = h.raft.status().appliedIndex;
  const oneStep = Buffer.from(h.coord.snapshot());
  let backupDone = false;
  const backup = h.app.inject({ method: 'GET', url: '/v1/cluster/snapshot' }).then((res) => {
    backupDone = true;
    return res;
  });
  // Let the backup reach its encoding (after its read barrier), then ask the node other things.
  while (watch.turnsAtStep.length < 2) await new Promise((resolve) => setImmediate(resolve));
  testHold();
  const health = await h.app.inject({ method: 'GET', url: '/healthz' });
  t.equal(health.statusCode, 200);
  const read = await h.app.inject({ method: 'GET', url: '/v1/leases/lease-1' });
  t.equal(read.statusCode, 200);
  t.equal(backupDone, false, 'health and a read answered while the backup was still encoding');
  const write = send(h.app, 'POST', '/v1/leases/new/acquire', { holder: 'B', ttlMs: 60_000 });
  const res = await backup;
  watch.stop();
  t.equal(res.statusCode, 200);
  t.equal((await write).statusCode, 200, 'the write went through after the encoding');
  assertTurnsBetweenSteps(t, watch.turnsAtStep);
  const { header, payload } = readSnapshotFile(res.rawPayload);
  t.equal(header.index, indexBefore, 'the applied index from before the write');
  t.ok(Buffer.from(payload).equals(oneStep), 'byte for byte the one-step encoding');
  t.equal(h.raft.holdsTaken, 2, 'the backup held applies');
});

t.test('the state hash of a large state: slices, the one-step hash', async (t) => {
  const holdsBefore = h.raft.holdsTaken;
  const watch = watchSteps(h);
  const testHold = h.raft.holdApplies(); // the node's time advancer proposes too
  const appliedIndex = h.raft.status().appliedIndex;
  const expected = createHash('sha256').update(h.coord.snapshot()).digest('hex');
  const [first, second] = await Promise.all([
    h.app.inject({ method: 'GET', url: '/v1/cluster/state' }),
    h.app.inject({ method: 'GET', url: '/v1/cluster/state' }),
  ]);
  testHold();
  watch.stop();
  assertTurnsBetweenSteps(t, watch.turnsAtStep);
  for (const res of [first, second]) {
    t.equal(res.statusCode, 200);
    t.same(res.json(), {
      id: 'n1',
      appliedIndex,
      stateHash: expected,
    });
  }
  t.equal(h.raft.holdsTaken - holdsBefore, 2, 'two asks at once share one encoding (one hold)');
});

// Proves the answer to a withdrawn waited acquire (docs/api.md Leases; the chaos linearizability report
// "op lease.acquire {waitMs} → fail 409 held cannot be explained"): an attempt whose waiter was
// withdrawn (its client went away) and that is retried with the same Idempotency-Key after the
// holder's lease ran out answers 409 held naming the holder at the withdrawal — when the name was
// held — not today's holder (nobody), which would claim a free lease was held.
import t from 'tap';
import { decodeEnvelope, encodeEnvelope } from '@tenure/coord-state';
import { harness, send } from './fixtures/harness.js';

t.test(
  'a waited acquire withdrawn just before the ttl ran out names the holder then',
  async (t) => {
    const h = await harness();
    t.teardown(h.close);
    let clusterMs = 1000;
    h.raft.now = () => clusterMs;
    const a = await send(h.app, 'POST', '/v1/leases/w/acquire', { holder: 'A', ttlMs: 2000 });
    t.equal(a.statusCode, 200);
    const key = { 'idempotency-key': 'wait-1' };
    const body = { holder: 'B', ttlMs: 2000, waitMs: 60_000 };
    const first = send(h.app, 'POST', '/v1/leases/w/acquire', body, key);
    await waitFor(() => h.coord.counts().waiters === 1, 'B queued');
    // The client lost that connection and retries: the retry replays the queued waiter and waits.
    const retry = send(h.app, 'POST', '/v1/leases/w/acquire', body, key);
    await waitFor(() => h.raft.proposals === 3, 'the retry replayed');
    // The leader withdraws the abandoned waiter one millisecond before A's ttl runs out; the answers
    // are written a moment later, when the leader's clock is past A's ttl (no entry expired it yet).
    t.match(
      h.coord.waiterOutcome('w', 2),
      { kind: 'pending' },
      'B waits (its id is its log index)',
    );
    clusterMs = 2999;
    const cancelled = h.raft.propose(
      encodeEnvelope({
        v: 1,
        command: { type: 'lease.cancelWait', name: 'w', holder: 'B', waiterId: 2 },
        idempotency: null,
      }),
    );
    clusterMs = 3500; // before any continuation of the waits runs
    await cancelled;
    for (const answer of [await first, await retry]) {
      t.equal(answer.statusCode, 409);
      t.match(answer.json().error, { code: 'held', holder: 'A' }, 'the holder when withdrawn');
    }
  },
);

async function waitFor(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

t.test(
  'a waiter granted just before its client went away keeps the grant; the retry gets it live',
  async (t) => {
    const h = await harness();
    t.teardown(h.close);
    const a = await send(h.app, 'POST', '/v1/leases/g/acquire', { holder: 'A', ttlMs: 60_000 });
    t.equal(a.statusCode, 200);
    // The withdrawal races the grant: A's release is applied just before the leader's cancel.
    const propose = h.raft.propose.bind(h.raft);
    let raced = false;
    h.raft.propose = async (data, opts) => {
      if (!raced && decodeEnvelope(data).command.type === 'lease.cancelWait') {
        raced = true;
        const release = { holder: 'A', fencingToken: a.json().fencingToken };
        t.equal((await send(h.app, 'POST', '/v1/leases/g/release', release)).statusCode, 200);
      }
      return propose(data, opts);
    };
    const address = await h.app.listen({ host: '127.0.0.1', port: 0 });
    const key = { 'idempotency-key': 'race-1' };
    const body = { holder: 'B', ttlMs: 60_000, waitMs: 60_000 };
    const aborted = new AbortController();
    const first = fetch(`${address}/v1/leases/g/acquire`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...key },
      body: JSON.stringify(body),
      signal: aborted.signal,
    }).catch(() => 'aborted');
    await waitFor(() => h.coord.counts().waiters === 1, 'B queued');
    aborted.abort();
    t.equal(await first, 'aborted');
    await waitFor(() => raced && h.coord.counts().waiters === 0, 'the withdrawal was proposed');
    const retry = await send(h.app, 'POST', '/v1/leases/g/acquire', body, key);
    t.equal(retry.statusCode, 200, 'the retry is answered with the grant');
    const now = await send(h.app, 'GET', '/v1/leases/g');
    t.match(now.json(), { holder: 'B', fencingToken: retry.json().fencingToken }, 'and it is live');
  },
);

// Proves the shell of the client's resuming iterators: leaving a `for await` aborts the loop's signal (ending a request in flight), the caller's signal aborts it with its reason, and the backoff wait ends the loop (false) instead of throwing when the signal aborts.
import t from 'tap';
import { backoffOrStop, resumingIterator } from '../src/resuming-iterator.js';

const POLICY = { attempts: 10, baseDelayMs: 100, maxDelayMs: 1000 };

t.test('breaking out of for await aborts the loop signal', async (t) => {
  let seen: AbortSignal | null = null;
  const it = resumingIterator(undefined, async function* (signal) {
    seen = signal;
    for (let i = 0; ; i++) yield i;
  });
  const got: number[] = [];
  for await (const i of it) {
    got.push(i);
    if (i === 2) break;
  }
  t.same(got, [0, 1, 2]);
  t.equal(seen!.aborted, true);
});

t.test("the caller's signal aborts the loop with its reason", async (t) => {
  const caller = new AbortController();
  const reasons: unknown[] = [];
  const it = resumingIterator(caller.signal, async function* (signal) {
    yield 1;
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    reasons.push(signal.reason);
  });
  t.same(await it.next(), { value: 1, done: false });
  const pending = it.next();
  caller.abort('stop');
  t.same(await pending, { value: undefined, done: true });
  t.same(reasons, ['stop']);
  const early = new AbortController();
  early.abort('before');
  const ran: boolean[] = [];
  const pre = resumingIterator(early.signal, async function* (signal) {
    ran.push(signal.aborted);
    if (!signal.aborted) yield 0;
  });
  t.same(await pre.next(), { value: undefined, done: true });
  t.same(ran, [true], 'an already aborted caller signal starts the loop aborted');
});

t.test('backoffOrStop sleeps the policy delay, or says stop when aborted', async (t) => {
  const delays: number[] = [];
  const deps = {
    random: () => 0.5,
    sleep: (ms: number, signal?: AbortSignal) => {
      delays.push(ms);
      return signal?.aborted === true ? Promise.reject(new Error('aborted')) : Promise.resolve();
    },
  };
  const live = new AbortController();
  t.equal(await backoffOrStop(deps, POLICY, 0, live.signal), true);
  t.equal(await backoffOrStop(deps, POLICY, 3, live.signal), true);
  t.ok(delays[1]! > delays[0]!, 'later failures wait longer');
  t.ok(delays.every((d) => d > 0 && d <= POLICY.maxDelayMs));
  live.abort();
  t.equal(await backoffOrStop(deps, POLICY, 1, live.signal), false);
});

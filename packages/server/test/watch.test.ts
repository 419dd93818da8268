// Proves GET /v1/watch over a real socket (fake Raft): resume by fromRevision and Last-Event-ID, a session end as one revision, the start at the next change, filters by prefix, kind and renewals, `compacted` for a revision the log no longer keeps, `overflow` for a reader that stops reading, the cap on open watches (429, freed on disconnect), keepalive comments with progress, and 400s naming the field.
import t from 'tap';
import { encodeEnvelope, type Command } from '@tenure/coord-state';
import { harness, send, type Harness } from './fixtures/harness.js';
import { changes, openWatch, type SseReader } from './fixtures/sse-reader.js';

/** A harness listening on an allocated port, and its base URL. */
async function served(args: string[] = []): Promise<{ h: Harness; base: string }> {
  const h = await harness(args);
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const address = h.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { h, base: `http://127.0.0.1:${address.port}` };
}

async function put(h: Harness, key: string, value: unknown): Promise<number> {
  const res = await send(h.app, 'PUT', `/v1/kv/${key}`, { value });
  if (res.statusCode !== 200) throw new Error(`put ${key}: ${res.statusCode} ${res.body}`);
  return res.json<{ revision: number }>().revision;
}

function opened(t: Tap.Test, r: SseReader): SseReader {
  t.teardown(() => r.close());
  return r;
}

t.test(
  'resume from a revision: every later change in order, each revision as its id',
  async (t) => {
    const { h, base } = await served();
    t.teardown(h.close);
    const r1 = await put(h, 'cfg-a', 1);
    const r2 = await put(h, 'cfg-b', 2);
    const r3 = await put(h, 'cfg-c', 3);
    const w = opened(t, await openWatch(base, `/v1/watch?kinds=kv&fromRevision=${r1}`));
    t.equal(w.status, 200);
    t.match(w.headers['content-type'], /^text\/event-stream/);
    t.equal(w.headers['tenure-leader'], 'n1');
    await w.waitFor(() => changes(w.events).length >= 2);
    t.same(w.events[0], { id: String(r1), event: 'progress', data: { revision: r1 } });
    const r4 = await put(h, 'cfg-d', { x: true });
    await w.waitFor(() => changes(w.events).length >= 3);
    t.same(changes(w.events), [
      {
        id: String(r2),
        event: undefined,
        data: { revision: r2, kind: 'kv', name: 'cfg-b', type: 'put', value: 2 },
      },
      {
        id: String(r3),
        event: undefined,
        data: { revision: r3, kind: 'kv', name: 'cfg-c', type: 'put', value: 3 },
      },
      {
        id: String(r4),
        event: undefined,
        data: { revision: r4, kind: 'kv', name: 'cfg-d', type: 'put', value: { x: true } },
      },
    ]);

    const byHeader = opened(
      t,
      await openWatch(base, `/v1/watch?kinds=kv&fromRevision=0`, { 'last-event-id': String(r3) }),
    );
    await byHeader.waitFor(() => changes(byHeader.events).length >= 1);
    t.equal(
      changes(byHeader.events)[0]!.data['revision'],
      r4,
      'Last-Event-ID wins over fromRevision',
    );
  },
);

t.test('without a revision the stream starts with the next change', async (t) => {
  const { h, base } = await served();
  t.teardown(h.close);
  const before = await put(h, 'old', 1);
  const w = opened(t, await openWatch(base, '/v1/watch?kinds=kv'));
  await w.waitFor(() => w.events.length >= 1);
  t.equal(w.events[0]!.event, 'progress');
  t.ok(Number(w.events[0]!.id) >= before, 'the start is at or after the last change');
  const next = await put(h, 'new', 2);
  await w.waitFor(() => changes(w.events).length >= 1);
  t.same(
    changes(w.events).map((e) => e.data['name']),
    ['new'],
  );
  t.equal(changes(w.events)[0]!.data['revision'], next);
});

t.test('filters: prefix, kinds, and renewals only when asked', async (t) => {
  const { h, base } = await served();
  t.teardown(h.close);
  const leases = opened(t, await openWatch(base, '/v1/watch?prefix=job-&kinds=lease'));
  const all = opened(t, await openWatch(base, '/v1/watch?prefix=job-&renewals=true'));
  await leases.waitFor(() => leases.events.length >= 1);
  await all.waitFor(() => all.events.length >= 1);
  const a = await send(h.app, 'POST', '/v1/leases/job-1/acquire', { holder: 'A', ttlMs: 60_000 });
  const token = a.json<{ fencingToken: number }>().fencingToken;
  await send(h.app, 'POST', '/v1/leases/other/acquire', { holder: 'A', ttlMs: 60_000 });
  await send(h.app, 'POST', '/v1/leases/job-1/renew', { holder: 'A', fencingToken: token });
  await put(h, 'job-key', 7);
  await send(h.app, 'POST', '/v1/leases/job-1/release', { holder: 'A', fencingToken: token });
  await leases.waitFor(() => changes(leases.events).length >= 2);
  await all.waitFor(() => changes(all.events).length >= 4);
  t.same(
    changes(leases.events).map((e) => [e.data['kind'], e.data['name'], e.data['type']]),
    [
      ['lease', 'job-1', 'granted'],
      ['lease', 'job-1', 'released'],
    ],
  );
  t.match(changes(leases.events)[0]!.data, { holder: 'A', fencingToken: token });
  t.same(
    changes(all.events).map((e) => `${e.data['kind']}:${e.data['name']}:${e.data['type']}`),
    ['lease:job-1:granted', 'lease:job-1:renewed', 'kv:job-key:put', 'lease:job-1:released'],
  );
});

t.test('a revision older than the log keeps: compacted, then the end', async (t) => {
  const { h, base } = await served(['--watch-log-events-max', '3']);
  t.teardown(h.close);
  const first = await put(h, 'k1', 1);
  for (let i = 2; i <= 8; i++) await put(h, `k${i}`, i);
  const w = opened(t, await openWatch(base, `/v1/watch?fromRevision=${first}`));
  await w.ended;
  t.equal(w.events.length, 1);
  const data = w.events[0]!.data;
  t.match(data, { type: 'compacted', fromRevision: first });
  t.ok((data['oldestRevision'] as number) > first, 'names the oldest revision still resumable');
  t.equal(w.events[0]!.id, undefined, 'no id: the resume point does not move');

  const inject = await h.app.inject({ method: 'GET', url: `/v1/watch?fromRevision=${first}` });
  t.equal(inject.statusCode, 200);
  t.match(inject.body, /"type":"compacted"/);

  const resumable = opened(
    t,
    await openWatch(base, `/v1/watch?fromRevision=${data['oldestRevision'] as number}`),
  );
  await resumable.waitFor(() => changes(resumable.events).length >= 1);
  t.equal(changes(resumable.events).at(-1)!.data['name'], 'k8');
});

t.test('a reader that stops reading gets overflow and the end, never a silent gap', async (t) => {
  // One watch at most: a second one is accepted only once the paused one has ended.
  const { h, base } = await served(['--watch-buffer-events-max', '4', '--watches-max', '1']);
  t.teardown(h.close);
  const w = opened(t, await openWatch(base, '/v1/watch?kinds=kv'));
  await w.waitFor(() => w.events.length >= 1);
  w.pause();
  const big = 'x'.repeat(60_000);
  // Write until the socket buffers are full and more than 4 events wait: the server ends the watch.
  let n = 0;
  for (let ended = false; !ended;) {
    for (let i = 0; i < 10; i++) await put(h, `big-${n++}`, big);
    const probe = await openWatch(base, '/v1/watch');
    ended = probe.status === 200;
    probe.close();
  }
  w.resume();
  await w.ended;
  const last = w.events.at(-1)!;
  t.equal(last.data['type'], 'overflow');
  const delivered = changes(w.events).filter((e) => e.data['type'] === 'put');
  t.ok(delivered.length < n, `overflow came before all ${n} puts (${delivered.length} delivered)`);
  t.equal(
    last.data['revision'],
    delivered.at(-1)!.data['revision'],
    'resume point = last delivered',
  );
  t.equal(last.id, String(last.data['revision']));
  t.same(
    delivered.map((e) => e.data['name']),
    delivered.map((_, i) => `big-${i}`),
    'what was delivered has no gap',
  );
});

t.test('the cap on open watches: 429 when full, freed when a client goes away', async (t) => {
  const { h, base } = await served(['--watches-max', '1']);
  t.teardown(h.close);
  const first = await openWatch(base, '/v1/watch');
  await first.waitFor(() => first.events.length >= 1);
  const refused = await openWatch(base, '/v1/watch');
  t.equal(refused.status, 429);
  t.equal(refused.headers['retry-after'], '1');
  t.match(refused.errorBody, { error: { code: 'resource_exhausted', limit: 1 } });
  first.close();
  let again: SseReader | null = null;
  const deadline = performance.now() + 60_000;
  while (again === null && performance.now() < deadline) {
    const r = await openWatch(base, '/v1/watch');
    if (r.status === 200) again = opened(t, r);
    else await new Promise((resolve) => setImmediate(resolve));
  }
  t.ok(again, 'a new watch is accepted once the first client went away');
});

t.test('keepalive comments, and progress past changes the filter left out', async (t) => {
  const { h, base } = await served(['--watch-keepalive-ms', '20']);
  t.teardown(h.close);
  const w = opened(t, await openWatch(base, '/v1/watch?prefix=never-'));
  await w.waitFor(() => w.comments.includes('keepalive'));
  const other = await put(h, 'unrelated', 1);
  await w.waitFor(() => w.events.some((e) => e.event === 'progress' && Number(e.id) >= other));
  t.same(changes(w.events), [], 'no change passed the filter');
});

t.test('bad input is 400 naming the field', async (t) => {
  const h = await harness();
  t.teardown(h.close);
  const cases: [string, Record<string, string>, RegExp][] = [
    ['/v1/watch?kinds=lease,bogus', {}, /kinds/],
    ['/v1/watch?fromRevision=-1', {}, /fromRevision/],
    ['/v1/watch?prefix=a%2Fb', {}, /prefix/],
    ['/v1/watch?renewals=maybe', {}, /renewals/],
    ['/v1/watch?other=1', {}, /other/],
    ['/v1/watch', { 'last-event-id': 'abc' }, /Last-Event-ID/],
  ];
  for (const [url, headers, field] of cases) {
    const res = await h.app.inject({ method: 'GET', url, headers });
    t.equal(res.statusCode, 400, url);
    t.equal(res.json().error.code, 'invalid_argument');
    t.match(res.json().error.message, field, url);
  }
});

t.test('a session end is one revision: an event per grant and one for the session', async (t) => {
  const { h, base } = await served();
  t.teardown(h.close);
  const propose = async (command: Command): Promise<{ index: number; value: unknown }> => {
    const applied = await h.raft.propose(encodeEnvelope({ v: 1, command, idempotency: null }));
    const result = applied.result.result;
    if (!result.ok) throw new Error(`${command.type}: ${result.error.code}`);
    return { index: applied.index, value: result.value };
  };
  const created = await propose({ type: 'session.create', ttlMs: 60_000, name: null });
  const sessionId = `s${created.index}`;
  for (const name of ['sess-a', 'sess-b'])
    await propose({
      type: 'lease.acquire',
      name,
      holder: 'H',
      ttlMs: null,
      waitMs: 0,
      lockDelayMs: 0,
      maxHoldMs: null,
      session: sessionId,
    });
  const w = opened(t, await openWatch(base, `/v1/watch?fromRevision=${created.index}`));
  const ended = await propose({ type: 'session.end', sessionId });
  await w.waitFor(() => changes(w.events).some((e) => e.data['revision'] === ended.index));
  const batch = changes(w.events).filter((e) => e.data['revision'] === ended.index);
  t.same(batch.map((e) => `${e.data['kind']}:${e.data['name']}:${e.data['type']}`).sort(), [
    'lease:sess-a:session_ended',
    'lease:sess-b:session_ended',
    `session:${sessionId}:session_ended`,
  ]);
  t.same(
    batch.map((e) => e.id),
    [undefined, undefined, String(ended.index)],
    'one revision; its id on its last event only',
  );
});

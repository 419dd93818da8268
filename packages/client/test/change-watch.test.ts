// Proves client.watch() against scripted SSE answers: a stream cut in the middle of a revision resumes on the next endpoint from the last whole revision and yields each change exactly once; `overflow` resumes from its revision; `compacted` from every endpoint is thrown as WatchCompactedError (one endpoint's compacted moves on to the next); a 400 is thrown as it is; `event: error` is thrown as the error it names; aborting the signal ends the iteration.
import t from 'tap';
import { TenureClient, TenureError, WatchCompactedError, type WatchEvent } from '../src/index.js';

/** One scripted answer: the status and the body chunks, then the end of the body. */
interface Answer {
  readonly status?: number;
  readonly chunks: readonly string[];
  /** Leave the body open after the chunks (the iteration is ended by abort). */
  readonly open?: boolean;
}

/** A fetch that answers each call with the next scripted answer and records the URLs. */
function scriptedFetch(answers: Answer[]): { fetch: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  const fetchImpl = (async (input: string | URL, init?: RequestInit) => {
    urls.push(String(input));
    const answer = answers.shift();
    if (answer === undefined) throw new TypeError('fetch failed: no more answers');
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of answer.chunks) controller.enqueue(encoder.encode(c));
        if (answer.open === true)
          init?.signal?.addEventListener('abort', () => controller.error(new Error('aborted')));
        else controller.close();
      },
    });
    return new Response(body, { status: answer.status ?? 200 });
  }) as typeof fetch;
  return { fetch: fetchImpl, urls };
}

const kv = (revision: number, name: string, id = true): string =>
  `${id ? `id: ${revision}\n` : ''}data: ${JSON.stringify({ revision, kind: 'kv', name, type: 'put', value: 1 })}\n\n`;
const progress = (revision: number): string =>
  `event: progress\nid: ${revision}\ndata: {"revision":${revision}}\n\n`;

function client(fetchImpl: typeof fetch): TenureClient {
  return new TenureClient({
    endpoints: ['http://a:1', 'http://b:2'],
    fetch: fetchImpl,
    sleep: async () => {},
    random: () => 0.5,
  });
}

async function take(it: AsyncIterableIterator<WatchEvent>, n: number): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  for await (const e of it) {
    out.push(e);
    if (out.length >= n) break;
  }
  return out;
}

t.test('a stream cut mid-revision resumes elsewhere from the last whole revision', async (t) => {
  const { fetch: f, urls } = scriptedFetch([
    { chunks: [progress(5), kv(6, 'x1', false)] },
    { chunks: [progress(5), kv(6, 'x1', false), kv(6, 'x2'), kv(7, 'y')], open: true },
  ]);
  const got = await take(client(f).watch({ prefix: 'x', kinds: ['kv'] }), 3);
  t.same(
    got.map((e) => `${e.revision}:${e.name}`),
    ['6:x1', '6:x2', '7:y'],
  );
  t.same(urls, [
    'http://a:1/v1/watch?prefix=x&kinds=kv',
    'http://b:2/v1/watch?prefix=x&kinds=kv&fromRevision=5',
  ]);
});

t.test('overflow resumes from its revision', async (t) => {
  const { fetch: f, urls } = scriptedFetch([
    { chunks: [progress(1), kv(2, 'a'), 'id: 9\ndata: {"type":"overflow","revision":9}\n\n'] },
    { chunks: [progress(9), kv(10, 'b')], open: true },
  ]);
  const got = await take(client(f).watch({ fromRevision: 1 }), 2);
  t.same(
    got.map((e) => e.name),
    ['a', 'b'],
  );
  t.match(urls[1], /fromRevision=9$/);
});

t.test('compacted: the next endpoint is tried, and from every endpoint it is thrown', async (t) => {
  const compacted = 'data: {"type":"compacted","fromRevision":3,"oldestRevision":50}\n\n';
  const once = scriptedFetch([
    { chunks: [compacted] },
    { chunks: [progress(3), kv(4, 'k')], open: true },
  ]);
  t.same(
    (await take(client(once.fetch).watch({ fromRevision: 3 }), 1)).map((e) => e.name),
    ['k'],
  );

  const later = 'data: {"type":"compacted","fromRevision":3,"oldestRevision":70}\n\n';
  const both = scriptedFetch([{ chunks: [compacted] }, { chunks: [later] }]);
  const error = await take(client(both.fetch).watch({ fromRevision: 3 }), 1).catch(
    (e: unknown) => e,
  );
  t.ok(error instanceof WatchCompactedError);
  t.ok(error instanceof TenureError);
  t.match(
    error,
    { code: 'compacted', fromRevision: 3, oldestRevision: 50 },
    'the lowest oldest revision of the nodes that answered, not the last one',
  );
});

t.test('a 400 is thrown; an abort ends the iteration', async (t) => {
  const bad = scriptedFetch([
    {
      status: 400,
      chunks: ['{"error":{"code":"invalid_argument","message":"querystring/prefix must match"}}'],
    },
  ]);
  const error = await take(client(bad.fetch).watch({ prefix: 'a' }), 1).catch((e: unknown) => e);
  t.match(error, { code: 'invalid_argument', status: 400 });

  const stop = new AbortController();
  const open = scriptedFetch([{ chunks: [progress(1), kv(2, 'a')], open: true }]);
  const seen: string[] = [];
  for await (const e of client(open.fetch).watch({ signal: stop.signal })) {
    seen.push(e.name);
    stop.abort();
  }
  t.same(seen, ['a']);
});

t.test(
  'event: error (token revoked mid-stream) is thrown as its TenureError, not resumed',
  async (t) => {
    const frame = `event: error\ndata: ${JSON.stringify({ error: { code: 'unauthorized', message: 'token revoked' } })}\n\n`;
    const { fetch: f, urls } = scriptedFetch([
      { chunks: [progress(3), kv(4, 'a'), frame] },
      { chunks: [progress(4), kv(5, 'b')], open: true },
    ]);
    const got: string[] = [];
    const err = await (async () => {
      try {
        for await (const e of client(f).watch({ fromRevision: 3 })) got.push(e.name);
      } catch (e) {
        return e;
      }
      return null;
    })();
    t.ok(err instanceof TenureError, 'a TenureError');
    t.equal((err as TenureError).code, 'unauthorized');
    t.equal((err as TenureError).status, 401);
    t.same(got, ['a'], 'what came before the error was yielded');
    t.equal(urls.length, 1, 'no reconnect');
  },
);

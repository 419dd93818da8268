// Proves the event log and one watch stream without sockets: the log keeps every change after its base revision within its bounds (whole revisions dropped, the newest kept), a resume point is found or `compacted`; a stream puts `id:` only on the last event of a revision, waits for drain when the sink pushes back, sends `overflow` past its buffer or when the log dropped what it had not sent, and ends with `compacted` when a snapshot install moves the log past it.
import t from 'tap';
import type { ChangeEvent } from '@tenure/coord-state';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { EventLog } from '../src/watch/event-log.js';
import { watchFilter } from '../src/watch/watch-filter.js';
import { WatchStream, type SseSink, type WatchEndReason } from '../src/watch/watch-stream.js';

const kv = (name: string): ChangeEvent => ({ kind: 'kv', name, type: 'put', value: 1 });
const lease = (name: string, type: ChangeEvent['type']): ChangeEvent => ({
  kind: 'lease',
  name,
  type,
  holder: 'h',
  fencingToken: 1,
});

/** A sink that accepts `room` writes before pushing back, and parses what it got. */
class FakeSink implements SseSink {
  readonly messages: EventSourceMessage[] = [];
  readonly comments: string[] = [];
  room = Infinity;
  ended = false;
  #drain: (() => void) | null = null;
  readonly #parser = createParser({
    onEvent: (m) => this.messages.push(m),
    onComment: (c) => this.comments.push(c.trim()),
  });
  write(chunk: string): boolean {
    if (this.ended) throw new Error('write after end');
    this.#parser.feed(chunk);
    this.room--;
    return this.room > 0;
  }
  onDrain(fn: () => void): void {
    this.#drain = fn;
  }
  end(): void {
    this.ended = true;
  }
  drain(room: number): void {
    this.room = room;
    const fn = this.#drain;
    this.#drain = null;
    fn?.();
  }
  data(): Record<string, unknown>[] {
    return this.messages
      .filter((m) => m.event === undefined)
      .map((m) => JSON.parse(m.data) as Record<string, unknown>);
  }
}

function stream(log: EventLog, sink: FakeSink, query = {}, bufferEventsMax = 100) {
  const ends: WatchEndReason[] = [];
  const s = new WatchStream(log, sink, {
    filter: watchFilter(query),
    bufferEventsMax,
    onEnd: (r) => ends.push(r),
    schedule: (fn) => fn(),
  });
  return { s, ends };
}

t.test('the log keeps whole revisions within its bounds and finds resume points', async (t) => {
  const log = new EventLog(10, { eventsMax: 4, bytesMax: 1_000_000 });
  log.append(11, [kv('a'), kv('b')]);
  log.append(12, []);
  log.append(13, [kv('c')]);
  log.checkInvariants();
  t.same(log.resumePoint(10), { kind: 'ok', seq: 0 });
  t.same(log.resumePoint(11), { kind: 'ok', seq: 2 });
  t.same(log.resumePoint(12), { kind: 'ok', seq: 2 });
  t.same(log.resumePoint(99), { kind: 'ok', seq: 3 }, 'ahead of this node: waits at the end');
  t.same(log.resumePoint(9), { kind: 'compacted', oldestRevision: 10 });
  log.append(14, [kv('d'), kv('e')]);
  log.checkInvariants();
  t.equal(log.baseRevision, 11, 'revision 11 was dropped whole');
  t.same(log.size().events, 3);
  t.same(log.resumePoint(10), { kind: 'compacted', oldestRevision: 11 });
  log.append(15, [kv('1'), kv('2'), kv('3'), kv('4'), kv('5')]);
  log.checkInvariants();
  t.equal(log.baseRevision, 14, 'the newest revision stays even when over the bound');
  t.equal(log.size().events, 5);
  log.reset(40);
  log.checkInvariants();
  t.same([log.baseRevision, log.lastRevision, log.size().events], [40, 40, 0]);
  t.throws(() => log.append(40, []), 'a revision never goes back');
});

t.test('the id goes on the last event of a revision in the stream', async (t) => {
  const log = new EventLog(0, { eventsMax: 100, bytesMax: 1_000_000 });
  const sink = new FakeSink();
  const { s } = stream(log, sink, { kinds: 'lease' });
  s.start(null);
  log.append(1, [lease('x', 'released'), kv('k'), lease('y', 'session_ended'), kv('z')]);
  const msgs = sink.messages;
  t.same(
    msgs.map((m) => [m.event, m.id]),
    [
      ['progress', '0'],
      [undefined, undefined],
      [undefined, '1'],
    ],
  );
  t.same(
    sink.data().map((d) => d['name']),
    ['x', 'y'],
  );
});

t.test('a blocked sink: waits for drain, overflows past its buffer', async (t) => {
  const log = new EventLog(0, { eventsMax: 1000, bytesMax: 1_000_000 });
  const sink = new FakeSink();
  sink.room = 2;
  const { s, ends } = stream(log, sink, {}, 3);
  s.start(null);
  log.append(1, [kv('a')]); // fills the sink
  log.append(2, [kv('b')]);
  log.append(3, [kv('c')]);
  t.same(
    sink.data().map((d) => d['name']),
    ['a'],
    'nothing written while blocked',
  );
  sink.drain(100);
  t.same(
    sink.data().map((d) => d['name']),
    ['a', 'b', 'c'],
    'drain resumes in order',
  );
  sink.room = 1;
  log.append(4, [kv('d')]);
  for (let r = 5; r <= 8; r++) log.append(r, [kv(`e${r}`)]);
  t.same(ends, ['overflow']);
  t.ok(sink.ended);
  const last = sink.messages.at(-1)!;
  t.same(JSON.parse(last.data), { type: 'overflow', revision: 4 });
  t.equal(last.id, '4');
  t.equal(log.listeners(), 0, 'the ended stream left the log');
});

t.test('a blocked stream whose unsent events the log dropped overflows', async (t) => {
  const log = new EventLog(0, { eventsMax: 2, bytesMax: 1_000_000 });
  const sink = new FakeSink();
  sink.room = 1;
  const { s, ends } = stream(log, sink, {}, 1000);
  s.start(null);
  for (let r = 1; r <= 4; r++) log.append(r, [kv(`k${r}`)]);
  t.same(ends, ['overflow']);
  t.same(JSON.parse(sink.messages.at(-1)!.data), { type: 'overflow', revision: 0 });
});

t.test(
  'a snapshot install past the stream ends it with compacted; one behind it does not',
  async (t) => {
    const log = new EventLog(0, { eventsMax: 100, bytesMax: 1_000_000 });
    const behind = new FakeSink();
    const ahead = new FakeSink();
    const a = stream(log, behind);
    const b = stream(log, ahead);
    a.s.start(null);
    b.s.start(50);
    log.append(1, [kv('a')]);
    log.reset(20);
    t.same(a.ends, ['compacted']);
    t.same(behind.data().at(-1), { type: 'compacted', fromRevision: 1, oldestRevision: 20 });
    t.same(b.ends, []);
    log.append(21, [kv('skip')]);
    log.append(51, [kv('seen')]);
    t.same(
      ahead.data().map((d) => d['name']),
      ['seen'],
      'a stream resumed ahead of this node waits for its revision',
    );
    b.s.close();
    t.same(b.ends, ['closed']);
    t.equal(log.listeners(), 0);
  },
);

t.test(
  'keepalive: a comment, and progress when the log moved past filtered-out changes',
  async (t) => {
    const log = new EventLog(0, { eventsMax: 100, bytesMax: 1_000_000 });
    const sink = new FakeSink();
    const { s } = stream(log, sink, { prefix: 'mine-' });
    s.start(null);
    s.keepalive();
    t.same(sink.comments, ['keepalive']);
    t.equal(sink.messages.length, 1, 'no progress while nothing happened');
    log.append(1, [kv('theirs')]);
    s.keepalive();
    t.same(
      sink.messages.map((m) => [m.event, m.id]),
      [
        ['progress', '0'],
        ['progress', '1'],
      ],
    );
  },
);

t.test('appends made while a write is scheduled go out together, in order', async (t) => {
  const log = new EventLog(0, { eventsMax: 100, bytesMax: 1_000_000 });
  const writes: string[] = [];
  const pending: (() => void)[] = [];
  const s = new WatchStream(
    log,
    { write: (c) => writes.push(c) > 0, onDrain: () => {}, end: () => {} },
    {
      filter: watchFilter({}),
      bufferEventsMax: 10,
      onEnd: () => {},
      schedule: (fn) => void pending.push(fn),
    },
  );
  s.start(null);
  log.append(1, [kv('a')]);
  log.append(2, [kv('b'), kv('c')]);
  t.equal(pending.length, 1, 'one write scheduled for both entries');
  t.equal(writes.length, 1, 'only the opening progress event so far');
  pending.shift()!();
  t.equal(writes.length, 2);
  t.match(writes[1], /"name":"a"[^]*id: 2\ndata: .*"name":"c"/);
});

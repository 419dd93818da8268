// Proves the fenced store accepts tokens ≥ the highest accepted per resource and rejects lower ones,
// over HTTP too, validates its input, and logs every write (accepted or not) to its JSON-lines file.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FencedStore, validateWrite } from './store.js';
import { startFencedStore, FENCED_STORE_LOG } from './server.js';

t.test(
  'a fenced read raises the floor: a lower-token write landing after it is refused',
  async (t) => {
    let now = 0;
    const s = new FencedStore(() => ++now);
    t.ok(s.write({ resource: 'lease:L', fencingToken: 3, writer: 'A', payload: 0 }).accepted);
    const read = s.readFenced('lease:L', 4);
    t.equal(read?.value, 0, 'B reads the value under token 4');
    const late = s.write({ resource: 'lease:L', fencingToken: 3, writer: 'A', payload: 1 });
    t.notOk(late.accepted, "A's write between B's read and B's write is refused");
    t.equal(late.highestBefore, 4);
    t.ok(s.write({ resource: 'lease:L', fencingToken: 4, writer: 'B', payload: 1 }).accepted);
    t.equal(s.readFenced('lease:L', 3), null, 'a read under a lower token is stale');
    t.same(s.read('lease:L').value, 1, 'value = accepted increments');
    t.equal(s.readFenced('lease:new', 1)?.highestToken, 1, 'a fresh resource takes the floor');
  },
);

t.test('the fencing rule per resource', async (t) => {
  let now = 0;
  const s = new FencedStore(() => ++now);
  t.ok(s.write({ resource: 'lease:L', fencingToken: 5, writer: 'A', payload: 1 }).accepted);
  t.ok(
    s.write({ resource: 'lease:L', fencingToken: 5, writer: 'A', payload: 2 }).accepted,
    'equal token accepted',
  );
  t.ok(s.write({ resource: 'lease:L', fencingToken: 7, writer: 'B', payload: 3 }).accepted);
  const stale = s.write({ resource: 'lease:L', fencingToken: 5, writer: 'A', payload: 4 });
  t.notOk(stale.accepted, 'lower token rejected');
  t.equal(stale.highestBefore, 7);
  t.ok(
    s.write({ resource: 'lease:M', fencingToken: 1, writer: 'C', payload: 5 }).accepted,
    'resources are independent',
  );
  t.same(s.read('lease:L'), {
    resource: 'lease:L',
    highestToken: 7,
    value: 3,
    acceptedCount: 3,
    rejectedCount: 1,
  });
  t.equal(s.records().length, 5);
  t.same(validateWrite({ resource: 'r', fencingToken: -1, writer: 'w' }), {
    error: 'fencingToken must be a non-negative integer',
  });
  t.same(validateWrite({ resource: 'r', fencingToken: 1, writer: 'w', extra: 1 }), {
    error: 'unknown field extra',
  });
});

t.test('over HTTP, with the log file', async (t) => {
  const dir = t.testdir({});
  const fs = await startFencedStore({ now: () => 1, logPath: join(dir, FENCED_STORE_LOG) });
  const post = async (body: unknown) => {
    const res = await fetch(`${fs.url}/write`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as unknown };
  };
  const w = (fencingToken: number, writer: string) =>
    post({ resource: 'lease:L', fencingToken, writer, payload: { n: fencingToken } });
  t.equal((await w(2, 'A')).status, 200);
  const rej = await w(1, 'Z');
  t.equal(rej.status, 409);
  t.equal((rej.json as { error: { code: string } }).error.code, 'stale_token');
  t.equal((await post({ resource: 'lease:L', fencingToken: '3', writer: 'A' })).status, 400);
  const read = await fetch(`${fs.url}/read?resource=lease:L`);
  t.match(await read.json(), { highestToken: 2, acceptedCount: 1, rejectedCount: 1 });
  await fs.close();
  const lines = readFileSync(join(dir, FENCED_STORE_LOG), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { accepted: boolean });
  t.same(
    lines.map((l) => l.accepted),
    [true, false],
  );
});

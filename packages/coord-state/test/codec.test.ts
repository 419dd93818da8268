// Proves the log encoding: envelopes round-trip through msgpackr, malformed bytes or shapes throw a typed EnvelopeDecodeError, and apply answers a decodable-but-invalid command with invalid_argument instead of crashing.
import t from 'tap';
import { Packr } from 'msgpackr';
import {
  CoordStateMachine,
  decodeEnvelope,
  encodeEnvelope,
  EnvelopeDecodeError,
  EnvelopeEncodeError,
  type CommandEnvelope,
} from '../src/index.js';

const packr = new Packr({ useRecords: false });

t.test('every command type round-trips', async (t) => {
  const envs: CommandEnvelope[] = [
    {
      v: 1,
      command: {
        type: 'lease.acquire',
        name: 'L',
        holder: 'h',
        ttlMs: 1000,
        waitMs: 0,
        lockDelayMs: 0,
        maxHoldMs: null,
      },
      idempotency: { key: 'k', fingerprint: 'f' },
    },
    {
      v: 1,
      command: { type: 'lease.renew', name: 'L', holder: 'h', fencingToken: 2 ** 40 },
      idempotency: null,
    },
    {
      v: 1,
      command: { type: 'lease.release', name: 'L', holder: 'h', fencingToken: 5 },
      idempotency: null,
    },
    {
      v: 1,
      command: { type: 'lease.cancelWait', name: 'L', holder: 'h', waiterId: 9 },
      idempotency: null,
    },
    {
      v: 1,
      command: {
        type: 'election.campaign',
        group: 'G',
        candidate: 'c',
        ttlMs: 1000,
        value: { a: [1, null, 'x'] },
      },
      idempotency: null,
    },
    { v: 1, command: { type: 'election.renew', group: 'G', candidate: 'c' }, idempotency: null },
    { v: 1, command: { type: 'election.resign', group: 'G', candidate: 'c' }, idempotency: null },
    {
      v: 1,
      command: {
        type: 'election.proclaim',
        group: 'G',
        candidate: 'c',
        fencingToken: 3,
        value: 1.5,
      },
      idempotency: null,
    },
    {
      v: 1,
      command: {
        type: 'kv.put',
        key: 'k',
        value: 'v',
        fence: { lease: 'L', fencingToken: 1 },
        ifRevision: 0,
      },
      idempotency: null,
    },
    {
      v: 1,
      command: {
        type: 'kv.delete',
        key: 'k',
        fence: { election: 'G', fencingToken: 1 },
        ifRevision: null,
      },
      idempotency: null,
    },
    { v: 1, command: { type: 'time.advance' }, idempotency: null },
  ];
  for (const env of envs) t.same(decodeEnvelope(encodeEnvelope(env)), env, env.command.type);
});

t.test('malformed bytes and bad shapes throw EnvelopeDecodeError naming the field', async (t) => {
  const bad: [unknown, string][] = [
    [{ v: 2, command: { type: 'time.advance' }, idempotency: null }, 'v'],
    [{ v: 1, command: { type: 'nope' }, idempotency: null }, 'command.type'],
    [
      {
        v: 1,
        command: { type: 'lease.renew', name: 'L', holder: 'h', fencingToken: '1' },
        idempotency: null,
      },
      'fencingToken',
    ],
    [
      {
        v: 1,
        command: { type: 'lease.renew', name: 'L', holder: 'h', fencingToken: 1.5 },
        idempotency: null,
      },
      'fencingToken',
    ],
    [
      {
        v: 1,
        command: { type: 'time.advance' },
        idempotency: { key: 'x'.repeat(129), fingerprint: 'f' },
      },
      'idempotency.key',
    ],
    [
      {
        v: 1,
        command: {
          type: 'kv.put',
          key: 'k',
          value: new Uint8Array([1]),
          fence: null,
          ifRevision: null,
        },
        idempotency: null,
      },
      'value',
    ],
    ['just a string', 'envelope'],
  ];
  for (const [doc, field] of bad) {
    const err = t.throws(() => decodeEnvelope(packr.pack(doc))) as EnvelopeDecodeError;
    t.ok(err instanceof EnvelopeDecodeError);
    t.equal(err.code, 'invalid_argument');
    t.equal(err.error.details?.['field'], field);
  }
  t.throws(() => decodeEnvelope(new Uint8Array([0x92, 0x01])), EnvelopeDecodeError);
  t.throws(() => decodeEnvelope(new Uint8Array([])), EnvelopeDecodeError);
});

t.test(
  'apply never throws on garbage envelopes: invalid_argument results, state untouched',
  async (t) => {
    const sm = new CoordStateMachine();
    let i = 0;
    const garbage: unknown[] = [
      42,
      { v: 1 },
      { v: 1, command: null, idempotency: null },
      { v: 1, command: { type: 'lease.acquire', name: 'L' }, idempotency: null },
      {
        v: 1,
        command: { type: 'kv.put', key: 'k', value: Number.NaN, fence: null, ifRevision: null },
        idempotency: null,
      },
    ];
    for (const g of garbage.slice(1)) {
      const out = sm.apply(++i, 0, g as CommandEnvelope);
      t.equal(out.result.ok, false);
      t.equal(!out.result.ok && out.result.error.code, 'invalid_argument');
    }
    const out = sm.apply(++i, 0, garbage[0] as CommandEnvelope);
    t.equal(!out.result.ok && out.result.error.code, 'invalid_argument');
    t.same(sm.counts(), {
      leases: 0,
      waiters: 0,
      elections: 0,
      candidates: 0,
      keys: 0,
      idempotencyRecords: 0,
    });
  },
);

t.test('strings that are not well-formed Unicode never reach the log', async (t) => {
  const acquire = (holder: string): CommandEnvelope => ({
    v: 1,
    command: {
      type: 'lease.acquire',
      name: 'L',
      holder,
      ttlMs: 1000,
      waitMs: 0,
      lockDelayMs: 0,
      maxHoldMs: null,
    },
    idempotency: null,
  });
  const put = (value: unknown): CommandEnvelope => ({
    v: 1,
    command: { type: 'kv.put', key: 'k', value: value as never, fence: null, ifRevision: null },
    idempotency: null,
  });
  const bad: [CommandEnvelope, string][] = [
    [acquire('x\ud800'), 'holder'],
    [acquire('x\udbff'), 'holder'],
    [acquire('a\u0085b'), 'holder'],
    [
      {
        v: 1,
        command: { type: 'election.renew', group: 'G', candidate: '\udc00' },
        idempotency: null,
      },
      'candidate',
    ],
    [put('\ud800x'), 'value'],
    [put({ nested: ['ok', 'bad\udfff'] }), 'value'],
    [put({ ['k\ud800']: 1 }), 'value'],
    [put(JSON.parse('{"__proto__":{"polluted":true}}')), 'value'],
    [
      {
        v: 1,
        command: {
          type: 'election.proclaim',
          group: 'G',
          candidate: 'c',
          fencingToken: 1,
          value: '\ud800',
        },
        idempotency: null,
      },
      'value',
    ],
  ];
  for (const [env, field] of bad) {
    t.throws(
      () => encodeEnvelope(env),
      EnvelopeEncodeError,
      `${JSON.stringify(env.command)} refused`,
    );
    try {
      encodeEnvelope(env);
    } catch (err) {
      t.equal((err as EnvelopeEncodeError).error.details?.field, field, `names ${field}`);
    }
    const m = new CoordStateMachine();
    const out = m.apply(1, 0, env);
    t.equal(out.result.ok, false, 'apply refuses it too');
  }
  // Well-formed astral characters (surrogate pairs) are fine and round-trip exactly.
  const ok = acquire('emoji 😀 holder');
  t.same(decodeEnvelope(encodeEnvelope(ok)), ok);
  t.same(decodeEnvelope(encodeEnvelope(put({ s: '😀' }))), put({ s: '😀' }));
});

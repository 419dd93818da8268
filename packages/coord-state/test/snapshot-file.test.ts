// Proves the backup file format refuses every damaged file with the problem named (foreign file, other version, bad header, truncation at any point, trailing bytes, any flipped payload bit), reads an intact one whole or in chunks of any size, and that a restore rebases the state so every later token is above the old cluster's.
import { createHash } from 'node:crypto';
import t from 'tap';
import {
  CoordStateMachine,
  encodeSnapshotFileHeader,
  readSnapshotFile,
  rebaseSnapshot,
  RESTORE_INDEX_GAP,
  restoredIndex,
  SnapshotFileError,
  SnapshotFileReader,
  SnapshotFormatError,
  snapshotPosition,
  STATE_SNAPSHOT_FORMAT,
  TOKEN_FLOOR_MAX,
  TOKENS_PER_ENTRY,
  type SnapshotFileHeader,
} from '../src/index.js';
import { Driver, okValue } from './fixtures/driver.js';

function stateBytes(): { driver: Driver; payload: Uint8Array } {
  const driver = new Driver();
  driver.acquire('L', 'A', { ttlMs: 60_000 });
  driver.acquire('M', 'B', { ttlMs: 60_000 });
  driver.campaign('g', 'p', { value: 1 });
  return { driver, payload: driver.sm.snapshot() };
}

function fileOf(payload: Uint8Array, patch: Partial<SnapshotFileHeader> = {}): Buffer {
  const position = snapshotPosition(payload);
  const header: SnapshotFileHeader = {
    clusterId: 'old',
    nodeId: 'n1',
    index: position.lastIndex,
    term: 3,
    clusterTimeMs: position.lastTimeMs,
    stateFormat: STATE_SNAPSHOT_FORMAT,
    payloadBytes: payload.byteLength,
    sha256: createHash('sha256').update(payload).digest('hex'),
    createdAt: '2026-01-01T00:00:00.000Z',
    ...patch,
  };
  return Buffer.concat([encodeSnapshotFileHeader(header), payload]);
}

function problemOf(bytes: Uint8Array): string {
  try {
    readSnapshotFile(bytes);
  } catch (err) {
    if (err instanceof SnapshotFileError) return `${err.problem}: ${err.message}`;
    throw err;
  }
  return 'accepted';
}

t.test('an intact file reads back its header and payload, whole or in chunks', async (t) => {
  const { payload } = stateBytes();
  const file = fileOf(payload);
  const whole = readSnapshotFile(file);
  t.same(Buffer.from(whole.payload), Buffer.from(payload));
  t.equal(whole.header.index, snapshotPosition(payload).lastIndex);
  for (const size of [1, 7, 64, 1000]) {
    const reader = new SnapshotFileReader({ keepPayload: true });
    for (let at = 0; at < file.length; at += size) reader.push(file.subarray(at, at + size));
    const out = reader.finish();
    t.same(Buffer.from(out.payload ?? []), Buffer.from(payload), `chunks of ${size}`);
  }
  const lean = new SnapshotFileReader();
  lean.push(file);
  t.equal(lean.finish().payload, null, 'the payload is not kept unless asked');
});

t.test('a file cut short anywhere is refused as truncated', async (t) => {
  const file = fileOf(stateBytes().payload);
  const cuts = [0, 5, 17, 18, 40, file.length - stateBytes().payload.length, file.length - 1];
  for (const cut of cuts)
    t.match(problemOf(file.subarray(0, cut)), /^truncated: /, `cut at ${cut}`);
  t.match(problemOf(file.subarray(0, file.length - 1)), /announces \d+ payload bytes/);
});

t.test('bytes after the payload are refused', async (t) => {
  const file = fileOf(stateBytes().payload);
  t.match(problemOf(Buffer.concat([file, Buffer.from('x')])), /^trailing_data: /);
});

t.test('any flipped payload byte fails the checksum, naming both sums', async (t) => {
  const { payload } = stateBytes();
  const file = fileOf(payload);
  const start = file.length - payload.length;
  for (const at of [start, start + Math.floor(payload.length / 2), file.length - 1]) {
    const bad = Buffer.from(file);
    bad[at] = (bad[at] ?? 0) ^ 0x01;
    t.match(
      problemOf(bad),
      /^checksum_mismatch: checksum mismatch: the header says sha256 [0-9a-f]{64}, the payload hashes to [0-9a-f]{64}/,
    );
  }
});

t.test('other files, versions and headers are refused with the problem named', async (t) => {
  const { payload } = stateBytes();
  const good = fileOf(payload).toString('latin1');
  t.match(problemOf(Buffer.from('{"hello": 1}\n')), /^not_a_snapshot: /);
  t.match(problemOf(Buffer.from(payload)), /^not_a_snapshot: /);
  t.match(
    problemOf(Buffer.from(good.replace('TENURE-SNAPSHOT 1', 'TENURE-SNAPSHOT 2'), 'latin1')),
    /^unsupported_version: unsupported snapshot file version 2 \(this build reads version 1\)/,
  );
  t.match(
    problemOf(Buffer.from(good.replace('TENURE-SNAPSHOT 1', 'TENURE-SNAPSHOT x'), 'latin1')),
    /^bad_header: /,
  );
  t.match(problemOf(fileOf(payload, { index: -1 })), /^bad_header: bad header: index /);
  t.match(problemOf(fileOf(payload, { sha256: 'abc' })), /^bad_header: bad header: sha256 /);
  const noSha = good.replace(/"sha256":"[0-9a-f]+",/, '');
  t.match(problemOf(Buffer.from(noSha, 'latin1')), /^bad_header: bad header: sha256 is missing/);
  const notJson = good.replace('{"clusterId"', '{clusterId');
  t.match(problemOf(Buffer.from(notJson, 'latin1')), /^bad_header: .*not JSON/);
  const endless = Buffer.concat([Buffer.from('TENURE-SNAPSHOT 1\n'), Buffer.alloc(70_000, 0x20)]);
  t.match(problemOf(endless), /^bad_header: bad header: no header line within/);
});

t.test('restoredIndex: past the backup by the gap, and past a token floor', async (t) => {
  t.equal(restoredIndex(10), 10 + RESTORE_INDEX_GAP);
  t.equal(restoredIndex(10, 5_000_000_000_000), 5_000_000_000);
  t.equal(restoredIndex(10, 7), 10 + RESTORE_INDEX_GAP, 'a low floor changes nothing');
  // The first token the restored cluster can issue is above the floor.
  const floor = 123_456_789_012_345;
  t.ok((restoredIndex(0, floor) + 1) * TOKENS_PER_ENTRY > floor);
  t.ok(Number.isSafeInteger((restoredIndex(0, TOKEN_FLOOR_MAX) + 1) * TOKENS_PER_ENTRY + 999));
  t.throws(() => restoredIndex(0, Number.MAX_SAFE_INTEGER));
});

t.test('a rebased state keeps grants and tokens, and issues only higher tokens', async (t) => {
  const { driver, payload } = stateBytes();
  const before = driver.sm.getLease('L', driver.nowMs);
  const oldMax = okValue<{ fencingToken: number }>(driver.acquire('N', 'C')).fencingToken;
  const index = restoredIndex(snapshotPosition(payload).lastIndex);
  const restored = new CoordStateMachine();
  restored.restore(rebaseSnapshot(payload, index));
  t.equal(restored.lastAppliedIndex(), index);
  t.same(restored.getLease('L', driver.nowMs), before, 'live grant kept with holder and token');
  const out = restored.apply(index + 1, driver.nowMs, {
    v: 1,
    command: {
      type: 'lease.acquire',
      name: 'N',
      holder: 'D',
      ttlMs: 1000,
      waitMs: 0,
      lockDelayMs: 0,
      maxHoldMs: null,
    },
    idempotency: null,
  });
  const token = okValue<{ fencingToken: number }>(out.result).fencingToken;
  t.ok(token > oldMax, `new token ${token} above the old cluster's ${oldMax}`);
  t.throws(() => rebaseSnapshot(payload, 0), 'an index below the snapshot is a bug');
  t.throws(() => snapshotPosition(Buffer.from([0xc1])), SnapshotFormatError, 'not MessagePack');
  t.throws(() => rebaseSnapshot(Buffer.from([0x01]), 5), SnapshotFormatError, 'not a snapshot');
});

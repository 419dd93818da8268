// Proves snapshot storage is crash-safe (Raft §7; BC-25, BC-26): a snapshot and the compacted log
// survive a restart, a kill between any two write steps (simulated by leaving the disk as that
// step left it) recovers cleanly from the newest intact snapshot, an installed snapshot supersedes
// a conflicting log atomically, and commitIndex never ends up beyond the log plus snapshot.
import t from 'tap';
import { Level } from 'level';
import { LevelRaftStorage, entryKey, snapshotKey } from '../../src/storage/level-storage.js';
import { MemoryRaftStorage, type RaftStorage } from '../../src/storage/raft-storage.js';
import { createPackr } from '../../src/codec.js';
import { asIndex, asTerm, type Entry, type Snapshot } from '../../src/core/types.js';

const entry = (index: number, term: number): Entry => ({
  index: asIndex(index),
  term: asTerm(term),
  type: 'command',
  clusterTimeMs: index * 10,
  data: new Uint8Array([index & 255, 7]),
});
const hard = (term: number, commitIndex: number) => ({
  term: asTerm(term),
  votedFor: null,
  commitIndex: asIndex(commitIndex),
});
const snap = (index: number, term: number, text = `state@${index}`): Snapshot => ({
  meta: { index: asIndex(index), term: asTerm(term), clusterTimeMs: index * 10 },
  data: new TextEncoder().encode(text),
});
const range = (from: number, to: number, term = 1) =>
  Array.from({ length: to - from + 1 }, (_, i) => entry(from + i, term));
const id = { clusterId: 'c1', nodeId: 'n1' };
const text = (b: Uint8Array | undefined) =>
  b === undefined ? undefined : new TextDecoder().decode(b);

async function reopen(
  dataDir: string,
): Promise<{ storage: LevelRaftStorage; initial: Awaited<ReturnType<RaftStorage['recover']>> }> {
  const storage = await LevelRaftStorage.open({ dataDir, ...id });
  return { storage, initial: await storage.recover() };
}

/** Raw access to the LevelDB of a closed storage, to build the disk a crash would leave. */
async function raw(
  dataDir: string,
  edit: (db: Level<string, Uint8Array>) => Promise<void>,
): Promise<void> {
  const db = new Level<string, Uint8Array>(dataDir, { keyEncoding: 'utf8', valueEncoding: 'view' });
  await db.open();
  try {
    await edit(db);
  } finally {
    await db.close();
  }
}

async function keysOf(dataDir: string, prefix: string): Promise<string[]> {
  let keys: string[] = [];
  await raw(dataDir, async (db) => {
    keys = await db.keys({ gte: prefix, lt: String.fromCharCode(prefix.charCodeAt(0) + 1) }).all();
  });
  return keys;
}

t.test('snapshot keys sort in index order', async (t) => {
  const keys = [1, 2, 15, 16, 255, 2 ** 40].map(snapshotKey);
  t.same([...keys].sort(), keys);
});

t.test(
  'save snapshot, compact, restart: snapshot and the log after the compaction point survive',
  async (t) => {
    const dataDir = t.testdir();
    let { storage } = await reopen(dataDir);
    await storage.persist({ hardState: hard(1, 10), entries: range(1, 10) });
    await storage.saveSnapshot(snap(8, 1));
    await storage.compactLog(asIndex(5), asIndex(8));
    await storage.close();
    t.same(
      await keysOf(dataDir, 'e'),
      [6, 7, 8, 9, 10].map(entryKey),
      'entries ≤ 5 deleted from disk',
    );
    const { storage: again, initial } = await reopen(dataDir);
    storage = again;
    t.same(initial.snapshot, snap(8, 1).meta);
    t.equal(text(initial.snapshotData), 'state@8');
    t.same(
      initial.entries.map((e) => e.index),
      [9, 10],
      'entries at or below the snapshot are not handed to the core',
    );
    t.equal(initial.hardState.commitIndex, 10);
    await storage.persist({ hardState: null, entries: [entry(11, 1)] });
    await storage.close();
    t.same(
      (await reopen(dataDir)).initial.entries.map((e) => e.index),
      [9, 10, 11],
      'appends continue',
    );
  },
);

t.test(
  'kill after the snapshot write, before compaction: newest snapshot wins, old log ignored',
  async (t) => {
    const dataDir = t.testdir();
    const { storage } = await reopen(dataDir);
    await storage.persist({ hardState: hard(1, 9), entries: range(1, 10) });
    await storage.saveSnapshot(snap(4, 1));
    await storage.compactLog(asIndex(2), asIndex(4));
    await storage.saveSnapshot(snap(9, 1));
    await storage.close(); // "killed" before compactLog(…, 9)
    t.same(await keysOf(dataDir, 's'), [snapshotKey(4), snapshotKey(9)], 'both snapshots on disk');
    const { storage: s2, initial } = await reopen(dataDir);
    t.same(initial.snapshot, snap(9, 1).meta);
    t.same(
      initial.entries.map((e) => e.index),
      [10],
    );
    await s2.compactLog(asIndex(9), asIndex(9));
    await s2.close();
    t.same(
      await keysOf(dataDir, 's'),
      [snapshotKey(9)],
      'older snapshot removed by the next compaction',
    );
    t.same(await keysOf(dataDir, 'e'), [entryKey(10)]);
  },
);

t.test('kill during compaction (partial range delete) recovers from the snapshot', async (t) => {
  const dataDir = t.testdir();
  const { storage } = await reopen(dataDir);
  await storage.persist({ hardState: hard(1, 10), entries: range(1, 10) });
  await storage.saveSnapshot(snap(7, 1));
  await storage.close();
  // A crash part-way through deleting entries ≤ 7: a hole below the snapshot.
  await raw(dataDir, (db) =>
    db.batch([3, 4, 5].map((i) => ({ type: 'del' as const, key: entryKey(i) }))),
  );
  const { initial } = await reopen(dataDir);
  t.same(initial.snapshot, snap(7, 1).meta);
  t.same(
    initial.entries.map((e) => e.index),
    [8, 9, 10],
  );
});

t.test('a corrupt newest snapshot record falls back to the older intact one', async (t) => {
  const dataDir = t.testdir();
  const { storage } = await reopen(dataDir);
  await storage.persist({ hardState: hard(1, 10), entries: range(1, 10) });
  await storage.saveSnapshot(snap(5, 1));
  await storage.close();
  await raw(dataDir, (db) => db.put(snapshotKey(8), new Uint8Array([0xc1, 0xff, 0x00])));
  const { initial } = await reopen(dataDir);
  t.same(initial.snapshot, snap(5, 1).meta, 'garbage under the newer key is skipped');
  t.same(
    initial.entries.map((e) => e.index),
    [6, 7, 8, 9, 10],
  );
});

t.test('a log that does not continue the recovered snapshot is refused as corrupt', async (t) => {
  const dataDir = t.testdir();
  const { storage } = await reopen(dataDir);
  await storage.persist({ hardState: hard(1, 10), entries: range(1, 10) });
  await storage.saveSnapshot(snap(5, 1));
  await storage.close();
  await raw(dataDir, (db) => db.del(entryKey(7)));
  const s2 = await LevelRaftStorage.open({ dataDir, ...id });
  await t.rejects(s2.recover(), /corrupt log/);
  await s2.close();
});

t.test('installing a snapshot replaces a conflicting log in one write (BC-25)', async (t) => {
  const dataDir = t.testdir();
  const { storage } = await reopen(dataDir);
  await storage.persist({ hardState: hard(1, 3), entries: range(1, 10) });
  await storage.persist({ snapshot: snap(6, 2), hardState: hard(2, 6), entries: [entry(7, 2)] });
  await storage.close();
  const { storage: s2, initial } = await reopen(dataDir);
  t.same(initial.snapshot, snap(6, 2).meta);
  t.same(
    initial.entries.map((e) => [e.index, e.term]),
    [[7, 2]],
    'the superseded suffix 8..10 of term 1 is gone',
  );
  t.same(initial.hardState, hard(2, 6));
  await s2.close();
  t.same(
    await keysOf(dataDir, 'e'),
    [entryKey(7)],
    'entries below the snapshot cleared afterwards',
  );
});

t.test(
  'a kill before an install write leaves the old state; after it, the new — never a mix',
  async (t) => {
    const dataDir = t.testdir();
    const { storage } = await reopen(dataDir);
    await storage.persist({ hardState: hard(1, 3), entries: range(1, 4) });
    await storage.close();
    // Before: the install batch never reached the disk.
    const before = await reopen(dataDir);
    t.equal(before.initial.snapshot, null);
    t.equal(before.initial.hardState.commitIndex, 3, 'commitIndex within the old log');
    // After: the batch landed, but the later clean-up of old entries did not.
    await before.storage.close();
    await raw(dataDir, async (db) => {
      const packr = createPackr();
      const s = snap(20, 2);
      await db.batch([
        { type: 'put', key: snapshotKey(20), value: packr.pack({ ...s.meta, data: s.data }) },
        { type: 'put', key: 'h', value: packr.pack(hard(2, 20)) },
      ]);
    });
    const after = await reopen(dataDir);
    t.same(after.initial.snapshot, snap(20, 2).meta);
    t.same(after.initial.entries, [], 'old entries 1..4 ignored');
    t.equal(after.initial.hardState.commitIndex, 20, 'commitIndex covered by the snapshot');
    await after.storage.close();
  },
);

t.test(
  'a lost unsynced commitIndex below the snapshot is raised to the snapshot index',
  async (t) => {
    const dataDir = t.testdir();
    const { storage } = await reopen(dataDir);
    await storage.persist({ hardState: hard(1, 2), entries: range(1, 6) });
    await storage.saveSnapshot(snap(5, 1));
    await storage.close();
    const { initial } = await reopen(dataDir);
    t.equal(initial.hardState.commitIndex, 5);
    t.same(
      initial.entries.map((e) => e.index),
      [6],
    );
  },
);

t.test('MemoryRaftStorage follows the same snapshot semantics', async (t) => {
  const storage = new MemoryRaftStorage();
  await storage.persist({ hardState: hard(1, 10), entries: range(1, 10) });
  await storage.saveSnapshot(snap(8, 1));
  let initial = await storage.recover();
  t.same(initial.snapshot, snap(8, 1).meta);
  t.same(
    initial.entries.map((e) => e.index),
    [9, 10],
  );
  await storage.compactLog(asIndex(6), asIndex(8));
  t.same(
    (await storage.readEntries()).map((e) => e.index),
    [7, 8, 9, 10],
  );
  await storage.persist({ snapshot: snap(12, 2), hardState: hard(2, 12), entries: [entry(13, 2)] });
  initial = await storage.recover();
  t.same(initial.snapshot, snap(12, 2).meta);
  t.equal(text(initial.snapshotData), 'state@12');
  t.same(
    initial.entries.map((e) => e.index),
    [13],
  );
});

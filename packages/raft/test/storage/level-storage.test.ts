// Proves LevelRaftStorage persists hard state and entries atomically, recovers them in index
// order, truncates a conflicting suffix, defers a commitIndex-only hard state to the next write or
// a flush shortly after (a crash before then recovers the older commitIndex, and durableCommitIndex
// never shows the deferred one), and refuses a data directory of another cluster/node.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { LevelRaftStorage, entryKey, storedClusterId } from '../../src/storage/level-storage.js';
import { MemoryRaftStorage } from '../../src/storage/raft-storage.js';
import { StorageIdentityError } from '../../src/errors.js';
import { asIndex, asTerm, type Entry } from '../../src/core/types.js';

const entry = (index: number, term: number, byte = index): Entry => ({
  index: asIndex(index),
  term: asTerm(term),
  type: 'command',
  clusterTimeMs: index * 10,
  data: new Uint8Array([byte, 0, 255]),
});
const hard = (term: number, votedFor: string | null, commitIndex: number) => ({
  term: asTerm(term),
  votedFor,
  commitIndex: asIndex(commitIndex),
});
const id = { clusterId: 'c1', nodeId: 'n1' };

t.test('entry keys sort in index order', async (t) => {
  const keys = [1, 2, 15, 16, 255, 256, 2 ** 40].map(entryKey);
  t.same([...keys].sort(), keys);
});

t.test('a fresh directory recovers empty state', async (t) => {
  const dataDir = t.testdir();
  const storage = await LevelRaftStorage.open({ dataDir, ...id });
  const initial = await storage.recover();
  t.same(initial, { hardState: hard(0, null, 0), snapshot: null, entries: [] });
  await storage.close();
  await storage.close(); // idempotent
});

t.test('write, close, reopen: hard state and entries survive', async (t) => {
  const dataDir = t.testdir();
  let storage = await LevelRaftStorage.open({ dataDir, ...id });
  await storage.recover();
  await storage.persist({ hardState: hard(1, 'n1', 0), entries: [entry(1, 1), entry(2, 1)] });
  await storage.persist({ hardState: hard(2, 'n2', 2), entries: [entry(3, 2)] });
  t.equal(storage.lastIndex(), 3);
  await storage.close();

  storage = await LevelRaftStorage.open({ dataDir, ...id });
  const initial = await storage.recover();
  t.same(initial.hardState, hard(2, 'n2', 2));
  t.same(initial.entries, [entry(1, 1), entry(2, 1), entry(3, 2)]);
  t.ok(initial.entries[0]!.data instanceof Uint8Array);
  await storage.close();
});

t.test('an entry at an existing index truncates the conflicting suffix', async (t) => {
  const dataDir = t.testdir();
  let storage = await LevelRaftStorage.open({ dataDir, ...id });
  await storage.recover();
  await storage.persist({ hardState: null, entries: [1, 2, 3, 4, 5].map((i) => entry(i, 1)) });
  await storage.persist({ hardState: hard(3, null, 2), entries: [entry(3, 3, 99)] });
  t.equal(storage.lastIndex(), 3);
  await storage.close();
  storage = await LevelRaftStorage.open({ dataDir, ...id });
  const initial = await storage.recover();
  t.same(initial.entries, [entry(1, 1), entry(2, 1), entry(3, 3, 99)]);
  await storage.close();
});

t.test('writes issued back to back land in call order', async (t) => {
  const dataDir = t.testdir();
  let storage = await LevelRaftStorage.open({ dataDir, ...id });
  await storage.recover();
  const writes = [];
  for (let i = 1; i <= 50; i++)
    writes.push(storage.persist({ hardState: hard(i, null, i - 1), entries: [entry(i, i)] }));
  await Promise.all(writes);
  await storage.close();
  storage = await LevelRaftStorage.open({ dataDir, ...id });
  const initial = await storage.recover();
  t.equal(initial.entries.length, 50);
  t.same(initial.hardState, hard(50, null, 49));
  await storage.close();
});

t.test('a commitIndex-only hard state rides with the next write; close() writes it', async (t) => {
  const dataDir = t.testdir();
  let storage = await LevelRaftStorage.open({ dataDir, ...id });
  await storage.recover();
  await storage.persist({ hardState: hard(1, 'n1', 0), entries: [entry(1, 1), entry(2, 1)] });
  await storage.persist({ hardState: hard(1, 'n1', 1), entries: [] });
  t.same(await storage.readHardState(), hard(1, 'n1', 1), 'reads see the deferred hard state');
  await storage.persist({ hardState: null, entries: [entry(3, 1)] });
  await storage.persist({ hardState: hard(1, 'n1', 3), entries: [] });
  await storage.close();
  storage = await LevelRaftStorage.open({ dataDir, ...id });
  const initial = await storage.recover();
  t.same(initial.hardState, hard(1, 'n1', 3));
  t.equal(initial.entries.length, 3);
  await storage.close();
});

t.test(
  'durableCommitIndex: only what is fsynced; a lone commit is flushed by itself',
  async (t) => {
    const dataDir = t.testdir();
    let storage = await LevelRaftStorage.open({ dataDir, ...id });
    await storage.recover();
    await storage.persist({ hardState: hard(1, 'n1', 1), entries: [entry(1, 1), entry(2, 1)] });
    t.equal(storage.durableCommitIndex(), 1, 'a batch carries its hard state');
    await storage.persist({ hardState: hard(1, 'n1', 2), entries: [] });
    t.equal(storage.durableCommitIndex(), 1, 'a deferred commit index is not shown as durable');
    // No batch follows: the flush writes it by itself (COMMIT_FLUSH_DELAY_MS); wait for it.
    const deadline = Date.now() + 60_000;
    while (storage.durableCommitIndex() < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    t.equal(storage.durableCommitIndex(), 2, 'flushed without another write');
    await storage.close();
    storage = await LevelRaftStorage.open({ dataDir, ...id });
    t.same((await storage.recover()).hardState, hard(1, 'n1', 2), 'and on disk');
    t.equal(storage.durableCommitIndex(), 2, 'recovered as durable');
    await storage.close();
  },
);

t.test('a crash loses at most a deferred commitIndex, never entries or the vote', async (t) => {
  const dataDir = t.testdir();
  const child = fileURLToPath(new URL('./fixtures/crash-after-writes.ts', import.meta.url));
  const code = await new Promise<number | null>((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', child, dataDir], { stdio: 'inherit' });
    p.on('error', reject);
    p.on('exit', resolve);
  });
  t.equal(code, 0);
  const storage = await LevelRaftStorage.open({ dataDir, ...id });
  const initial = await storage.recover();
  t.same(initial.hardState, hard(1, 'n1', 0), 'the older commitIndex, term and vote intact');
  t.equal(initial.entries.length, 2);
  await storage.close();
});

t.test('a gap in an append is an assertion, not a silent hole', async (t) => {
  const dataDir = t.testdir();
  const storage = await LevelRaftStorage.open({ dataDir, ...id });
  await storage.recover();
  t.throws(() => storage.persist({ hardState: null, entries: [entry(2, 1)] }), {
    code: 'ERR_ASSERTION',
  });
  await storage.close();
});

t.test('identity mismatch: another cluster or node is refused with a clear error', async (t) => {
  const dataDir = t.testdir();
  const storage = await LevelRaftStorage.open({ dataDir, ...id });
  await storage.close();
  const other = LevelRaftStorage.open({ dataDir, clusterId: 'c2', nodeId: 'n1' });
  await t.rejects(other, StorageIdentityError);
  await t.rejects(LevelRaftStorage.open({ dataDir, clusterId: 'c1', nodeId: 'n2' }), {
    code: 'storage_identity',
    message: /belongs to cluster "c1" node "n1".*configured as cluster "c1" node "n2"/,
  });
  // The directory was released after the refusal: the right identity opens it.
  const again = await LevelRaftStorage.open({ dataDir, ...id });
  await again.close();
});

t.test('a directory held by another open storage is refused', async (t) => {
  const dataDir = t.testdir();
  const storage = await LevelRaftStorage.open({ dataDir, ...id });
  // Both ways in (the start-time identity read and the storage itself) name the directory and
  // LevelDB's reason; the identity read used to say only "Database failed to open".
  const held = new RegExp(
    `cannot open raft data directory ${dataDir}: IO error: lock .*another process is running on it`,
  );
  await t.rejects(LevelRaftStorage.open({ dataDir, ...id }), { message: held });
  await t.rejects(storedClusterId(dataDir), { message: held });
  await storage.close();
  t.equal(await storedClusterId(dataDir), id.clusterId, 'readable once the holder closed it');
});

t.test('the in-memory storage follows the same truncation rule', async (t) => {
  const storage = new MemoryRaftStorage();
  await storage.persist({
    hardState: hard(1, null, 0),
    entries: [1, 2, 3].map((i) => entry(i, 1)),
  });
  await storage.persist({ hardState: null, entries: [entry(2, 2, 7)] });
  const initial = await storage.recover();
  t.same(initial.entries, [entry(1, 1), entry(2, 2, 7)]);
  t.same(initial.hardState, hard(1, null, 0));
});

t.test('the bootstrap membership and snapshot memberships survive a reopen', async (t) => {
  const dataDir = t.testdir();
  const first = await LevelRaftStorage.open({ dataDir, ...id });
  t.equal(await first.readBootstrap(), null, 'new data has no record');
  const m = { voters: ['n1', 'n2'], learners: [], addresses: { n1: { raftAddress: 'h:1' } } };
  await first.saveBootstrap(m);
  await first.notePeerWithData('n2');
  await first.notePeerWithData('n3');
  const membership = { voters: ['n1', 'n2'], learners: ['n3'] };
  const snapshot = {
    meta: {
      index: asIndex(1),
      term: asTerm(1),
      clusterTimeMs: 10,
      membership,
      configIndex: asIndex(1),
    },
    data: new Uint8Array([7]),
  };
  await first.persist({ hardState: hard(1, null, 1), entries: [], snapshot });
  await first.close();
  const again = await LevelRaftStorage.open({ dataDir, ...id });
  t.same(await again.readBootstrap(), m);
  t.same(await again.readPeersWithData(), ['n2', 'n3'], 'peers seen with data');
  const initial = await again.recover();
  t.same(initial.snapshot?.membership, membership, 'a snapshot keeps its membership');
  t.equal(initial.snapshot?.configIndex, 1);
  await again.close();
});
